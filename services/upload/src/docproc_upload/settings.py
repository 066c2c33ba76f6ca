"""The upload service's own settings: ``EVALUATIONS__*`` (the shared ones live in common)."""

from __future__ import annotations

from docproc_common.settings import SectionSettings
from pydantic import Field
from pydantic_settings import SettingsConfigDict


class EvaluationSettings(SectionSettings):
    """The scheduled runs of every knowledge base's evaluation sets (docs/search.md,
    "Evaluations"), which export ``docproc_retrieval_ndcg_at_10``."""

    model_config = SettingsConfigDict(
        env_prefix="EVALUATIONS__", env_ignore_empty=True, extra="ignore"
    )

    #: Seconds between two scheduled runs of one evaluation set (86400: daily); 0 (the
    #: default) schedules none and exports no gauge. Each run searches every query of the
    #: set once per mode with the base's embedding model, which a keyed provider bills.
    schedule_interval_s: float = Field(default=0.0, ge=0)
    #: How often each replica looks for the sets that are due and refreshes the gauge.
    check_interval_s: float = Field(default=60.0, gt=0)
