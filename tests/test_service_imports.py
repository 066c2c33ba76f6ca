"""No service process loads the parsers: only the parse fork servers and their children do.

PyMuPDF, the office libraries and Pillow cost ~200 MiB per process (docs/benchmarks.md,
"Service processes"); a top-level import of ``parse`` anywhere on a service's import
path would quietly bring them back.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

PARSERS = ("pymupdf", "docx", "pptx", "openpyxl", "xlrd", "odf", "PIL", "liteparse")

PROBE = """
import importlib, json, sys
for module in sys.argv[1].split(","):
    importlib.import_module(module)
print(json.dumps(sorted(m for m in sys.argv[2:] if m in sys.modules)))
"""


def loaded_after_importing(*modules: str) -> set[str]:
    """Which of ``PARSERS`` a fresh interpreter holds after importing ``modules``."""
    out = subprocess.run(
        [sys.executable, "-c", PROBE, ",".join(modules), *PARSERS],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return set(json.loads(out.strip().splitlines()[-1]))


@pytest.mark.parametrize("service", ["upload", "parser", "embedder", "sync", "teardown"])
def test_a_service_process_imports_no_parser(service: str) -> None:
    assert loaded_after_importing(f"docproc_{service}.app") == set()


def test_the_parse_fork_servers_preload_them() -> None:
    """What a parse child inherits instead of importing per document."""
    preloads = ("docproc_parser.engine.forkserver_preload", "docproc_common.parsing.dispatch")
    assert loaded_after_importing(*preloads) >= {"pymupdf", "docx", "openpyxl", "PIL"}
