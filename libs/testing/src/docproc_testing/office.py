"""Real legacy Office files for tests, made by LibreOffice (``soffice --convert-to``)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

SOFFICE = shutil.which("soffice")


def soffice_convert(tmp_path: Path, source: Path, target: str, timeout: float = 120) -> bytes:
    """``source`` converted by LibreOffice to ``target`` (``"doc:MS Word 97"``), as bytes."""
    assert SOFFICE is not None
    subprocess.run(
        [
            SOFFICE,
            f"-env:UserInstallation={(tmp_path / 'profile').as_uri()}",
            "--headless",
            "--convert-to",
            target,
            "--outdir",
            str(tmp_path / "out"),
            str(source),
        ],
        check=True,
        capture_output=True,
        timeout=timeout,
    )
    out = tmp_path / "out"
    produced = list(out.iterdir()) if out.is_dir() else []
    assert len(produced) == 1
    return produced[0].read_bytes()
