"""The embedder as a ``ServiceSpec``."""

from __future__ import annotations

import asyncio
import logging

from docproc_common.bus.topics import subscriptions
from docproc_common.embedding.client import EmbeddingClients
from docproc_common.embedding.local_model import LocalMiniLM
from docproc_common.embedding.mounted import ModelCardError
from docproc_common.events import DocumentParsed
from docproc_common.periodic import Task
from docproc_common.runtime import Runtime, ServiceSpec

from docproc_embedder import repository
from docproc_embedder.handler import EmbedderHandler
from docproc_embedder.openai_api import build_openai_router

NAME = "embedder"
log = logging.getLogger(__name__)


def warm_model(runtime: Runtime, clients: EmbeddingClients, serves_openai_api: bool) -> Task:
    """Load the local models at start-up, not on the first document, when something uses
    them: a knowledge base on the ``local`` provider (the built-in model or a mounted one),
    or this embedder's OpenAI-compatible endpoint (which serves the built-in one). Otherwise
    a model stays unloaded (~150 MiB for the built-in) until first used. A mounted model
    that cannot be loaded is logged here; its collections' documents fail with the reason."""

    async def run(_stop: asyncio.Event) -> None:
        async with runtime.sessionmaker() as session:
            models = await repository.local_models_in_use(session)
        if serves_openai_api:
            models.add(LocalMiniLM.MODEL_NAME)
        if not models:
            log.info("no knowledge base uses a local model; each loads on first use")
        for model in sorted(models):
            try:
                await clients.warm(model)
            except (ModelCardError, OSError) as exc:
                log.error("local model %s cannot be loaded: %s", model, exc)

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
