"""``docproc-sync rag-sync-gdrive``: what it refuses before it reads the settings or calls
Drive (the import itself: tests/tenancy/test_operator_gdrive.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from docproc_sync import operator_import


def test_the_key_file_is_required_and_must_be_a_json_object(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv(operator_import.KEY_FILE, raising=False)
    assert operator_import.main(["1AbC"]) == 2
    assert operator_import.KEY_FILE in capsys.readouterr().out
    key = tmp_path / "key.json"
    key.write_text("not json")
    assert operator_import.main(["1AbC", "--credentials-file", str(key)]) == 2
    assert "no readable JSON key file" in capsys.readouterr().out
    key.write_text("[]")
    monkeypatch.setenv(operator_import.KEY_FILE, str(key))
    assert operator_import.main(["1AbC"]) == 2
    assert "no service-account key file" in capsys.readouterr().out
