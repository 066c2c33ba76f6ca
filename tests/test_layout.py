"""What the repository's layout promises (docs/architecture.md).

``libs/common`` holds only what two or more members use, so it stays a minority of the
code: its share is the lines (every line, blank and comment too) of the ``*.py`` files
under ``libs/common/src`` over those under ``libs/common/src``, ``services/*/src`` and
``cli/src`` (test support, ``libs/testing``, and every ``tests`` folder count on neither
side), at most ``COMMON_SHARE_MAX``.

The decision records in ``docs/decisions`` are numbered once each, in the order they were
added, and every ``docs/decisions/<file>`` the tree names is one of them.

No SQL in a module not called ``repository`` (``test_only_repositories_run_sql``).

The CLI imports no service's internals (``test_the_cli_imports_only_what_it_may``).
"""

from __future__ import annotations

import ast
import re
import subprocess
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DECISIONS = ROOT / "docs" / "decisions"
COMMON_SHARE_MAX = 0.40


def lines_of_python(src: Path) -> int:
    return sum(len(path.read_text().splitlines()) for path in src.rglob("*.py"))


def test_libs_common_is_at_most_its_share_of_the_code() -> None:
    common = lines_of_python(ROOT / "libs" / "common" / "src")
    members = {
        str(src.relative_to(ROOT)): lines_of_python(src)
        for src in [*sorted((ROOT / "services").glob("*/src")), ROOT / "cli" / "src"]
    }
    share = common / (common + sum(members.values()))
    assert share <= COMMON_SHARE_MAX, (
        f"libs/common/src is {share:.1%} of the code ({common} lines; {members}): move what "
        "one member alone uses to that member"
    )


def test_each_decision_record_has_its_own_number() -> None:
    numbers = Counter(p.name.split("-", 1)[0] for p in DECISIONS.glob("*.md"))
    assert sorted(numbers) == [f"{n:04d}" for n in range(1, len(numbers) + 1)]
    assert not [n for n, count in numbers.items() if count > 1]
    for path in DECISIONS.glob("*.md"):
        title = path.read_text().splitlines()[0]
        assert title.startswith(f"# {path.name[:4]} "), f"{path.name}: {title}"


def test_every_named_decision_record_exists() -> None:
    tracked = subprocess.run(
        ["git", "grep", "-I", "-h", "-o", r"decisions/[0-9]\{4\}[^ )`'\"]*"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    named = {re.sub(r"[.,:;]+$", "", n).removeprefix("decisions/") for n in tracked}
    missing = sorted(n for n in named if not (DECISIONS / n).is_file())
    assert not missing, f"named but not in docs/decisions: {missing}"


SQL_CONSTRUCTORS = frozenset(
    {"text", "select", "insert", "update", "delete", "union", "union_all", "exists", "values"}
)
SQL_CALLS = frozenset(
    {"execute", "exec_driver_sql", "executemany", "scalar", "scalars", "stream_scalars"}
)
SQL_EXCEPTIONS = {
    # A test bed shipped with sync for its integration tests and bench/sync.py: it plays
    # the parser and the embedder on the rows a run wrote and reads what the run
    # emitted. Its statements are test support, not service code, so they stay out of
    # sync's repository.
    "services/sync/src/docproc_sync/testing.py",
}


def sql_uses(source: str) -> list[str]:
    """Where ``source`` builds or sends a SQL statement (see ``test_only_repositories_run_sql``)."""
    tree = ast.parse(source)
    modules: set[str] = set()  # names bound to sqlalchemy modules (import sqlalchemy as sa)
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "asyncpg":
                    found.append(f"line {node.lineno}: import {alias.name}")
                elif alias.name.split(".")[0] == "sqlalchemy":
                    modules.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.module:
            root = node.module.split(".")[0]
            names = {a.name for a in node.names}
            if root == "asyncpg" or (root == "sqlalchemy" and names & SQL_CONSTRUCTORS):
                found.append(f"line {node.lineno}: from {node.module} import {sorted(names)}")
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and node.attr in SQL_CONSTRUCTORS
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
        ):
            found.append(f"line {node.lineno}: {node.value.id}.{node.attr}")
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in SQL_CALLS
            and node.args
        ):
            found.append(f"line {node.lineno}: .{node.func.attr}(...)")
    return found


def service_modules() -> list[str]:
    """Every module of the services and the CLI."""
    return sorted(
        p.relative_to(ROOT).as_posix()
        for pattern in ("services/*/src/**/*.py", "cli/src/**/*.py")
        for p in ROOT.glob(pattern)
    )


