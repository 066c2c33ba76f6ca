from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="SearchFiltersIn")


@_attrs_define
class SearchFiltersIn:
    """
    Attributes:
        source (list[str] | None | Unset):
        document_type (list[str] | None | Unset):
        organizational_unit (list[str] | None | Unset):
        date_from (datetime.date | None | Unset):
        date_to (datetime.date | None | Unset):
        parent_doc_id (None | Unset | UUID):
    """

    source: list[str] | None | Unset = UNSET
    document_type: list[str] | None | Unset = UNSET
    organizational_unit: list[str] | None | Unset = UNSET
    date_from: datetime.date | None | Unset = UNSET
    date_to: datetime.date | None | Unset = UNSET
    parent_doc_id: None | Unset | UUID = UNSET

    def to_dict(self) -> dict[str, Any]:
        source: list[str] | None | Unset
        if isinstance(self.source, Unset):
            source = UNSET
        elif isinstance(self.source, list):
            source = self.source

        else:
            source = self.source

        document_type: list[str] | None | Unset
        if isinstance(self.document_type, Unset):
            document_type = UNSET
        elif isinstance(self.document_type, list):
            document_type = self.document_type

        else:
            document_type = self.document_type

        organizational_unit: list[str] | None | Unset
        if isinstance(self.organizational_unit, Unset):
            organizational_unit = UNSET
        elif isinstance(self.organizational_unit, list):
            organizational_unit = self.organizational_unit

        else:
            organizational_unit = self.organizational_unit

        date_from: None | str | Unset
        if isinstance(self.date_from, Unset):
            date_from = UNSET
        elif isinstance(self.date_from, datetime.date):
            date_from = self.date_from.isoformat()
        else:
            date_from = self.date_from

        date_to: None | str | Unset
        if isinstance(self.date_to, Unset):
            date_to = UNSET
        elif isinstance(self.date_to, datetime.date):
            date_to = self.date_to.isoformat()
        else:
            date_to = self.date_to

        parent_doc_id: None | str | Unset
        if isinstance(self.parent_doc_id, Unset):
            parent_doc_id = UNSET
        elif isinstance(self.parent_doc_id, UUID):
            parent_doc_id = str(self.parent_doc_id)
        else:
            parent_doc_id = self.parent_doc_id

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if source is not UNSET:
            field_dict["source"] = source
        if document_type is not UNSET:
            field_dict["document_type"] = document_type
        if organizational_unit is not UNSET:
            field_dict["organizational_unit"] = organizational_unit
        if date_from is not UNSET:
            field_dict["date_from"] = date_from
        if date_to is not UNSET:
            field_dict["date_to"] = date_to
        if parent_doc_id is not UNSET:
            field_dict["parent_doc_id"] = parent_doc_id

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)

        def _parse_source(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                source_type_0 = cast(list[str], data)

                return source_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        source = _parse_source(d.pop("source", UNSET))

        def _parse_document_type(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                document_type_type_0 = cast(list[str], data)

                return document_type_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        document_type = _parse_document_type(d.pop("document_type", UNSET))

        def _parse_organizational_unit(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                organizational_unit_type_0 = cast(list[str], data)

                return organizational_unit_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        organizational_unit = _parse_organizational_unit(
            d.pop("organizational_unit", UNSET)
        )

        def _parse_date_from(data: object) -> datetime.date | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                date_from_type_0 = datetime.date.fromisoformat(data)

                return date_from_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.date | None | Unset, data)

        date_from = _parse_date_from(d.pop("date_from", UNSET))

        def _parse_date_to(data: object) -> datetime.date | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                date_to_type_0 = datetime.date.fromisoformat(data)

                return date_to_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.date | None | Unset, data)

        date_to = _parse_date_to(d.pop("date_to", UNSET))

        def _parse_parent_doc_id(data: object) -> None | Unset | UUID:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                parent_doc_id_type_0 = UUID(data)

                return parent_doc_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UUID, data)

        parent_doc_id = _parse_parent_doc_id(d.pop("parent_doc_id", UNSET))

        search_filters_in = cls(
            source=source,
            document_type=document_type,
            organizational_unit=organizational_unit,
            date_from=date_from,
            date_to=date_to,
            parent_doc_id=parent_doc_id,
        )

        return search_filters_in
