"""The embedder as a ``ServiceSpec``."""

from __future__ import annotations

from docproc_common.bus.delivery import Subscription
from docproc_common.embedding.client import EmbeddingClients
from docproc_common.events import DocumentParsed
from docproc_common.runtime import Runtime, ServiceSpec

from docproc_embedder.handler import EmbedderHandler
from docproc_embedder.openai_api import build_openai_router

NAME = "embedder"


def build(runtime: Runtime) -> ServiceSpec:
    e = runtime.settings.embedder
    clients = EmbeddingClients(runtime.settings)
    token = e.openai_api_token.get_secret_value() if e.openai_api_token else None
    return ServiceSpec(
        name=NAME,
        subscriptions=[Subscription(DocumentParsed.TOPIC, EmbedderHandler(runtime, clients))],
        routers=[build_openai_router(clients, token)] if e.serve_openai_api else [],
        on_shutdown=[clients.aclose],
    )
