from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.evaluation_run_out_status import EvaluationRunOutStatus
from ..models.evaluation_run_out_trigger import EvaluationRunOutTrigger

if TYPE_CHECKING:
    from ..models.evaluation_run_out_scores import EvaluationRunOutScores
    from ..models.evaluation_run_out_skipped import EvaluationRunOutSkipped
    from ..models.settings_snapshot import SettingsSnapshot


T = TypeVar("T", bound="EvaluationRunOut")


@_attrs_define
class EvaluationRunOut:
    """
    Attributes:
        id (UUID):
        evaluation_id (UUID):
        trigger (EvaluationRunOutTrigger):
        status (EvaluationRunOutStatus):
        error (None | str):
        started_by (None | str):
        started_at (datetime.datetime):
        finished_at (datetime.datetime):
        query_count (int):
        missing_documents (int):
        scores (EvaluationRunOutScores):
        skipped (EvaluationRunOutSkipped):
        settings (SettingsSnapshot): The base's settings a run searched with.
    """

    id: UUID
    evaluation_id: UUID
    trigger: EvaluationRunOutTrigger
    status: EvaluationRunOutStatus
    error: None | str
    started_by: None | str
    started_at: datetime.datetime
    finished_at: datetime.datetime
    query_count: int
    missing_documents: int
    scores: EvaluationRunOutScores
    skipped: EvaluationRunOutSkipped
    settings: SettingsSnapshot
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = str(self.id)

        evaluation_id = str(self.evaluation_id)

        trigger = self.trigger.value

        status = self.status.value

        error: None | str
        error = self.error

        started_by: None | str
        started_by = self.started_by

        started_at = self.started_at.isoformat()

        finished_at = self.finished_at.isoformat()

        query_count = self.query_count

        missing_documents = self.missing_documents

        scores = self.scores.to_dict()

        skipped = self.skipped.to_dict()

        settings = self.settings.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "evaluation_id": evaluation_id,
                "trigger": trigger,
                "status": status,
                "error": error,
                "started_by": started_by,
                "started_at": started_at,
                "finished_at": finished_at,
                "query_count": query_count,
                "missing_documents": missing_documents,
                "scores": scores,
                "skipped": skipped,
                "settings": settings,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.evaluation_run_out_scores import EvaluationRunOutScores
        from ..models.evaluation_run_out_skipped import EvaluationRunOutSkipped
        from ..models.settings_snapshot import SettingsSnapshot

        d = dict(src_dict)
        id = UUID(d.pop("id"))

        evaluation_id = UUID(d.pop("evaluation_id"))

        trigger = EvaluationRunOutTrigger(d.pop("trigger"))

        status = EvaluationRunOutStatus(d.pop("status"))

        def _parse_error(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        error = _parse_error(d.pop("error"))

        def _parse_started_by(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        started_by = _parse_started_by(d.pop("started_by"))

        started_at = datetime.datetime.fromisoformat(d.pop("started_at"))

        finished_at = datetime.datetime.fromisoformat(d.pop("finished_at"))

        query_count = d.pop("query_count")

        missing_documents = d.pop("missing_documents")

        scores = EvaluationRunOutScores.from_dict(d.pop("scores"))

        skipped = EvaluationRunOutSkipped.from_dict(d.pop("skipped"))

        settings = SettingsSnapshot.from_dict(d.pop("settings"))

        evaluation_run_out = cls(
            id=id,
            evaluation_id=evaluation_id,
            trigger=trigger,
            status=status,
            error=error,
            started_by=started_by,
            started_at=started_at,
            finished_at=finished_at,
            query_count=query_count,
            missing_documents=missing_documents,
            scores=scores,
            skipped=skipped,
            settings=settings,
        )

        evaluation_run_out.additional_properties = d
        return evaluation_run_out

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
