"""Legacy Word ``.doc`` via a managed LibreOffice subprocess.

``soffice --headless --convert-to txt`` runs with a private, throwaway profile, at most
two at a time, in its own process group that is killed on timeout. Without LibreOffice
installed the text is reported as unavailable; this module never raises for that.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import threading
from pathlib import Path

from .budget import TextBudget
from .text import decode_into, sniff_encoding
from .types import ParsedText, ParseLimits

UNAVAILABLE_NOTE = "LibreOffice is not installed; the text of .doc files is unavailable"
MAX_CONCURRENT_CONVERSIONS = 2
_SLOTS = threading.BoundedSemaphore(MAX_CONCURRENT_CONVERSIONS)


def soffice_path() -> str | None:
    return shutil.which("soffice") or shutil.which("libreoffice")


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def convert_to_text(data: bytes, suffix: str, timeout_s: float) -> tuple[bytes | None, str | None]:
    """Run one conversion; returns (text bytes, None) or (None, note)."""
    executable = soffice_path()
    if executable is None:
        return None, UNAVAILABLE_NOTE
    if not _SLOTS.acquire(timeout=timeout_s):
        return None, "LibreOffice is busy; the text of this file is unavailable, try again"
    try:
        with tempfile.TemporaryDirectory(prefix="docproc-soffice-") as tmp:
            work = Path(tmp)
            source = work / f"input{suffix}"
            source.write_bytes(data)
            command = [
                executable,
                f"-env:UserInstallation={(work / 'profile').as_uri()}",
                "--headless",
                "--norestore",
                "--nologo",
                "--nolockcheck",
                "--convert-to",
                "txt:Text (encoded):UTF8",
                "--outdir",
                str(work / "out"),
                str(source),
            ]
            env = {**os.environ, "HOME": str(work)}
            process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                env=env,
                cwd=work,
            )
            try:
                process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                _kill_group(process)
                process.wait()
                return None, f"LibreOffice did not finish within {timeout_s:g} s; text unavailable"
            finally:
                _kill_group(process)
            result = work / "out" / "input.txt"
            if not result.is_file():
                return None, "LibreOffice could not convert the document; text unavailable"
            return result.read_bytes(), None
    finally:
        _SLOTS.release()


def parse_doc(data: bytes, limits: ParseLimits) -> ParsedText:
    text, note = convert_to_text(data, ".doc", limits.soffice_timeout_s)
    if text is None:
        return ParsedText(text=None, note=note)
    codec, skip = sniff_encoding(text, is_xml=False)
    budget = TextBudget(limits.max_chars)
    decode_into(text, budget, codec, skip)
    return budget.result()
