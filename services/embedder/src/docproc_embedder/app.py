"""The embedder as a ``ServiceSpec``."""

from __future__ import annotations

import asyncio
import logging

from docproc_common.bus.topics import subscriptions
from docproc_common.embedding.client import EmbeddingClients
from docproc_common.events import DocumentParsed
from docproc_common.periodic import Task
from docproc_common.runtime import Runtime, ServiceSpec

from docproc_embedder import repository
from docproc_embedder.handler import EmbedderHandler
from docproc_embedder.openai_api import build_openai_router

NAME = "embedder"
log = logging.getLogger(__name__)


def warm_model(runtime: Runtime, clients: EmbeddingClients, serves_openai_api: bool) -> Task:
    """Load the local model at start-up, not on the first document, when something uses it:
    a knowledge base on the ``local`` provider, or this embedder's OpenAI-compatible
    endpoint (which serves it). Otherwise it stays unloaded (~150 MiB) until first used."""

    async def run(_stop: asyncio.Event) -> None:
        async with runtime.sessionmaker() as session:
            needed = serves_openai_api or await repository.local_model_in_use(session)
        if needed:
            await clients.warm()
        else:
            log.info("no knowledge base uses the local model; it loads on first use")

    return run


def build(runtime: Runtime) -> ServiceSpec:
    e = runtime.settings.embedder
    clients = EmbeddingClients(runtime.settings)
    token = e.openai_api_token.get_secret_value() if e.openai_api_token else None
    handler = EmbedderHandler(runtime, clients)
    return ServiceSpec(
        name=NAME,
        keys=frozenset({"vault"}),  # the collections' embedding keys
        subscriptions=subscriptions(NAME, {DocumentParsed: handler}),
        routers=(
            [build_openai_router(clients, token, rerank=e.rerank_model_dir is not None)]
            if e.serve_openai_api
            else []
        ),
        tasks=[
            warm_model(runtime, clients, e.serve_openai_api),
            handler.bulk.sweeper(),
        ],
        on_shutdown=[clients.aclose],
        # documents embedded at once share the local model's batches (LocalEmbeddingClient);
        # the handler is per document and tolerates overlap (claim, current-attempt lock)
        concurrency=e.concurrency,
    )
