from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.source_out_config import SourceOutConfig


T = TypeVar("T", bound="SourceOut")


@_attrs_define
class SourceOut:
    """
    Attributes:
        id (UUID):
        name (None | str):
        connector (str):
        config (SourceOutConfig):
        secret_id (None | UUID):
        collection_name (None | str):
        knowledge_base_id (None | UUID):
        organization_id (None | str):
        sync_mode (str):
        schedule_seconds (int | None):
        organizational_unit (None | str):
        active (bool):
        created_by (str):
        created_at (datetime.datetime):
        last_run_at (datetime.datetime | None):
        destination_changed_by (None | str | Unset):
        destination_changed_at (datetime.datetime | None | Unset):
        audience (None | str | Unset):
    """

    id: UUID
    name: None | str
    connector: str
    config: SourceOutConfig
    secret_id: None | UUID
    collection_name: None | str
    knowledge_base_id: None | UUID
    organization_id: None | str
    sync_mode: str
    schedule_seconds: int | None
    organizational_unit: None | str
    active: bool
    created_by: str
    created_at: datetime.datetime
    last_run_at: datetime.datetime | None
    destination_changed_by: None | str | Unset = UNSET
    destination_changed_at: datetime.datetime | None | Unset = UNSET
    audience: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = str(self.id)

        name: None | str
        name = self.name

        connector = self.connector

        config = self.config.to_dict()

        secret_id: None | str
        if isinstance(self.secret_id, UUID):
            secret_id = str(self.secret_id)
        else:
            secret_id = self.secret_id

        collection_name: None | str
        collection_name = self.collection_name

        knowledge_base_id: None | str
        if isinstance(self.knowledge_base_id, UUID):
            knowledge_base_id = str(self.knowledge_base_id)
        else:
            knowledge_base_id = self.knowledge_base_id

        organization_id: None | str
        organization_id = self.organization_id

        sync_mode = self.sync_mode

        schedule_seconds: int | None
        schedule_seconds = self.schedule_seconds

        organizational_unit: None | str
        organizational_unit = self.organizational_unit

        active = self.active

        created_by = self.created_by

        created_at = self.created_at.isoformat()

        last_run_at: None | str
        if isinstance(self.last_run_at, datetime.datetime):
            last_run_at = self.last_run_at.isoformat()
        else:
            last_run_at = self.last_run_at

        destination_changed_by: None | str | Unset
        if isinstance(self.destination_changed_by, Unset):
            destination_changed_by = UNSET
        else:
            destination_changed_by = self.destination_changed_by

        destination_changed_at: None | str | Unset
        if isinstance(self.destination_changed_at, Unset):
            destination_changed_at = UNSET
        elif isinstance(self.destination_changed_at, datetime.datetime):
            destination_changed_at = self.destination_changed_at.isoformat()
        else:
            destination_changed_at = self.destination_changed_at

        audience: None | str | Unset
        if isinstance(self.audience, Unset):
            audience = UNSET
        else:
            audience = self.audience

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "name": name,
                "connector": connector,
                "config": config,
                "secret_id": secret_id,
                "collection_name": collection_name,
                "knowledge_base_id": knowledge_base_id,
                "organization_id": organization_id,
                "sync_mode": sync_mode,
                "schedule_seconds": schedule_seconds,
                "organizational_unit": organizational_unit,
                "active": active,
                "created_by": created_by,
                "created_at": created_at,
                "last_run_at": last_run_at,
            }
        )
        if destination_changed_by is not UNSET:
            field_dict["destination_changed_by"] = destination_changed_by
        if destination_changed_at is not UNSET:
            field_dict["destination_changed_at"] = destination_changed_at
        if audience is not UNSET:
            field_dict["audience"] = audience

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.source_out_config import SourceOutConfig

        d = dict(src_dict)
        id = UUID(d.pop("id"))

        def _parse_name(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        name = _parse_name(d.pop("name"))

        connector = d.pop("connector")

        config = SourceOutConfig.from_dict(d.pop("config"))

        def _parse_secret_id(data: object) -> None | UUID:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                secret_id_type_0 = UUID(data)

                return secret_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | UUID, data)

        secret_id = _parse_secret_id(d.pop("secret_id"))

        def _parse_collection_name(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        collection_name = _parse_collection_name(d.pop("collection_name"))

        def _parse_knowledge_base_id(data: object) -> None | UUID:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                knowledge_base_id_type_0 = UUID(data)

                return knowledge_base_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | UUID, data)

        knowledge_base_id = _parse_knowledge_base_id(d.pop("knowledge_base_id"))

        def _parse_organization_id(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        organization_id = _parse_organization_id(d.pop("organization_id"))

        sync_mode = d.pop("sync_mode")

        def _parse_schedule_seconds(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        schedule_seconds = _parse_schedule_seconds(d.pop("schedule_seconds"))

        def _parse_organizational_unit(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        organizational_unit = _parse_organizational_unit(d.pop("organizational_unit"))

        active = d.pop("active")

        created_by = d.pop("created_by")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        def _parse_last_run_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                last_run_at_type_0 = datetime.datetime.fromisoformat(data)

                return last_run_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        last_run_at = _parse_last_run_at(d.pop("last_run_at"))

        def _parse_destination_changed_by(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        destination_changed_by = _parse_destination_changed_by(
            d.pop("destination_changed_by", UNSET)
        )

        def _parse_destination_changed_at(
            data: object,
        ) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                destination_changed_at_type_0 = datetime.datetime.fromisoformat(data)

                return destination_changed_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        destination_changed_at = _parse_destination_changed_at(
            d.pop("destination_changed_at", UNSET)
        )

        def _parse_audience(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        audience = _parse_audience(d.pop("audience", UNSET))

        source_out = cls(
            id=id,
            name=name,
            connector=connector,
            config=config,
            secret_id=secret_id,
            collection_name=collection_name,
            knowledge_base_id=knowledge_base_id,
            organization_id=organization_id,
            sync_mode=sync_mode,
            schedule_seconds=schedule_seconds,
            organizational_unit=organizational_unit,
            active=active,
            created_by=created_by,
            created_at=created_at,
            last_run_at=last_run_at,
            destination_changed_by=destination_changed_by,
            destination_changed_at=destination_changed_at,
            audience=audience,
        )

        source_out.additional_properties = d
        return source_out

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
