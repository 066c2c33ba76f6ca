"""The ``local`` connector: a server directory, symbolic links never followed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from docproc_sync.testing import SyncBed

pytestmark = pytest.mark.integration


async def test_directory_sync_skips_links_and_deletes_what_is_gone(
    bed: SyncBed, tmp_path: Path
) -> None:
    root = tmp_path / "share"
    (root / "a").mkdir(parents=True)
    (root / "b").mkdir()
    (root / "a" / "readme.md").write_text("alpha")
    (root / "b" / "readme.md").write_text("bravo")
    secret = tmp_path / "secret.md"
    secret.write_text("outside the share")
    (root / "link.md").symlink_to(secret)
    (root / "linkdir").symlink_to(tmp_path)
    kb = await bed.kb(scope="app", organization_id=None)
    src = await bed.source(kb, "local", {"path": str(root)})
    log = await bed.run(src.id)
    assert (log.status, log.total_files, log.ingested) == ("done", 2, 2)
    docs = await bed.documents(kb.id)
    assert sorted(d.source_path or "" for d in docs) == [
        str(root / "a" / "readme.md"),
        str(root / "b" / "readme.md"),
    ]
    await bed.finish_pipeline(kb.id)
    assert (await bed.run(src.id)).skipped == 2
    os.remove(root / "a" / "readme.md")
    gone = await bed.run(src.id)
    assert gone.deleted == 1
    assert [d.source_path for d in await bed.documents(kb.id)] == [str(root / "b" / "readme.md")]


async def test_a_missing_directory_is_an_error_not_a_deletion(bed: SyncBed, tmp_path: Path) -> None:
    root = tmp_path / "share"
    root.mkdir()
    (root / "x.md").write_text("x")
    kb = await bed.kb(scope="app", organization_id=None)
    src = await bed.source(kb, "local", {"path": str(root)})
    await bed.run(src.id)
    await bed.finish_pipeline(kb.id)
    (root / "x.md").unlink()
    root.rmdir()
    log = await bed.run(src.id)
    assert log.status == "error"
    assert len(await bed.documents(kb.id)) == 1
