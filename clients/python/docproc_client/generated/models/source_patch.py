from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define

from ..models.source_patch_sync_mode_type_0 import SourcePatchSyncModeType0
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.source_patch_config_type_0 import SourcePatchConfigType0


T = TypeVar("T", bound="SourcePatch")


@_attrs_define
class SourcePatch:
    """Only what is sent changes. ``collection_name`` / ``knowledge_base_id`` move the source
    (``PATCH /rag/sync/sources/{id}`` only; a knowledge base's own route refuses a move).

        Attributes:
            config (None | SourcePatchConfigType0 | Unset):
            secret_id (None | Unset | UUID):
            name (None | str | Unset):
            sync_mode (None | SourcePatchSyncModeType0 | Unset):
            schedule_seconds (int | None | Unset):
            organizational_unit (None | str | Unset):
            active (bool | None | Unset):
            collection_name (None | str | Unset):
            knowledge_base_id (None | Unset | UUID):
    """

    config: None | SourcePatchConfigType0 | Unset = UNSET
    secret_id: None | Unset | UUID = UNSET
    name: None | str | Unset = UNSET
    sync_mode: None | SourcePatchSyncModeType0 | Unset = UNSET
    schedule_seconds: int | None | Unset = UNSET
    organizational_unit: None | str | Unset = UNSET
    active: bool | None | Unset = UNSET
    collection_name: None | str | Unset = UNSET
    knowledge_base_id: None | Unset | UUID = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.source_patch_config_type_0 import SourcePatchConfigType0

        config: dict[str, Any] | None | Unset
        if isinstance(self.config, Unset):
            config = UNSET
        elif isinstance(self.config, SourcePatchConfigType0):
            config = self.config.to_dict()
        else:
            config = self.config

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

        sync_mode: None | str | Unset
        if isinstance(self.sync_mode, Unset):
            sync_mode = UNSET
        elif isinstance(self.sync_mode, SourcePatchSyncModeType0):
            sync_mode = self.sync_mode.value
        else:
            sync_mode = self.sync_mode

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

        active: bool | None | Unset
        if isinstance(self.active, Unset):
            active = UNSET
        else:
            active = self.active

        collection_name: None | str | Unset
        if isinstance(self.collection_name, Unset):
            collection_name = UNSET
        else:
            collection_name = self.collection_name

        knowledge_base_id: None | str | Unset
        if isinstance(self.knowledge_base_id, Unset):
            knowledge_base_id = UNSET
        elif isinstance(self.knowledge_base_id, UUID):
            knowledge_base_id = str(self.knowledge_base_id)
        else:
            knowledge_base_id = self.knowledge_base_id

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if config is not UNSET:
            field_dict["config"] = config
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
        if active is not UNSET:
            field_dict["active"] = active
        if collection_name is not UNSET:
            field_dict["collection_name"] = collection_name
        if knowledge_base_id is not UNSET:
            field_dict["knowledge_base_id"] = knowledge_base_id

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.source_patch_config_type_0 import SourcePatchConfigType0

        d = dict(src_dict)

        def _parse_config(data: object) -> None | SourcePatchConfigType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                config_type_0 = SourcePatchConfigType0.from_dict(data)

                return config_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SourcePatchConfigType0 | Unset, data)

        config = _parse_config(d.pop("config", UNSET))

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

        def _parse_sync_mode(data: object) -> None | SourcePatchSyncModeType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                sync_mode_type_0 = SourcePatchSyncModeType0(data)

                return sync_mode_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SourcePatchSyncModeType0 | Unset, data)

        sync_mode = _parse_sync_mode(d.pop("sync_mode", UNSET))

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

        def _parse_active(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        active = _parse_active(d.pop("active", UNSET))

        def _parse_collection_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        collection_name = _parse_collection_name(d.pop("collection_name", UNSET))

        def _parse_knowledge_base_id(data: object) -> None | Unset | UUID:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                knowledge_base_id_type_0 = UUID(data)

                return knowledge_base_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UUID, data)

        knowledge_base_id = _parse_knowledge_base_id(d.pop("knowledge_base_id", UNSET))

        source_patch = cls(
            config=config,
            secret_id=secret_id,
            name=name,
            sync_mode=sync_mode,
            schedule_seconds=schedule_seconds,
            organizational_unit=organizational_unit,
            active=active,
            collection_name=collection_name,
            knowledge_base_id=knowledge_base_id,
        )

        return source_patch
