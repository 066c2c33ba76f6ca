from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define

from ..models.source_create_connector import SourceCreateConnector
from ..models.source_create_sync_mode import SourceCreateSyncMode
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.source_create_config import SourceCreateConfig


T = TypeVar("T", bound="SourceCreate")


@_attrs_define
class SourceCreate:
    """
    Attributes:
        connector (SourceCreateConnector):
        config (SourceCreateConfig):
        secret_id (None | Unset | UUID):
        name (None | str | Unset):
        sync_mode (SourceCreateSyncMode | Unset):  Default: SourceCreateSyncMode.NEW_ONLY.
        schedule_seconds (int | None | Unset):
        organizational_unit (None | str | Unset):
    """

    connector: SourceCreateConnector
    config: SourceCreateConfig
    secret_id: None | Unset | UUID = UNSET
    name: None | str | Unset = UNSET
    sync_mode: SourceCreateSyncMode | Unset = SourceCreateSyncMode.NEW_ONLY
    schedule_seconds: int | None | Unset = UNSET
    organizational_unit: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        connector = self.connector.value

        config = self.config.to_dict()

        secret_id: None | str | Unset
        if isinstance(self.secret_id, Unset):
            secret_id = UNSET
        elif isinstance(self.secret_id, UUID):
            secret_id = str(self.secret_id)
        else:
            secret_id = self.secret_id

        name: None | str | Unset
        if isinstance(self.name, Unset):
            name = UNSET
        else:
            name = self.name

        sync_mode: str | Unset = UNSET
        if not isinstance(self.sync_mode, Unset):
            sync_mode = self.sync_mode.value

        schedule_seconds: int | None | Unset
        if isinstance(self.schedule_seconds, Unset):
            schedule_seconds = UNSET
        else:
            schedule_seconds = self.schedule_seconds

        organizational_unit: None | str | Unset
        if isinstance(self.organizational_unit, Unset):
            organizational_unit = UNSET
        else:
            organizational_unit = self.organizational_unit

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "connector": connector,
                "config": config,
            }
        )
        if secret_id is not UNSET:
            field_dict["secret_id"] = secret_id
        if name is not UNSET:
            field_dict["name"] = name
        if sync_mode is not UNSET:
            field_dict["sync_mode"] = sync_mode
        if schedule_seconds is not UNSET:
            field_dict["schedule_seconds"] = schedule_seconds
        if organizational_unit is not UNSET:
            field_dict["organizational_unit"] = organizational_unit

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.source_create_config import SourceCreateConfig

        d = dict(src_dict)
        connector = SourceCreateConnector(d.pop("connector"))

        config = SourceCreateConfig.from_dict(d.pop("config"))

        def _parse_secret_id(data: object) -> None | Unset | UUID:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                secret_id_type_0 = UUID(data)

                return secret_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UUID, data)

        secret_id = _parse_secret_id(d.pop("secret_id", UNSET))

        def _parse_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        name = _parse_name(d.pop("name", UNSET))

        _sync_mode = d.pop("sync_mode", UNSET)
        sync_mode: SourceCreateSyncMode | Unset
        if isinstance(_sync_mode, Unset):
            sync_mode = UNSET
        else:
            sync_mode = SourceCreateSyncMode(_sync_mode)

        def _parse_schedule_seconds(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        schedule_seconds = _parse_schedule_seconds(d.pop("schedule_seconds", UNSET))

        def _parse_organizational_unit(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        organizational_unit = _parse_organizational_unit(
            d.pop("organizational_unit", UNSET)
        )

        source_create = cls(
            connector=connector,
            config=config,
            secret_id=secret_id,
            name=name,
            sync_mode=sync_mode,
            schedule_seconds=schedule_seconds,
            organizational_unit=organizational_unit,
        )

        return source_create
