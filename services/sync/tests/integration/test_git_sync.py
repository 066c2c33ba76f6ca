"""The git connector against a local bare repository served over HTTP by ``git http-backend``."""

from __future__ import annotations

import base64
import os
import subprocess
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from docproc_common.connectors.base import ConnectorOptions
from docproc_sync.connectors.base import RemoteFile
from docproc_sync.connectors.git import GitConfig, GitConnector
from docproc_sync.testing import SyncBed
from docproc_testing.servers import KeepAliveHandler, ThreadedServer

from .conftest import RebindingDns, checked_options

pytestmark = pytest.mark.integration

TOKEN = "ghp_test_token_123"
HOSTILE = "..\\..\\..\\home\\app\\.ssh\\authorized_keys.md"


def git(cwd: Path, *args: str) -> str:
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(cwd),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


class GitServer(ThreadedServer):
    """``git http-backend`` behind a tiny CGI bridge; optionally demands the token (Basic auth)."""

    def __init__(self, root: Path, token: str | None) -> None:
        self.root = root
        self.token = token
        self.requests: list[tuple[str, str, str | None]] = []
        self.hosts: set[str | None] = set()
        super().__init__(self._handler())

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        bridge = self

        class Handler(KeepAliveHandler):
            def _body(self) -> bytes:
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    out = b""
                    while True:
                        size = int(self.rfile.readline().strip(), 16)
                        if size == 0:
                            self.rfile.readline()
                            return out
                        out += self.rfile.read(size)
                        self.rfile.readline()
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))

            def _serve(self) -> None:
                auth = self.headers.get("Authorization")
                path, _, query = self.path.partition("?")
                bridge.requests.append((self.command, path, auth))
                bridge.hosts.add(self.headers.get("Host"))
                body = self._body() if self.command == "POST" else b""
                expected = (
                    "Basic " + base64.b64encode(f"x-access-token:{bridge.token}".encode()).decode()
                )
                if bridge.token and auth != expected:
                    self.send_response(401)
                    self.send_header("WWW-Authenticate", 'Basic realm="git"')
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                env = {
                    "PATH": os.environ["PATH"],
                    "GIT_PROJECT_ROOT": str(bridge.root),
                    "GIT_HTTP_EXPORT_ALL": "1",
                    "PATH_INFO": unquote(path),
                    "QUERY_STRING": query,
                    "REQUEST_METHOD": self.command,
                    "CONTENT_TYPE": self.headers.get("Content-Type", ""),
                    "CONTENT_LENGTH": str(len(body)),
                    "REMOTE_ADDR": "127.0.0.1",
                    "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
                    "HTTP_GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
                }
                out = subprocess.run(
                    ["git", "http-backend"], input=body, env=env, capture_output=True, check=False
                ).stdout
                head, _, payload = out.partition(b"\r\n\r\n")
                if not _:
                    head, _, payload = out.partition(b"\n\n")
                status = 200
                headers: list[tuple[str, str]] = []
                for line in head.decode().splitlines():
                    key, _, value = line.partition(":")
                    if key.lower() == "status":
                        status = int(value.split()[0])
                    elif key:
                        headers.append((key, value.strip()))
                self.send_response(status)
                for key, value in headers:
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = _serve  # noqa: N815
            do_POST = _serve  # noqa: N815

        return Handler


class Repo:
    def __init__(self, tmp: Path) -> None:
        self.work = tmp / "work"
        self.work.mkdir()
        self.root = tmp / "served"
        self.root.mkdir()
        git(self.work, "init", "-q", "-b", "main")
        self.write(
            {
                "README.md": "# Project\n\nThe project handbook.",
                "docs/intro.md": "# Intro\n\nPenguins.",
                "docs/deep/nested.txt": "nested notes",
                "src/code.py": "print('not docs')",
                HOSTILE: "# keys\n\nssh-rsa AAAA attacker",
            }
        )
        (self.work / "docs" / "link.md").symlink_to("/etc/passwd")
        self.commit("first")
        git(tmp, "clone", "-q", "--bare", str(self.work), str(self.root / "repo.git"))
        git(self.work, "remote", "add", "origin", str(self.root / "repo.git"))

    def write(self, files: dict[str, str]) -> None:
        for name, text in files.items():
            path = self.work / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)

    def commit(self, message: str) -> None:
        git(self.work, "add", "-A")
        git(self.work, "commit", "-q", "-m", message)

    def push(self) -> None:
        git(self.work, "push", "-q", "origin", "main")


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return Repo(tmp_path)


