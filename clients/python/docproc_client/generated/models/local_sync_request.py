from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define

from ..models.local_sync_request_sync_mode import LocalSyncRequestSyncMode
from ..types import UNSET, Unset

T = TypeVar("T", bound="LocalSyncRequest")


@_attrs_define
class LocalSyncRequest:
    """``POST /rag/sync/local``: a server directory into a knowledge base (app admins only).

    Attributes:
        path (str):
        collection_name (None | str | Unset):
        knowledge_base_id (None | Unset | UUID):
        sync_mode (LocalSyncRequestSyncMode | Unset):  Default: LocalSyncRequestSyncMode.NEW_ONLY.
    """

    path: str
    collection_name: None | str | Unset = UNSET
    knowledge_base_id: None | Unset | UUID = UNSET
    sync_mode: LocalSyncRequestSyncMode | Unset = LocalSyncRequestSyncMode.NEW_ONLY

    def to_dict(self) -> dict[str, Any]:
        path = self.path

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

        sync_mode: str | Unset = UNSET
        if not isinstance(self.sync_mode, Unset):
            sync_mode = self.sync_mode.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "path": path,
            }
        )
        if collection_name is not UNSET:
            field_dict["collection_name"] = collection_name
        if knowledge_base_id is not UNSET:
            field_dict["knowledge_base_id"] = knowledge_base_id
        if sync_mode is not UNSET:
            field_dict["sync_mode"] = sync_mode

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        path = d.pop("path")

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

        _sync_mode = d.pop("sync_mode", UNSET)
        sync_mode: LocalSyncRequestSyncMode | Unset
        if isinstance(_sync_mode, Unset):
            sync_mode = UNSET
        else:
            sync_mode = LocalSyncRequestSyncMode(_sync_mode)

        local_sync_request = cls(
            path=path,
            collection_name=collection_name,
            knowledge_base_id=knowledge_base_id,
            sync_mode=sync_mode,
        )

        return local_sync_request
