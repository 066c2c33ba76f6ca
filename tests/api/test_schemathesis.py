"""Schemathesis over every operation of ``docproc dev``: the API answers what its OpenAPI says.

``docproc dev`` runs as an OS process on a fresh database of the test Postgres, with
local storage and the local model, and ``st run`` (the schemathesis CLI) sends every
operation in its ``/openapi.json`` valid and invalid requests in every phase (examples,
coverage, fuzzing, stateful) under every check: no server error, every status and
body documented, the declared constraints being the enforced ones (a schema-valid
request is not refused, an invalid one is), ``Allow`` on a 405. Where a check does not
apply to an operation, ``schemathesis-exclusions.toml`` says so and why.

The caller is an app admin of an organization. A knowledge base, a document, an
evaluation set, a chat file on a message and a sync source are made first, and every request but a DELETE
names them in its path, so requests reach the routes' logic rather than their 404;
the DELETE operations run after all the others.
The sync routes are called as a member of the organization instead, so a generated
server directory (``/``) is refused as admin-only rather than synced.

The run is reproducible: the seed is fixed, one worker sends the requests in order
(two raced each other's state), and the seeded resources have fixed names, so the
same command finds the same thing on another machine. What the API refuses in every
string (a NUL) is declared in its schema (``docproc_upload.inputs.declare_no_nul``).

``MAX_EXAMPLES`` bounds the run (about three minutes on two cores). A failure prints
schemathesis' report, each with the ``curl`` that reproduces it, and the server log.
A run that stops on an error of schemathesis' own without a finding is run once more.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest
from docproc_common.auth import EDIT, SECRETS_VIEW, VIEW, mint_token
from docproc_testing.auth import DEV_AUTH
from docproc_testing.dev import Dev, running_dev

pytestmark = pytest.mark.integration

MAX_EXAMPLES = 20
SEED = 12
LOCAL_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
#: Where a check does not apply to an operation, and why.
EXCLUSIONS = Path(__file__).with_name("schemathesis-exclusions.toml")
# the heading of the section where schemathesis reports what its checks found
FAILURES = "= FAILURES ="


def _token(*, app_admin: bool) -> str:
    return mint_token(
        DEV_AUTH,
        user_id="root" if app_admin else "member",
        organization_id="acme",
        permissions=[VIEW, EDIT, SECRETS_VIEW],
        app_admin=app_admin,
    )


@pytest.fixture(scope="module")
def dev(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dev]:
    with running_dev(tmp_path_factory.mktemp("schemathesis")) as dev:
        yield dev


def _seed(dev: Dev) -> dict[str, str]:
    """The resources a request's path names: ``path.<parameter>`` -> id."""
    directory = dev.tmp / "synced"
    directory.mkdir()
    (directory / "otters.md").write_text("# Otters\n\nSea otters hold hands.\n")
    headers = {"Authorization": f"Bearer {_token(app_admin=True)}"}

    def ok(response: httpx.Response) -> Any:
        assert response.status_code < 300, response.text
        return response.json()

    with httpx.Client(base_url=f"{dev.url}/api/v1", headers=headers, timeout=60) as api:
        name = "st_otters"
        kb = ok(
            api.post(
                "/kb",
                json={
                    "name": name,
                    "collection_name": name,
                    "scope": "org",
                    "embedding_provider": "local",
                    "embedding_model": LOCAL_MODEL,
                },
            )
        )
        doc = ok(
            api.post(
                f"/kb/{kb['id']}/documents",
                files={"file": ("otters.md", b"# Otters\n\nSea otters hold hands.")},
            )
        )
        evaluation = ok(
            api.post(
                f"/kb/{kb['id']}/evaluations",
                json={
                    "name": "otter questions",
                    "queries": [
                        {"id": "q1", "text": "do otters hold hands?", "relevant": {"otters.md": 1}}
                    ],
                },
            )
        )
        file = ok(api.post("/files/upload", files={"file": ("note.txt", b"a chat note")}))
        message_id = str(uuid.uuid5(uuid.NAMESPACE_URL, "docproc:schemathesis:message"))
        ok(api.post(f"/messages/{message_id}/attachments", json={"file_ids": [file["id"]]}))
        source = ok(
            api.post(
                f"/kb/{kb['id']}/sync-sources",
                json={"connector": "local", "config": {"path": str(directory)}},
            )
        )
    return {
        "path.kb_id": kb["id"],
        "path.name": name,
        "path.document_id": doc["tracking_id"],
        "path.evaluation_id": evaluation["id"],
        "path.file_id": file["id"],
        "path.message_id": message_id,
        "path.source_id": source["id"],
    }


