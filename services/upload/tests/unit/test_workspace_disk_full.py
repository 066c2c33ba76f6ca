"""A chat workspace on a local store whose disk refuses the write mid-file (issue #14, F12):
"full" (the attachment falls back inline), and no partial file is left."""

from __future__ import annotations

from pathlib import Path

import pytest
from docproc_common.blocking import BlockingPool
from docproc_common.storage import AsyncStorage, LocalStorage
from docproc_testing.disk import file_size_limit
from docproc_upload.chat.attachments import StorageWorkspace, WorkspaceFull


async def test_a_full_disk_under_a_workspace_is_full_and_leaves_nothing(tmp_path: Path) -> None:
    pool = BlockingPool(1, name="test-io")
    try:
        workspace = StorageWorkspace(AsyncStorage(LocalStorage(tmp_path), pool), "w/u/a/c", 1 << 20)
        with file_size_limit(4096), pytest.raises(WorkspaceFull):
            await workspace.write("uploads/big.bin", b"y" * 64 * 1024)
    finally:
        pool.shutdown()
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []
