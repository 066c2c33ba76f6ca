from pathlib import Path

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError
from docproc_common.errors import InvalidInput, RetryableError
from docproc_common.settings import StorageSettings
from docproc_common.storage import (
    LocalStorage,
    S3Storage,
    StorageFull,
    StorageUnavailable,
    new_storage_path,
    safe_filename,
)
from docproc_testing.disk import file_size_limit


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

    def test_list_prefix_names_the_folder_s_files_only(self, tmp_path: Path) -> None:
        storage = LocalStorage(tmp_path)
        storage.put("w/uploads/ab-repo/src/app.py", b"print()")
        storage.put("w/uploads/ab-repo/README.md", b"#")
        storage.put("w/uploads/ab-repo.txt", b"not in the folder")
        assert storage.list_prefix("w/uploads/ab-repo/") == [
            ("w/uploads/ab-repo/README.md", 1),
            ("w/uploads/ab-repo/src/app.py", 7),
        ]
        assert storage.list_prefix("w/uploads/none") == []

    @pytest.mark.parametrize("key", ["../x", "/etc/passwd", "a/../../x", "a//b"])
    def test_refuses_keys_leaving_the_root(self, tmp_path: Path, key: str) -> None:
        with pytest.raises(InvalidInput):
            LocalStorage(tmp_path / "root").put(key, b"x")


class TestStoreFaults:
    """F12 (issue #14): a disk that refuses the write mid-file leaves no partial file."""

    def test_a_write_past_the_file_size_limit_leaves_nothing(self, tmp_path: Path) -> None:
        storage = LocalStorage(tmp_path)
        storage.put("rag/c/small.txt", b"x" * 100)
        with file_size_limit(4096), pytest.raises(StorageFull) as refused:
            storage.put("rag/c/big.bin", b"y" * 64 * 1024)
        assert refused.value.no_room
        assert refused.value.status_code == 507
        assert isinstance(refused.value, RetryableError)  # a pipeline stage tries it again
        assert sorted(p.name for p in (tmp_path / "rag" / "c").iterdir()) == ["small.txt"]

    @pytest.mark.parametrize(
        ("status", "code", "unavailable"),
        [
            (503, "SlowDown", True),
            (500, "InternalError", True),
            (400, "RequestTimeout", True),
            (403, "AccessDenied", False),
        ],
    )
    def test_s3_errors_that_pass_are_unavailable(
        self, status: int, code: str, unavailable: bool
    ) -> None:
        error = ClientError(
            {"Error": {"Code": code}, "ResponseMetadata": {"HTTPStatusCode": status}},
            "PutObject",
        )
        storage = S3Storage(
            StorageSettings(backend="s3", s3_bucket="b"),
            client=_Raising(error),  # type: ignore[arg-type]
        )
        with pytest.raises(StorageUnavailable if unavailable else ClientError):
            storage.put("rag/c/a.txt", b"a")

    def test_an_unreachable_s3_endpoint_is_unavailable(self) -> None:
        error = EndpointConnectionError(endpoint_url="http://127.0.0.1:9")
        storage = S3Storage(StorageSettings(backend="s3", s3_bucket="b"), client=_Raising(error))  # type: ignore[arg-type]
        with pytest.raises(StorageUnavailable):
            storage.get("rag/c/a.txt")


class _Raising:
    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    def put_object(self, **_: object) -> None:
        raise self.exc

    def get_object(self, **_: object) -> None:
        raise self.exc
