"""Every regular expression the API holds a client's input to runs in linear time (issue 25,
item 2: after the git globs, "the same audit for every other user-supplied pattern or
filter"). No client sends a pattern of its own but the git ``include`` globs, which are
matched without a regex (``docproc_sync.connectors.globs``, test_globs.py); the rest of
what a client sends (names, ids, hosts, MIME types, dates, an OCR language) is checked
against the fixed expressions of these modules, and a nested or overlapping quantifier
among them would let one crafted value hold the GIL (``_sre`` never releases it). Each is
run against long runs of the characters such expressions are written with, at two
lengths: a linear expression's cost grows with the length, a backtracking one's with its
square (``<[^>]+>`` searched in ``<<<<``) or never ends (``^(a|a?)+$``). Pydantic's ``pattern=`` fields
use Rust's regex crate, linear by construction."""

from __future__ import annotations

import importlib
import pkgutil
import re
import time
from types import ModuleType

import pytest

#: The modules whose expressions check what a client sends: the connectors' configuration,
#: the ingestion configuration, collection and file names, vault ids, and upload's own.
MODULES = (
    "docproc_common.connectors",
    "docproc_common.db.vector_tables",
    "docproc_common.ingestion",
    "docproc_common.storage",
    "docproc_common.vault",
    "docproc_common.vectorstore",
    "docproc_upload",
)
#: Runs of these lengths: a linear expression costs about 8 times more on the longer ones,
#: a quadratic one about 64 times.
SHORT, LONG = 2_000, 16_000


def hostile(run: int) -> list[str]:
    """Long runs of the characters such expressions are written with, ending on a miss."""
    return [
        *(c * run + tail for c in "a0-._/ @,=:'\"\\\n*?%<b!" for tail in ("", "!", "\x00")),
        *((a + b) * (run // 2) + "!" for a, b in ("a.", "a-", "a@", "a,", "a/", "0-", "- ", "a:")),
    ]


def cost(pattern: re.Pattern[str], values: list[str]) -> float:
    """CPU seconds of matching, full-matching and searching each value (a busy host
    stretches the wall clock, not this)."""
    started = time.process_time()
    for value in values:
        pattern.match(value)
        pattern.fullmatch(value)
        pattern.search(value)
    return time.process_time() - started


def modules(name: str) -> list[ModuleType]:
    top = importlib.import_module(name)
    found = [top]
    for info in pkgutil.walk_packages(getattr(top, "__path__", []), f"{name}."):
        found.append(importlib.import_module(info.name))
    return found


def expressions() -> dict[str, re.Pattern[str]]:
    """Each module-level expression once, under the name of the module that defines it."""
    out: dict[str, re.Pattern[str]] = {}
    for module in (m for name in MODULES for m in modules(name)):
        for attr, value in vars(module).items():
            if (
                isinstance(value, re.Pattern)
                and isinstance(value.pattern, str)
                and value not in out.values()
            ):
                out[f"{module.__name__}.{attr}"] = value
    return out


EXPRESSIONS = expressions()


def test_the_audit_reaches_the_validators() -> None:
    named = set(EXPRESSIONS)
    for expected in (
        "docproc_common.connectors.specs.sharepoint.SITE_ID",
        "docproc_common.connectors.specs.confluence.DNS_NAME",
        "docproc_common.connectors.specs.git.BRANCH",
        "docproc_common.ingestion._OCR_LANGUAGE",
        "docproc_upload.chat.service._SAFE_OWNER",
    ):
        assert expected in named


@pytest.mark.parametrize("name", sorted(EXPRESSIONS))
def test_no_client_value_makes_an_expression_backtrack(name: str) -> None:
    pattern = EXPRESSIONS[name]
    short, long = cost(pattern, hostile(SHORT)), cost(pattern, hostile(LONG))
    assert long < 20 * short + 0.05, (
        f"{pattern.pattern!r}: {short:.3f} s of CPU on runs of {SHORT:,}, {long:.3f} s on {LONG:,}"
    )
