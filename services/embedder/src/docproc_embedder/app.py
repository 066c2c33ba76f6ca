"""The embedder as a ``ServiceSpec``."""

from __future__ import annotations

import asyncio

from docproc_common.bus.delivery import Subscription
from docproc_common.embedding.client import EmbeddingClients
from docproc_common.events import DocumentParsed
from docproc_common.runtime import Runtime, ServiceSpec, Task

from docproc_embedder.handler import EmbedderHandler
from docproc_embedder.openai_api import build_openai_router

NAME = "embedder"


def warm_model(clients: EmbeddingClients) -> Task:
    """Load the local model at start-up, not on the first document."""

    async def run(_stop: asyncio.Event) -> None:
        await clients.warm()

    return run


def build(runtime: Runtime) -> ServiceSpec:
    e = runtime.settings.embedder
    clients = EmbeddingClients(runtime.settings)
    token = e.openai_api_token.get_secret_value() if e.openai_api_token else None
    handler = EmbedderHandler(runtime, clients)
    return ServiceSpec(
        name=NAME,
        subscriptions=[Subscription(DocumentParsed.TOPIC, handler, give_up=handler.give_up)],
        routers=[build_openai_router(clients, token)] if e.serve_openai_api else [],
        tasks=[warm_model(clients)],
        on_shutdown=[clients.aclose],
    )
