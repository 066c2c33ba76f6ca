from __future__ import annotations

import datetime
from collections.abc import Mapping
from io import BytesIO
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from .. import types
from ..types import UNSET, File, Unset

T = TypeVar("T", bound="IngestIntoCollectionBody")


@_attrs_define
class IngestIntoCollectionBody:
    """
    Attributes:
        file (File):
        ingestion (str | Unset): JSON: only the ingestion settings that change
        organizational_unit (str | Unset):
        document_date (datetime.date | Unset): The document's own date (YYYY-MM-DD), for date_from/date_to
    """

    file: File
    ingestion: str | Unset = UNSET
    organizational_unit: str | Unset = UNSET
    document_date: datetime.date | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        file = self.file.to_tuple()

        ingestion = self.ingestion

        organizational_unit = self.organizational_unit

        document_date: str | Unset = UNSET
        if not isinstance(self.document_date, Unset):
            document_date = self.document_date.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "file": file,
            }
        )
        if ingestion is not UNSET:
            field_dict["ingestion"] = ingestion
        if organizational_unit is not UNSET:
            field_dict["organizational_unit"] = organizational_unit
        if document_date is not UNSET:
            field_dict["document_date"] = document_date

        return field_dict

    def to_multipart(self) -> types.RequestFiles:
        files: types.RequestFiles = []

        files.append(("file", self.file.to_tuple()))

        if not isinstance(self.ingestion, Unset):
            files.append(
                ("ingestion", (None, str(self.ingestion).encode(), "text/plain"))
            )

        if not isinstance(self.organizational_unit, Unset):
            files.append(
                (
                    "organizational_unit",
                    (None, str(self.organizational_unit).encode(), "text/plain"),
                )
            )

        if not isinstance(self.document_date, Unset):
            files.append(
                (
                    "document_date",
                    (None, self.document_date.isoformat().encode(), "text/plain"),
                )
            )

        for prop_name, prop in self.additional_properties.items():
            files.append((prop_name, (None, str(prop).encode(), "text/plain")))

        return files

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        file = File(payload=BytesIO(d.pop("file")))

        ingestion = d.pop("ingestion", UNSET)

        organizational_unit = d.pop("organizational_unit", UNSET)

        _document_date = d.pop("document_date", UNSET)
        document_date: datetime.date | Unset
        if isinstance(_document_date, Unset):
            document_date = UNSET
        else:
            document_date = datetime.date.fromisoformat(_document_date)

        ingest_into_collection_body = cls(
            file=file,
            ingestion=ingestion,
            organizational_unit=organizational_unit,
            document_date=document_date,
        )

        ingest_into_collection_body.additional_properties = d
        return ingest_into_collection_body

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