def test_only_repositories_run_sql() -> None:
    """No SQL in a module not called ``repository`` (``docs/architecture.md``, file roles).

    Scope: every module under ``services/*/src`` and ``cli/src``. Not ``libs/common``,
    which is the shared data layer itself (models and migrations, the outbox and the
    embedded bus, the vector store, the vault, bulk load, operator ingest), with no
    service or repository role to split; not test support (``libs/testing``, ``tests``).

    A repository is a module whose file is named ``repository.py`` (a resource
    package's, as ``docproc_upload/search/repository.py``, or a service's own, as
    ``docproc_sync/repository.py``); nothing else.

    SQL use, read from the AST: importing a statement constructor from ``sqlalchemy``
    or one of its modules (``SQL_CONSTRUCTORS``: ``text``, ``select``, ``insert``,
    ``update``, ``delete``, ...) or reaching one through an imported ``sqlalchemy``
    module (``sa.select``); sending a statement, a call of a method in ``SQL_CALLS``
    (``session.execute(...)``, ``.scalars(...)``, ``connection.exec_driver_sql(...)``)
    with a positional argument; importing the driver (``asyncpg``). Not counted: SQL
    expressions that are no statement (``func.now()`` stamping a column, a predicate
    such as ``Model.id == x``) and the ORM's unit of work on rows already in hand
    (``session.add``, ``flush``, ``refresh``, ``get``), whose names are too common to
    tell apart by syntax. A module in ``SQL_EXCEPTIONS`` says why it may.
    """
    modules = service_modules()
    assert "services/upload/src/docproc_upload/search/service.py" in modules
    assert "cli/src/docproc_cli/operator.py" in modules
    offenders = {
        module: uses
        for module in modules
        if Path(module).name != "repository.py"
        and module not in SQL_EXCEPTIONS
        and (uses := sql_uses((ROOT / module).read_text()))
    }
    assert not offenders, f"SQL outside a repository.py: {offenders}"
    stale = sorted(m for m in SQL_EXCEPTIONS if not sql_uses((ROOT / m).read_text()))
    assert not stale, f"no SQL left in these SQL_EXCEPTIONS; remove them: {stale}"


def test_sql_uses_sees_each_kind_of_statement() -> None:
    source = """
import sqlalchemy as sa
from sqlalchemy import func, text
from sqlalchemy.dialects.postgresql import insert

async def f(session, request):
    stamp = func.now()
    await session.execute(sa.select(1))
    rows = await session.scalars(q)
    request.execute(http=None)
"""
    assert sorted(use.split(":")[0] for use in sql_uses(source)) == [
        "line 3",
        "line 4",
        "line 8",
        "line 8",
        "line 9",
    ]


#: The workspace's import packages the CLI may import anywhere: the shared library, its own.
CLI_IMPORTS_ANYWHERE = frozenset({"docproc_common", "docproc_cli"})
#: The services' modules the CLI imports, and where: only ``docproc dev``'s embedded
#: all-in-one builds the services, through each one's ``app`` (its ``build``, what ``python
#: -m docproc_<svc>`` runs), and checks upload's development sign-in guard
#: (``console.dev_sign_in_guard``) before it starts a database. Everything else the CLI
#: does goes through ``docproc_common`` (operator ingest, the teardown reservation) or runs
#: a service's own command (``docproc-sync rag-sync-gdrive``) as a process.
CLI_SERVICE_IMPORTS = {
    "cli/src/docproc_cli/embedded.py": frozenset(
        {
            "docproc_upload.app",
            "docproc_upload.console",
            "docproc_parser.app",
            "docproc_embedder.app",
            "docproc_sync.app",
            "docproc_teardown.app",
        }
    ),
}


def imported_modules(source: str) -> set[str]:
    """The absolute modules ``source`` imports: ``import a.b`` and ``from a.b import c`` both
    name ``a.b`` (read from the AST, conditional and function-level imports included)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
    return found


def test_the_cli_imports_only_what_it_may() -> None:
    """``cli/src`` imports ``docproc_common`` and itself, never ``docproc_testing``, and of
    the services only ``CLI_SERVICE_IMPORTS``, in the module named there: no service's
    repository, service functions, engine or connectors (issue #26)."""
    modules = sorted(ROOT.glob("cli/src/**/*.py"))
    assert modules
    breaches: dict[str, list[str]] = {}
    used: set[tuple[str, str]] = set()
    for path in modules:
        name = path.relative_to(ROOT).as_posix()
        allowed = CLI_SERVICE_IMPORTS.get(name, frozenset())
        for module in sorted(imported_modules(path.read_text())):
            root = module.split(".")[0]
            if not root.startswith("docproc") or root in CLI_IMPORTS_ANYWHERE:
                continue
            if module in allowed:
                used.add((name, module))
            else:
                breaches.setdefault(name, []).append(module)
    assert not breaches, f"the CLI imports what it may not: {breaches}"
    stale = {(n, m) for n, ms in CLI_SERVICE_IMPORTS.items() for m in ms} - used
    assert not stale, f"allowed but no longer imported; remove them: {sorted(stale)}"


def test_imported_modules_reads_every_form_of_import() -> None:
    source = """
import docproc_upload.knowledge_bases.repository
from docproc_parser.engine.processor import extract_text
from . import sibling

def f():
    from docproc_sync.connectors import gdrive
"""
    assert imported_modules(source) == {
        "docproc_upload.knowledge_bases.repository",
        "docproc_parser.engine.processor",
        "docproc_sync.connectors",
    }
