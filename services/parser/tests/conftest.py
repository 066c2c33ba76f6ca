"""Fixtures shared by the parser's tests: the HTTP stand-ins, served for the whole session."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # parser_standins, parser_samples

from parser_standins import LlamaParseStandIn, VisionStandIn, serve  # noqa: E402


@pytest.fixture(scope="session")
def llamaparse_standin() -> Iterator[tuple[LlamaParseStandIn, str]]:
    standin = LlamaParseStandIn()
    with serve(standin.app()) as url:
        yield standin, url


@pytest.fixture(scope="session")
def vision_standin() -> Iterator[tuple[VisionStandIn, str]]:
    standin = VisionStandIn()
    with serve(standin.app()) as url:
        yield standin, url
