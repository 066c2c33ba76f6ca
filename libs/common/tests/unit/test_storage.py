from pathlib import Path

import pytest
from docproc_common.errors import InvalidInput
from docproc_common.storage import LocalStorage, new_storage_path, safe_filename


class TestSafeFilename:
    @pytest.mark.parametrize(
        ("raw", "expected"),
        [
            ("../../etc/passwd", "etc_passwd"),
            ("report.csv", "report.csv"),
            ("a\\b\\c.txt", "a_b_c.txt"),
            ("nul\x00byte.txt", "nulbyte.txt"),
            ("evil\u202etxt.exe", "eviltxt.exe"),
            ("CON", "_CON"),
            ("con.txt", "_con.txt"),
            ("..", "file"),
            ("", "file"),
        ],
    )
    def test_derives_a_label(self, raw: str, expected: str) -> None:
        assert safe_filename(raw) == expected

    def test_long_names_are_bounded_in_bytes(self) -> None:
        assert len(safe_filename("é" * 300).encode()) <= 150

    def test_two_uploads_of_one_name_never_collide(self) -> None:
        assert new_storage_path("u1", "report.csv") != new_storage_path("u1", "report.csv")
        assert new_storage_path("u1", "../x").startswith("u1/")


class TestLocalStorage:
    def test_round_trip_and_delete_prefix(self, tmp_path: Path) -> None:
        storage = LocalStorage(tmp_path)
        storage.put("rag/c/a.txt", b"a")
        storage.put("rag/c/sub/b.txt", b"b")
        assert storage.get("rag/c/a.txt") == b"a"
        assert storage.exists("rag/c/sub/b.txt")
        assert storage.delete_prefix("rag/c") == 2
        assert not storage.exists("rag/c/a.txt")

    @pytest.mark.parametrize("key", ["../x", "/etc/passwd", "a/../../x", "a//b"])
    def test_refuses_keys_leaving_the_root(self, tmp_path: Path, key: str) -> None:
        with pytest.raises(InvalidInput):
            LocalStorage(tmp_path / "root").put(key, b"x")
