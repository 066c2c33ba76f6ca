from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.evaluation_run_out import EvaluationRunOut
    from ..models.stored_query import StoredQuery


T = TypeVar("T", bound="EvaluationDetail")


@_attrs_define
class EvaluationDetail:
    """
    Attributes:
        id (UUID):
        knowledge_base_id (UUID):
        name (str):
        query_count (int):
        judgment_count (int):
        created_by (str):
        created_at (datetime.datetime):
        latest_run (EvaluationRunOut | None):
        queries (list[StoredQuery]):
    """

    id: UUID
    knowledge_base_id: UUID
    name: str
    query_count: int
    judgment_count: int
    created_by: str
    created_at: datetime.datetime
    latest_run: EvaluationRunOut | None
    queries: list[StoredQuery]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.evaluation_run_out import EvaluationRunOut

        id = str(self.id)

        knowledge_base_id = str(self.knowledge_base_id)

        name = self.name

        query_count = self.query_count

        judgment_count = self.judgment_count

        created_by = self.created_by

        created_at = self.created_at.isoformat()

        latest_run: dict[str, Any] | None
        if isinstance(self.latest_run, EvaluationRunOut):
            latest_run = self.latest_run.to_dict()
        else:
            latest_run = self.latest_run

        queries = []
        for queries_item_data in self.queries:
            queries_item = queries_item_data.to_dict()
            queries.append(queries_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "knowledge_base_id": knowledge_base_id,
                "name": name,
                "query_count": query_count,
                "judgment_count": judgment_count,
                "created_by": created_by,
                "created_at": created_at,
                "latest_run": latest_run,
                "queries": queries,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.evaluation_run_out import EvaluationRunOut
        from ..models.stored_query import StoredQuery

        d = dict(src_dict)
        id = UUID(d.pop("id"))

        knowledge_base_id = UUID(d.pop("knowledge_base_id"))

        name = d.pop("name")

        query_count = d.pop("query_count")

        judgment_count = d.pop("judgment_count")

        created_by = d.pop("created_by")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        def _parse_latest_run(data: object) -> EvaluationRunOut | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                latest_run_type_0 = EvaluationRunOut.from_dict(data)

                return latest_run_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(EvaluationRunOut | None, data)

        latest_run = _parse_latest_run(d.pop("latest_run"))

        queries = []
        _queries = d.pop("queries")
        for queries_item_data in _queries:
            queries_item = StoredQuery.from_dict(queries_item_data)

            queries.append(queries_item)

        evaluation_detail = cls(
            id=id,
            knowledge_base_id=knowledge_base_id,
            name=name,
            query_count=query_count,
            judgment_count=judgment_count,
            created_by=created_by,
            created_at=created_at,
            latest_run=latest_run,
            queries=queries,
        )

        evaluation_detail.additional_properties = d
        return evaluation_detail

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
