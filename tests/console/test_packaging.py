"""The built console ships inside docproc-upload's wheel, so the upload image (which
installs the wheel, not the checkout) serves it as ``docproc dev`` does."""

from __future__ import annotations

import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
from docproc_testing.infra import find_repo_root
from docproc_upload.console import DIST


def test_the_upload_wheel_carries_the_built_console(tmp_path: Path) -> None:
    if not (DIST / "index.html").is_file():
        pytest.fail("the console is not built: run `make console` first", pytrace=False)
    uv = shutil.which("uv")
    assert uv, "uv is not on PATH (make ensure-uv)"
    subprocess.run(
        [uv, "build", "-q", "--wheel", "--package", "docproc-upload", "-o", str(tmp_path)],
        cwd=find_repo_root(),
        check=True,
        timeout=300,
    )
    (wheel,) = tmp_path.glob("docproc_upload-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    built = {
        f"docproc_upload/console_dist/{p.relative_to(DIST).as_posix()}"
        for p in DIST.rglob("*")
        if p.is_file()
    }
    assert "docproc_upload/console_dist/index.html" in built
    assert built <= names, sorted(built - names)
