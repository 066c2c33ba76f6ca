from __future__ import annotations

from collections.abc import Mapping
from typing import (
    Any,
    Literal,
    Self,
    TypeVar,
    cast,
)
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="BinaryPartOut")


@_attrs_define
class BinaryPartOut:
    """
    Attributes:
        media_type (str):
        data (str): base64
        file_id (UUID):
        name (str):
        type_ (Literal['binary'] | Unset):  Default: 'binary'.
    """

    media_type: str
    data: str
    file_id: UUID
    name: str
    type_: Literal["binary"] | Unset = "binary"
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        media_type = self.media_type

        data = self.data

        file_id = str(self.file_id)

        name = self.name

        type_ = self.type_

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "media_type": media_type,
                "data": data,
                "file_id": file_id,
                "name": name,
            }
        )
        if type_ is not UNSET:
            field_dict["type"] = type_

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        media_type = d.pop("media_type")

        data = d.pop("data")

        file_id = UUID(d.pop("file_id"))

        name = d.pop("name")

        type_ = cast(Literal["binary"] | Unset, d.pop("type", UNSET))
        if type_ != "binary" and not isinstance(type_, Unset):
            raise ValueError(f"type must match const 'binary', got '{type_}'")

        binary_part_out = cls(
            media_type=media_type,
            data=data,
            file_id=file_id,
            name=name,
            type_=type_,
        )

        binary_part_out.additional_properties = d
        return binary_part_out

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
