"""Where a remote name lands: inside the sync directory, or refused. One question, every spelling."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from docproc_common.connectors.base import ConnectorOptions
from docproc_common.connectors.errors import RemoteNameRefusedError
from docproc_common.connectors.remote_names import last_component
from docproc_sync.connectors.base import BaseSyncConnector, RemoteFile, RemoteListing, write_into
from docproc_sync.connectors.landing import landing_path
from pydantic import BaseModel

HOSTILE = [
    "../../../../home/app/.ssh/authorized_keys",
    "/etc/passwd",
    "..\\..\\..\\windows\\system32\\config",
    "a/b/../../../x",
    "..%2F..%2F..%2Fetc%2Fpasswd",  # encodings are never decoded: one literal name
    "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
    "\u2025\uff0f\u2025\uff0fetc\uff0fpasswd",  # two-dot leader, fullwidth solidus
    "..\u2215..\u2215etc\u2215passwd",  # division slash
    ".\u200b./x",  # zero-width space
    "name\nwith\nnewlines",
    "x" * 400 + ".md",
]


class TestLastComponent:
    @pytest.mark.parametrize("name", ["..", ".", "/", "", "a/..", "a/.", "dir/", "\\", "../"])
    def test_a_name_that_is_no_component_is_refused(self, name: str) -> None:
        with pytest.raises(RemoteNameRefusedError):
            last_component(name)

    def test_nul_is_refused(self) -> None:
        with pytest.raises(RemoteNameRefusedError):
            last_component("a\x00b")

    def test_reduced_to_the_last_component(self) -> None:
        assert last_component("../../../../home/app/.ssh/authorized_keys") == "authorized_keys"
        assert last_component("a\\b\\c.txt") == "c.txt"
        assert last_component("plain.md") == "plain.md"

    def test_long_names_keep_their_extension_within_255_bytes(self) -> None:
        name = last_component("é" * 300 + ".md")
        assert name.endswith(".md") and len(name.encode()) <= 255


class TestLandingPath:
    @pytest.mark.parametrize("name", HOSTILE)
    def test_hostile_names_land_directly_inside(self, tmp_path: Path, name: str) -> None:
        sync_dir = tmp_path / "sync"
        sync_dir.mkdir()
        dest = landing_path(sync_dir, name)
        assert dest.parent == sync_dir.resolve()
        write_into(dest, b"data")
        assert [p.name for p in sync_dir.iterdir()] == [dest.name]
        assert sorted(p.name for p in tmp_path.iterdir()) == ["sync"]

    def test_a_symlink_already_in_the_directory_is_refused(self, tmp_path: Path) -> None:
        sync_dir = tmp_path / "sync"
        sync_dir.mkdir()
        outside = tmp_path / "authorized_keys"
        outside.write_text("original")
        (sync_dir / "authorized_keys").symlink_to(outside)
        with pytest.raises(RemoteNameRefusedError):
            landing_path(sync_dir, "../../../../home/app/.ssh/authorized_keys")
        assert outside.read_text() == "original"

    def test_a_dangling_symlink_is_refused_too(self, tmp_path: Path) -> None:
        sync_dir = tmp_path / "sync"
        sync_dir.mkdir()
        (sync_dir / "x.md").symlink_to(tmp_path / "nowhere" / "x.md")
        with pytest.raises(RemoteNameRefusedError):
            landing_path(sync_dir, "x.md")
        assert not (tmp_path / "nowhere").exists()

    def test_a_symlinked_sync_directory_is_resolved_first(self, tmp_path: Path) -> None:
        real = tmp_path / "real"
        real.mkdir()
        link = tmp_path / "link"
        link.symlink_to(real)
        assert landing_path(link, "a.md") == real / "a.md"

    def test_the_writer_never_follows_a_link_swapped_in_afterwards(self, tmp_path: Path) -> None:
        sync_dir = tmp_path / "sync"
        sync_dir.mkdir()
        dest = landing_path(sync_dir, "a.md")
        target = tmp_path / "target"
        target.write_text("keep")
        dest.symlink_to(target)
        with pytest.raises(FileExistsError):
            write_into(dest, b"x")
        assert target.read_text() == "keep"


class _Config(BaseModel):
    pass


class _Careless(BaseSyncConnector[_Config]):
    """A connector that writes wherever it is told, as a new connector might."""

    NAME = "careless"
    TITLE = "careless"
    CONFIG_MODEL = _Config

    async def list_files(self) -> RemoteListing:
        return RemoteListing([], complete=True)

    async def _fetch(self, remote: RemoteFile, dest: Path) -> None:
        dest.write_bytes(remote.key.encode())


class TestBaseDecides:
    @pytest.mark.parametrize("name", HOSTILE)
    async def test_a_connector_inherits_the_rule(self, tmp_path: Path, name: str) -> None:
        sync_dir = tmp_path / "sync"
        sync_dir.mkdir()
        connector = _Careless(_Config(), None, ConnectorOptions())
        landed = await connector.fetch(RemoteFile("x://y", name, key="bytes"), sync_dir)
        assert landed.parent == sync_dir.resolve()
        assert landed.read_text() == "bytes"
        assert os.listdir(tmp_path) == ["sync"]

    @pytest.mark.parametrize("name", ["..", ".", "/"])
    async def test_no_component_is_refused_before_fetching(self, tmp_path: Path, name: str) -> None:
        connector = _Careless(_Config(), None, ConnectorOptions())
        with pytest.raises(RemoteNameRefusedError):
            await connector.fetch(RemoteFile("x://y", name, key="bytes"), tmp_path)
        assert os.listdir(tmp_path) == []
