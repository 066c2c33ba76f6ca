from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.parser_formats_unavailable import ParserFormatsUnavailable


T = TypeVar("T", bound="ParserFormats")


@_attrs_define
class ParserFormats:
    """
    Attributes:
        parser (str):
        extensions (list[str]):
        builtin (list[str]):
        unavailable (ParserFormatsUnavailable | Unset):
    """

    parser: str
    extensions: list[str]
    builtin: list[str]
    unavailable: ParserFormatsUnavailable | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        parser = self.parser

        extensions = self.extensions

        builtin = self.builtin

        unavailable: dict[str, Any] | Unset = UNSET
        if not isinstance(self.unavailable, Unset):
            unavailable = self.unavailable.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "parser": parser,
                "extensions": extensions,
                "builtin": builtin,
            }
        )
        if unavailable is not UNSET:
            field_dict["unavailable"] = unavailable

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.parser_formats_unavailable import ParserFormatsUnavailable

        d = dict(src_dict)
        parser = d.pop("parser")

        extensions = cast(list[str], d.pop("extensions"))

        builtin = cast(list[str], d.pop("builtin"))

        _unavailable = d.pop("unavailable", UNSET)
        unavailable: ParserFormatsUnavailable | Unset
        if isinstance(_unavailable, Unset):
            unavailable = UNSET
        else:
            unavailable = ParserFormatsUnavailable.from_dict(_unavailable)

        parser_formats = cls(
            parser=parser,
            extensions=extensions,
            builtin=builtin,
            unavailable=unavailable,
        )

        parser_formats.additional_properties = d
        return parser_formats

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
