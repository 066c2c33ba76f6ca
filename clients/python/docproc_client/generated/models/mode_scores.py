from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="ModeScores")


@_attrs_define
class ModeScores:
    """trec_eval's measures (graded judgments, linear gain), averaged over the set's
    queries; a query the mode found nothing for counts 0.

        Attributes:
            ndcg_at_10 (float):
            recall_at_10 (float):
            recall_at_100 (float):
            mrr_at_10 (float):
    """

    ndcg_at_10: float
    recall_at_10: float
    recall_at_100: float
    mrr_at_10: float
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        ndcg_at_10 = self.ndcg_at_10

        recall_at_10 = self.recall_at_10

        recall_at_100 = self.recall_at_100

        mrr_at_10 = self.mrr_at_10

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "ndcg_at_10": ndcg_at_10,
                "recall_at_10": recall_at_10,
                "recall_at_100": recall_at_100,
                "mrr_at_10": mrr_at_10,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        ndcg_at_10 = d.pop("ndcg_at_10")

        recall_at_10 = d.pop("recall_at_10")

        recall_at_100 = d.pop("recall_at_100")

        mrr_at_10 = d.pop("mrr_at_10")

        mode_scores = cls(
            ndcg_at_10=ndcg_at_10,
            recall_at_10=recall_at_10,
            recall_at_100=recall_at_100,
            mrr_at_10=mrr_at_10,
        )

        mode_scores.additional_properties = d
        return mode_scores

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
