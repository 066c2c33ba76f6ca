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

T = TypeVar("T", bound="RAGIngestResponse")


@_attrs_define
class RAGIngestResponse:
    """The same shape from both upload addresses, ``document_id: null`` included.

    Attributes:
        message (str):
        filename (str):
        collection_name (str):
        tracking_id (UUID):
        status (Literal['processing'] | Unset):  Default: 'processing'.
        document_id (None | Unset | UUID):
    """

    message: str
    filename: str
    collection_name: str
    tracking_id: UUID
    status: Literal["processing"] | Unset = "processing"
    document_id: None | Unset | UUID = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        message = self.message

        filename = self.filename

        collection_name = self.collection_name

        tracking_id = str(self.tracking_id)

        status = self.status

        document_id: None | str | Unset
        if isinstance(self.document_id, Unset):
            document_id = UNSET
        elif isinstance(self.document_id, UUID):
            document_id = str(self.document_id)
        else:
            document_id = self.document_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "message": message,
                "filename": filename,
                "collection_name": collection_name,
                "tracking_id": tracking_id,
            }
        )
        if status is not UNSET:
            field_dict["status"] = status
        if document_id is not UNSET:
            field_dict["document_id"] = document_id

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        message = d.pop("message")

        filename = d.pop("filename")

        collection_name = d.pop("collection_name")

        tracking_id = UUID(d.pop("tracking_id"))

        status = cast(Literal["processing"] | Unset, d.pop("status", UNSET))
        if status != "processing" and not isinstance(status, Unset):
            raise ValueError(f"status must match const 'processing', got '{status}'")

        def _parse_document_id(data: object) -> None | Unset | UUID:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                document_id_type_0 = UUID(data)

                return document_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UUID, data)

        document_id = _parse_document_id(d.pop("document_id", UNSET))

        rag_ingest_response = cls(
            message=message,
            filename=filename,
            collection_name=collection_name,
            tracking_id=tracking_id,
            status=status,
            document_id=document_id,
        )

        rag_ingest_response.additional_properties = d
        return rag_ingest_response

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
