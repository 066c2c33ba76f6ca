"""The embedder as a ``ServiceSpec``."""

from __future__ import annotations

from docproc_common.bus.delivery import Subscription
from docproc_common.embedding.client import EmbeddingClients
from docproc_common.events import DocumentParsed
from docproc_common.runtime import Runtime, ServiceSpec

from docproc_embedder.handler import EmbedderHandler

NAME = "embedder"


def build(runtime: Runtime) -> ServiceSpec:
    e = runtime.settings.embedder
    clients = EmbeddingClients(runtime.pool, e.model_cache_dir, e.threads, e.batch_size)
    return ServiceSpec(
        name=NAME,
        subscriptions=[Subscription(DocumentParsed.TOPIC, EmbedderHandler(runtime, clients))],
    )
