"""The teardown service as a ``ServiceSpec``: two consumers and the hourly reservation sweep."""

from __future__ import annotations

from docproc_common.bus.topics import subscriptions
from docproc_common.events import CollectionDeleted, DocumentDeleted
from docproc_common.runtime import Runtime, ServiceSpec

from docproc_teardown.handler import collection_deleted, document_deleted
from docproc_teardown.service import sweeper

NAME = "teardown"


def build(runtime: Runtime) -> ServiceSpec:
    return ServiceSpec(
        name=NAME,
        subscriptions=subscriptions(
            NAME,
            {
                CollectionDeleted: collection_deleted(runtime),
                DocumentDeleted: document_deleted(runtime),
            },
        ),
        tasks=[sweeper(runtime)],
    )
