"""The upload API's layout rules that a reader could break without any test noticing.

The edge owns the transaction (``docproc_upload.deps``): a route begins and ends it, and
no ``service`` or ``repository`` module begins, commits or rolls one back.
"""

from __future__ import annotations

import ast
from pathlib import Path

import docproc_upload
import pytest

PACKAGE = Path(docproc_upload.__file__).parent
TRANSACTION_CALLS = frozenset({"begin", "begin_nested", "commit", "rollback"})
LOGIC = sorted(
    p.relative_to(PACKAGE).as_posix()
    for role in ("service.py", "repository.py")
    for p in PACKAGE.glob(f"*/{role}")
)


def transaction_calls(source: str) -> list[str]:
    return [
        f"line {node.lineno}: .{node.func.attr}()"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in TRANSACTION_CALLS
    ]


def test_every_resource_package_is_checked() -> None:
    assert {"chat/service.py", "chat/repository.py", "rag_documents/service.py"} <= set(LOGIC)


@pytest.mark.parametrize("module", LOGIC)
def test_no_service_or_repository_owns_a_transaction(module: str) -> None:
    assert transaction_calls((PACKAGE / module).read_text()) == []
