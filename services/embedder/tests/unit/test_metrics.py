"""The embedder's series name no collection (issue 25, item 11): a collection's name is a
tenant's text, and a label would carry it to every dashboard and operator."""

from __future__ import annotations

from docproc_embedder.metrics import BULK_ROWS_PENDING
from prometheus_client import REGISTRY


def test_the_bulk_gauge_is_one_total_with_no_collection_label() -> None:
    BULK_ROWS_PENDING.set(3)  # a labelled gauge refuses a value without its labels
    assert REGISTRY.get_sample_value("docproc_embedder_bulk_rows_pending") == 3
    (family,) = (m for m in REGISTRY.collect() if m.name == "docproc_embedder_bulk_rows_pending")
    assert [sample.labels for sample in family.samples] == [{}]
