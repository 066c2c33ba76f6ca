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
#: Handlers not yet on the runner, and why; each must still need its place here.
NOT_YET = {
    "services/sync/src/docproc_sync/handler.py": "issue #26, 2: sync receives the unit",
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
    } <= names


def test_no_handler_opens_a_session_claims_or_builds_a_unit() -> None:
    found = {
        p.relative_to(ROOT).as_posix(): breaches(p)
        for p in handlers()
        if p.relative_to(ROOT).as_posix() not in NOT_YET
    }
    assert not {k: v for k, v in found.items() if v}, found


def test_each_handler_let_off_still_needs_it() -> None:
    for name in NOT_YET:
        assert breaches(ROOT / name), f"{name} is on the runner now: remove it from NOT_YET"
