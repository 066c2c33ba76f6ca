from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define

from ..models.search_request_mode import SearchRequestMode
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.search_filters_in import SearchFiltersIn


T = TypeVar("T", bound="SearchRequest")


@_attrs_define
class SearchRequest:
    """What to search: ``collections`` (names, each resolved to every base on it the caller
    reaches) or ``knowledge_base_ids`` (exactly those bases, as an agent bound to them
    searches), one of the two and never both.

        Attributes:
            query (str):
            collections (list[str] | None | Unset):
            knowledge_base_ids (list[UUID] | None | Unset):
            top_k (int | Unset):  Default: 5.
            mode (SearchRequestMode | Unset):  Default: SearchRequestMode.HYBRID.
            rerank (bool | None | Unset):
            filters (None | SearchFiltersIn | Unset):
            filter_ (None | str | Unset):
    """

    query: str
    collections: list[str] | None | Unset = UNSET
    knowledge_base_ids: list[UUID] | None | Unset = UNSET
    top_k: int | Unset = 5
    mode: SearchRequestMode | Unset = SearchRequestMode.HYBRID
    rerank: bool | None | Unset = UNSET
    filters: None | SearchFiltersIn | Unset = UNSET
    filter_: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.search_filters_in import SearchFiltersIn

        query = self.query

        collections: list[str] | None | Unset
        if isinstance(self.collections, Unset):
            collections = UNSET
        elif isinstance(self.collections, list):
            collections = self.collections

        else:
            collections = self.collections

        knowledge_base_ids: list[str] | None | Unset
        if isinstance(self.knowledge_base_ids, Unset):
            knowledge_base_ids = UNSET
        elif isinstance(self.knowledge_base_ids, list):
            knowledge_base_ids = []
            for knowledge_base_ids_type_0_item_data in self.knowledge_base_ids:
                knowledge_base_ids_type_0_item = str(
                    knowledge_base_ids_type_0_item_data
                )
                knowledge_base_ids.append(knowledge_base_ids_type_0_item)

        else:
            knowledge_base_ids = self.knowledge_base_ids

        top_k = self.top_k

        mode: str | Unset = UNSET
        if not isinstance(self.mode, Unset):
            mode = self.mode.value

        rerank: bool | None | Unset
        if isinstance(self.rerank, Unset):
            rerank = UNSET
        else:
            rerank = self.rerank

        filters: dict[str, Any] | None | Unset
        if isinstance(self.filters, Unset):
            filters = UNSET
        elif isinstance(self.filters, SearchFiltersIn):
            filters = self.filters.to_dict()
        else:
            filters = self.filters

        filter_: None | str | Unset
        if isinstance(self.filter_, Unset):
            filter_ = UNSET
        else:
            filter_ = self.filter_

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "query": query,
            }
        )
        if collections is not UNSET:
            field_dict["collections"] = collections
        if knowledge_base_ids is not UNSET:
            field_dict["knowledge_base_ids"] = knowledge_base_ids
        if top_k is not UNSET:
            field_dict["top_k"] = top_k
        if mode is not UNSET:
            field_dict["mode"] = mode
        if rerank is not UNSET:
            field_dict["rerank"] = rerank
        if filters is not UNSET:
            field_dict["filters"] = filters
        if filter_ is not UNSET:
            field_dict["filter"] = filter_

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.search_filters_in import SearchFiltersIn

        d = dict(src_dict)
        query = d.pop("query")

        def _parse_collections(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                collections_type_0 = cast(list[str], data)

                return collections_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        collections = _parse_collections(d.pop("collections", UNSET))

        def _parse_knowledge_base_ids(data: object) -> list[UUID] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                knowledge_base_ids_type_0 = []
                _knowledge_base_ids_type_0 = data
                for knowledge_base_ids_type_0_item_data in _knowledge_base_ids_type_0:
                    knowledge_base_ids_type_0_item = UUID(
                        knowledge_base_ids_type_0_item_data
                    )

                    knowledge_base_ids_type_0.append(knowledge_base_ids_type_0_item)

                return knowledge_base_ids_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[UUID] | None | Unset, data)

        knowledge_base_ids = _parse_knowledge_base_ids(
            d.pop("knowledge_base_ids", UNSET)
        )

        top_k = d.pop("top_k", UNSET)

        _mode = d.pop("mode", UNSET)
        mode: SearchRequestMode | Unset
        if isinstance(_mode, Unset):
            mode = UNSET
        else:
            mode = SearchRequestMode(_mode)

        def _parse_rerank(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        rerank = _parse_rerank(d.pop("rerank", UNSET))

        def _parse_filters(data: object) -> None | SearchFiltersIn | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                filters_type_0 = SearchFiltersIn.from_dict(data)

                return filters_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SearchFiltersIn | Unset, data)

        filters = _parse_filters(d.pop("filters", UNSET))

        def _parse_filter_(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        filter_ = _parse_filter_(d.pop("filter", UNSET))

        search_request = cls(
            query=query,
            collections=collections,
            knowledge_base_ids=knowledge_base_ids,
            top_k=top_k,
            mode=mode,
            rerank=rerank,
            filters=filters,
            filter_=filter_,
        )

        return search_request
