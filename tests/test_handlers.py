"""What a consumer's handler may do (docs/architecture.md, "A stage is a declaration"):
it declares its stage's functions and the runner (``docproc_common.bus.stage``) does the
rest, so no ``services/*/src/**/handler.py`` opens a session or a transaction, claims a
delivery or builds a unit of work. Checked by reading the code, as tests/test_layout.py
checks the layout."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = {
    "opens a session": re.compile(r"sessionmaker\("),
    "opens a transaction": re.compile(r"\.begin(_nested)?\("),
    "claims a delivery": re.compile(r"\.claim\("),
    "builds a unit": re.compile(r"\b\w*Unit\("),
}


def handlers() -> list[Path]:
    return sorted(ROOT.glob("services/*/src/**/handler.py"))


def breaches(path: Path) -> list[str]:
    code = path.read_text()
    return [what for what, pattern in FORBIDDEN.items() if pattern.search(code)]


def test_there_are_handlers_to_check() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in handlers()}
    assert {
        "services/parser/src/docproc_parser/handler.py",
        "services/embedder/src/docproc_embedder/handler.py",
        "services/teardown/src/docproc_teardown/handler.py",
        "services/sync/src/docproc_sync/handler.py",
    } <= names


def test_no_handler_opens_a_session_claims_or_builds_a_unit() -> None:
    found = {p.relative_to(ROOT).as_posix(): breaches(p) for p in handlers()}
    assert not {k: v for k, v in found.items() if v}, found
