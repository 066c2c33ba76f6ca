from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.binary_part_out import BinaryPartOut
    from ..models.rendered_file_out import RenderedFileOut
    from ..models.text_part_out import TextPartOut


T = TypeVar("T", bound="RenderOut")


@_attrs_define
class RenderOut:
    """
    Attributes:
        parts (list[BinaryPartOut | TextPartOut]):
        files (list[RenderedFileOut]):
        notices (list[str]):
        dry_run (bool | Unset):  Default: False.
    """

    parts: list[BinaryPartOut | TextPartOut]
    files: list[RenderedFileOut]
    notices: list[str]
    dry_run: bool | Unset = False
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.text_part_out import TextPartOut

        parts = []
        for parts_item_data in self.parts:
            parts_item: dict[str, Any]
            if isinstance(parts_item_data, TextPartOut):
                parts_item = parts_item_data.to_dict()
            else:
                parts_item = parts_item_data.to_dict()

            parts.append(parts_item)

        files = []
        for files_item_data in self.files:
            files_item = files_item_data.to_dict()
            files.append(files_item)

        notices = self.notices

        dry_run = self.dry_run

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "parts": parts,
                "files": files,
                "notices": notices,
            }
        )
        if dry_run is not UNSET:
            field_dict["dry_run"] = dry_run

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.binary_part_out import BinaryPartOut
        from ..models.rendered_file_out import RenderedFileOut
        from ..models.text_part_out import TextPartOut

        d = dict(src_dict)
        parts = []
        _parts = d.pop("parts")
        for parts_item_data in _parts:

            def _parse_parts_item(data: object) -> BinaryPartOut | TextPartOut:
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    parts_item_type_0 = TextPartOut.from_dict(data)

                    return parts_item_type_0
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                if not isinstance(data, dict):
                    raise TypeError()
                parts_item_type_1 = BinaryPartOut.from_dict(data)

                return parts_item_type_1

            parts_item = _parse_parts_item(parts_item_data)

            parts.append(parts_item)

        files = []
        _files = d.pop("files")
        for files_item_data in _files:
            files_item = RenderedFileOut.from_dict(files_item_data)

            files.append(files_item)

        notices = cast(list[str], d.pop("notices"))

        dry_run = d.pop("dry_run", UNSET)

        render_out = cls(
            parts=parts,
            files=files,
            notices=notices,
            dry_run=dry_run,
        )

        render_out.additional_properties = d
        return render_out

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
