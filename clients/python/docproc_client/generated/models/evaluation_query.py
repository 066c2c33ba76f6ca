from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.evaluation_query_relevant import EvaluationQueryRelevant


T = TypeVar("T", bound="EvaluationQuery")


@_attrs_define
class EvaluationQuery:
    """
    Attributes:
        id (str):
        text (str):
        relevant (EvaluationQueryRelevant):
    """

    id: str
    text: str
    relevant: EvaluationQueryRelevant

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        text = self.text

        relevant = self.relevant.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "id": id,
                "text": text,
                "relevant": relevant,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.evaluation_query_relevant import EvaluationQueryRelevant

        d = dict(src_dict)
        id = d.pop("id")

        text = d.pop("text")

        relevant = EvaluationQueryRelevant.from_dict(d.pop("relevant"))

        evaluation_query = cls(
            id=id,
            text=text,
            relevant=relevant,
        )

        return evaluation_query