def _config(ids: dict[str, str]) -> str:
    """``schemathesis.toml`` for the run (TOML strings are written as JSON strings)."""

    def table(values: dict[str, str]) -> str:
        return (
            "{ " + ", ".join(f"{json.dumps(k)} = {json.dumps(v)}" for k, v in values.items()) + " }"
        )

    admin = {"Authorization": f"Bearer {_token(app_admin=True)}"}
    member = {"Authorization": f"Bearer {_token(app_admin=False)}"}
    return f"""
seed = {SEED}
workers = 1
continue-on-failure = true
headers = {table(admin)}

[generation]
max-examples = {MAX_EXAMPLES}
database = "none"

[checks]
enabled = true

[[operations]]
exclude-method = "DELETE"
parameters = {table(ids)}

[[operations]]
include-path-regex = "/sync"
headers = {table(member)}
""" + EXCLUSIONS.read_text()


def _st(dev: Dev, config: Path, methods: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            Path(sys.executable).parent / "st",
            "--config-file",
            str(config),
            "run",
            f"{dev.url}/openapi.json",
            *methods,
            "--no-color",
            "--request-timeout",
            "60",
        ],
        cwd=dev.tmp,
        capture_output=True,
        text=True,
        timeout=600,
    )


def _report(run: subprocess.CompletedProcess[str]) -> str | None:
    """What a run found (its ``FAILURES`` section), its error output, or None when it passed."""
    if run.returncode == 0:
        return None
    start = run.stdout.find(FAILURES)
    return run.stdout[start:] if start >= 0 else run.stdout[-6000:] + run.stderr


def _tool_error(run: subprocess.CompletedProcess[str]) -> bool:
    """The run stopped on an error of its own and reported no finding about the API.

    schemathesis' worker threads occasionally hit CPython 3.11's shared AST recursion
    counter (``SystemError: AST constructor recursion depth mismatch``, python/cpython
    gh-106905) while generating cases; that is reported under ``ERRORS`` or as an
    internal error, never under ``FAILURES``.
    """
    return run.returncode != 0 and FAILURES not in run.stdout


def _run_once_more_on_tool_error(
    run: Callable[[], subprocess.CompletedProcess[str]],
) -> subprocess.CompletedProcess[str]:
    first = run()
    return run() if _tool_error(first) else first


def test_a_tool_error_is_run_again_and_a_finding_is_not() -> None:
    def runs(*outcomes: tuple[int, str]) -> Callable[[], subprocess.CompletedProcess[str]]:
        queue = [subprocess.CompletedProcess([], code, out, "") for code, out in outcomes]
        return lambda: queue.pop(0)

    crash = (2, "Internal Error\nSystemError: AST constructor recursion depth mismatch")
    finding = (1, f"{FAILURES}\n1. Server error")
    assert _run_once_more_on_tool_error(runs(crash, (0, "ok"))).returncode == 0
    assert _report(_run_once_more_on_tool_error(runs(crash, crash))) is not None
    assert _report(_run_once_more_on_tool_error(runs(finding, (0, "ok")))) == finding[1]


@pytest.mark.timeout(1500)
def test_the_api_answers_what_its_schema_says(dev: Dev) -> None:
    config = dev.tmp / "schemathesis.toml"
    config.write_text(_config(_seed(dev)))
    reports = []
    # what deletes goes last, so the seeded resources serve every other operation
    for methods in (["--exclude-method", "DELETE"], ["--include-method", "DELETE"]):
        report = _report(_run_once_more_on_tool_error(partial(_st, dev, config, methods)))
        if report is not None:
            reports.append(report)
    assert not reports, (
        "schemathesis found failures:\n"
        + "\n".join(reports)
        + f"\n--- docproc dev log ({dev.log}) ---\n{dev.log.read_text()[-6000:]}"
    )