@pytest.fixture
def served(repo: Repo) -> Iterator[GitServer]:
    with GitServer(repo.root, TOKEN) as server:
        yield server


async def git_source(bed: SyncBed, server: GitServer, *, token: bool = True) -> tuple[Any, Any]:
    kb = await bed.kb()
    secret = await bed.secret("git_token", {"token": TOKEN}) if token else None
    config = {"repo_url": f"{server.url}/repo.git", "branch": "main"}
    return kb, await bed.source(kb, "git", config, secret_id=secret)


class TestGit:
    async def test_documentation_files_with_the_token(
        self, bed: SyncBed, served: GitServer, repo: Repo
    ) -> None:
        kb, src = await git_source(bed, served)
        log = await bed.run(src.id)
        assert log.status == "done", log.error_message
        names = sorted(d.filename for d in await bed.documents(kb.id))
        assert names == ["README.md", "authorized_keys.md", "intro.md", "nested.txt"]
        paths = {d.source_path for d in await bed.documents(kb.id)}
        assert f"git+{served.url}/repo.git#main:docs/intro.md" in paths
        assert any(auth for _, _, auth in served.requests)
        cache = bed.settings.state_dir / "sources" / src.id.hex / "repo.git"
        assert TOKEN not in (cache / "config").read_text()

    async def test_commit_sha_then_blob_id_decide_what_is_read(
        self, bed: SyncBed, served: GitServer, repo: Repo
    ) -> None:
        kb, src = await git_source(bed, served)
        await bed.run(src.id)
        await bed.finish_pipeline(kb.id)
        served.requests.clear()
        same = await bed.run(src.id)
        assert (same.skipped, same.bytes_fetched) == (4, 0)
        # ls-remote only: one GET of info/refs (+ one ls-refs POST under protocol v2), no fetch
        posts = [r for r in served.requests if r[0] == "POST"]
        assert len(posts) <= 1 and len(served.requests) <= 2, served.requests

        repo.write({"docs/intro.md": "# Intro\n\nPenguins and capybaras."})
        (repo.work / "docs" / "deep" / "nested.txt").unlink()
        repo.commit("second")
        repo.push()
        changed = await bed.run(src.id)
        assert (changed.updated, changed.skipped, changed.deleted) == (1, 2, 1)
        assert changed.bytes_fetched == len(b"# Intro\n\nPenguins and capybaras.")

    async def test_without_the_token_the_listing_fails(
        self, bed: SyncBed, served: GitServer
    ) -> None:
        kb, src = await git_source(bed, served, token=False)
        log = await bed.run(src.id)
        assert log.status == "error"
        assert "(git ls-remote: authentication refused)" in (log.error_message or "")
        assert await bed.documents(kb.id) == []

    async def test_hostile_path_lands_inside(
        self, bed: SyncBed, served: GitServer, tmp_path: Path
    ) -> None:
        connector = GitConnector(
            GitConfig(repo_url=f"{served.url}/repo.git", include=["**"]),
            {"token": TOKEN},
            ConnectorOptions.of(bed.settings, cache_dir=tmp_path / "cache"),
        )
        listing = await connector.list_files()
        names = {f.name for f in listing.files}
        assert HOSTILE in names and "docs/link.md" not in names, "symlinks are skipped"
        remote: RemoteFile = next(f for f in listing.files if f.name == HOSTILE)
        sync_dir = tmp_path / "sync"
        sync_dir.mkdir()
        landed = await connector.fetch(remote, sync_dir)
        assert landed == sync_dir.resolve() / "authorized_keys.md"
        assert b"attacker" in landed.read_bytes()
        assert listing.signal and len(listing.signal) == 40
        await connector.aclose()


async def test_git_connects_to_the_checked_address_of_a_rebinding_name(
    served: GitServer, rebinding_dns: RebindingDns, tmp_path: Path
) -> None:
    port = served.server.server_address[1]
    connector = GitConnector(
        GitConfig(repo_url=f"http://git.rebind.test:{port}/repo.git"),
        {"token": TOKEN},
        checked_options(tmp_path / "cache"),
    )
    listing = await connector.list_files()  # ls-remote and fetch: the name has no real DNS answer
    await connector.aclose()
    assert sorted(f.name for f in listing.files) == [
        "..\\..\\..\\home\\app\\.ssh\\authorized_keys.md",  # HOSTILE: lands inside
        "README.md",
        "docs/deep/nested.txt",
        "docs/intro.md",
    ]
    assert rebinding_dns.lookups == ["git.rebind.test"]
    assert served.hosts == {f"git.rebind.test:{port}"}
