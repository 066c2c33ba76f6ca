"""The parser as a ``ServiceSpec``."""

from __future__ import annotations

from docproc_common.bus.delivery import Subscription
from docproc_common.events import DocumentAccepted
from docproc_common.runtime import Runtime, ServiceSpec

from docproc_parser.handler import ParserHandler

NAME = "parser"


def build(runtime: Runtime) -> ServiceSpec:
    return ServiceSpec(
        name=NAME, subscriptions=[Subscription(DocumentAccepted.TOPIC, ParserHandler(runtime))]
    )
