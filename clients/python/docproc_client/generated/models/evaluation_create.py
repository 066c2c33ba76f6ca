from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.evaluation_query import EvaluationQuery


T = TypeVar("T", bound="EvaluationCreate")


@_attrs_define
class EvaluationCreate:
    """A set of queries, each with the documents relevant to it.

    Attributes:
        name (str):
        queries (list[EvaluationQuery]):
    """

    name: str
    queries: list[EvaluationQuery]

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        queries = []
        for queries_item_data in self.queries:
            queries_item = queries_item_data.to_dict()
            queries.append(queries_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
                "queries": queries,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.evaluation_query import EvaluationQuery

        d = dict(src_dict)
        name = d.pop("name")

        queries = []
        _queries = d.pop("queries")
        for queries_item_data in _queries:
            queries_item = EvaluationQuery.from_dict(queries_item_data)

            queries.append(queries_item)

        evaluation_create = cls(
            name=name,
            queries=queries,
        )

        return evaluation_create
