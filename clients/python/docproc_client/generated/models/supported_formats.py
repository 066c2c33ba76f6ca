from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.parser_formats import ParserFormats


T = TypeVar("T", bound="SupportedFormats")


@_attrs_define
class SupportedFormats:
    """
    Attributes:
        parsers (list[ParserFormats]):
    """

    parsers: list[ParserFormats]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        parsers = []
        for parsers_item_data in self.parsers:
            parsers_item = parsers_item_data.to_dict()
            parsers.append(parsers_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "parsers": parsers,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.parser_formats import ParserFormats

        d = dict(src_dict)
        parsers = []
        _parsers = d.pop("parsers")
        for parsers_item_data in _parsers:
            parsers_item = ParserFormats.from_dict(parsers_item_data)

            parsers.append(parsers_item)

        supported_formats = cls(
            parsers=parsers,
        )

        supported_formats.additional_properties = d
        return supported_formats

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
