from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="SearchHitLinks")


@_attrs_define
class SearchHitLinks:
    """Where the hit's document is read, as paths under the API's root (docs/search.md,
    "Citing a hit"), through a knowledge base the search read that lists it.

        Attributes:
            download (None | str): ``GET`` the original file; null for a document that keeps none (only uploads keep theirs)
            parsed (str): ``GET`` the parsed view, page by page; ``#page=N`` names the hit's first page when the document
                has pages
    """

    download: None | str
    parsed: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        download: None | str
        download = self.download

        parsed = self.parsed

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "download": download,
                "parsed": parsed,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)

        def _parse_download(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        download = _parse_download(d.pop("download"))

        parsed = d.pop("parsed")

        search_hit_links = cls(
            download=download,
            parsed=parsed,
        )

        search_hit_links.additional_properties = d
        return search_hit_links

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
