"""The parser as a ``ServiceSpec``: one subscription, an isolated parse per document."""

from __future__ import annotations

import asyncio
import logging

import httpx
from docproc_common.bus.stage import AttemptHandler
from docproc_common.bus.topics import subscriptions
from docproc_common.events import DocumentAccepted
from docproc_common.formats import Capabilities
from docproc_common.http import ReadinessCheck
from docproc_common.runtime import Runtime, ServiceSpec
from docproc_common.settings import ParserSettings

from docproc_parser.engine.processor import DocumentProcessor, ProcessorOptions, parse_isolation
from docproc_parser.handler import ParseStage
from docproc_parser.keys import vault_keys

log = logging.getLogger(__name__)

NAME = "parser"


def processor_for(settings: ParserSettings) -> DocumentProcessor:
    isolation = parse_isolation(
        settings.memory_limit_mb, settings.max_concurrent, settings.max_temp_file_mb
    )
    http = httpx.AsyncClient(
        timeout=httpx.Timeout(
            settings.http_read_timeout_s, connect=settings.http_connect_timeout_s
        ),
        follow_redirects=False,
        trust_env=False,
    )
    options = ProcessorOptions(
        llamaparse_base_url=settings.llamaparse_base_url,
        llamaparse_tier=settings.llamaparse_tier,
        vision_allowed_base_urls=tuple(settings.vision_allowed_base_urls),
    )
    return DocumentProcessor(isolation, http, options)


class CapabilitiesDisagree(RuntimeError):
    """What the deployment says the parser reads is not what this machine has."""


def capabilities_check(declared: Capabilities, actual: Capabilities) -> ReadinessCheck:
    """Not ready while ``FORMATS__*`` (what the API and sync refuse by) disagrees with what
    this parser really has: an upload accepted there would fail here, or a file this parser
    reads would be refused there (docs/decisions/0006-parser-capabilities.md)."""
    why = declared.disagreement(actual)
    if why is not None:
        log.error("the parser's declared formats are not this machine's: %s", why)

    async def parser_capabilities() -> None:
        if why is not None:
            raise CapabilitiesDisagree(why)

    return parser_capabilities


def build(runtime: Runtime) -> ServiceSpec:
    processor = processor_for(runtime.settings.parser)

    async def warm_up(_stop: asyncio.Event) -> None:
        try:
            await processor.isolation.warm_up()
        except Exception:  # noqa: BLE001 - the first document will start it again
            log.warning("the parse fork server did not start ahead of time", exc_info=True)

    async def close() -> None:
        await processor.http.aclose()
        processor.isolation.close()

    stage = ParseStage(runtime.storage, runtime.pool, processor, vault_keys(runtime))
    handler = AttemptHandler(runtime.sessionmaker, stage)
    return ServiceSpec(
        name=NAME,
        keys=frozenset({"vault"}),  # LlamaParse and vision keys
        subscriptions=subscriptions(NAME, {DocumentAccepted: handler}),
        tasks=[warm_up],
        on_shutdown=[close],
        checks=[
            capabilities_check(
                Capabilities.declared(runtime.settings.formats), processor.capabilities
            )
        ],
    )
