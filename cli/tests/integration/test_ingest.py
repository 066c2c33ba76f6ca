"""``docproc ingest`` finishes a folder larger than the intake bound, and a second run on
the same folder uploads nothing.

``docproc dev`` as an OS process with a parse-queue bound of 2, a ``Retry-After`` of 1 s
and no sampling interval (every upload counts the queue), and the real CLI as another:
8 files are more than the bound takes at once, so the intake answers 503 on the way (the
server's own rejection counter says how often), and the command still ends with all 8
indexed and exit status 0.
"""

from __future__ import annotations

import re
import subprocess
import sys
import uuid
from pathlib import Path

import httpx
import pytest
from docproc_common.auth import EDIT, VIEW, mint_token
from docproc_testing.auth import DEV_AUTH
from docproc_testing.dev import Dev, running_dev

pytestmark = pytest.mark.integration

BOUND = 2
FILES = 8
DOCPROC = Path(sys.executable).parent / "docproc"


def ingest(dev: Dev, folder: Path, collection: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [DOCPROC, "ingest", str(folder), "--collection", collection, "--url", dev.url],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "ENV": "dev", "COLUMNS": "200"},
    )


def busy_refusals(dev: Dev) -> float:
    metrics = httpx.get(f"{dev.url}/metrics", timeout=30).text
    found = re.search(
        r'^docproc_upload_rejections_total\{rule="busy_parse"\} (\S+)$', metrics, re.M
    )
    return float(found.group(1)) if found else 0.0


def test_ingest_waits_out_a_busy_intake_and_a_second_run_skips_what_is_there(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    for n in range(FILES):
        (folder / f"note-{n}.txt").write_text(f"Note {n}: sea otter number {n} holds hands.\n")
    bound = {
        "LIMITS__INTAKE_MAX_PARSE_QUEUE": str(BOUND),
        "LIMITS__INTAKE_RETRY_AFTER_S": "1",
        "LIMITS__INTAKE_SAMPLE_S": "0",
    }
    collection = f"ingest_{uuid.uuid4().hex[:8]}"
    (tmp_path / "dev").mkdir()
    with running_dev(tmp_path / "dev", env=bound) as dev:
        first = ingest(dev, folder, collection)
        assert first.returncode == 0, first.stdout + first.stderr
        assert f"{FILES} uploaded, 0 already present" in first.stdout, first.stdout
        assert f"{FILES} indexed, 0 failed" in first.stdout, first.stdout
        assert busy_refusals(dev) > 0  # the bound was met, and waited out

        second = ingest(dev, folder, collection)
        assert second.returncode == 0, second.stdout + second.stderr
        assert f"0 uploaded, {FILES} already present" in second.stdout, second.stdout

        token = mint_token(DEV_AUTH, user_id="operator", permissions=[VIEW, EDIT], app_admin=True)
        with httpx.Client(
            base_url=f"{dev.url}/api/v1", headers={"Authorization": f"Bearer {token}"}
        ) as api:
            (kb,) = [k for k in api.get("/kb").json() if k["collection_name"] == collection]
            listing = api.get(f"/kb/{kb['id']}/documents", params={"limit": 50}).json()
    assert listing["total"] == FILES
    assert sorted(d["filename"] for d in listing["items"]) == sorted(
        p.name for p in folder.iterdir()
    )
    assert {d["status"] for d in listing["items"]} == {"done"}
