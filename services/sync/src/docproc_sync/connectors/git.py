"""``git``: the documentation of a repository, fetched over HTTPS with the source's ``git_token``.

The repository is fetched (depth 1, one branch, no tags) into a bare cache kept
between runs of the source and never checked out: files are listed with
``git ls-tree`` and read with ``git cat-file``, so nothing in the repository
(a symlink, a hook, a ``.gitattributes`` filter) runs or resolves on this
machine. Symbolic links and submodules are skipped.

Change signal: the branch's commit sha, read with ``git ls-remote`` before any
fetch (an unchanged branch costs one round trip and no transfer), and each
file's blob id, which is its content address (an unchanged file is never read).

The token travels in an ``Authorization`` header set through git's environment,
never in the URL, the command line or the cache's config; git's own helpers and
the machine's git configuration are switched off.
"""

from __future__ import annotations

import base64
import os
import re
import subprocess
import tempfile
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from docproc_common.connectors.base import ConnectorOptions
from docproc_common.connectors.errors import ClientFailedError, ConnectorError, Subject
from docproc_common.connectors.specs.git import (
    GitConfig,
    GitSpec,
)
from docproc_common.egress.pinned import check_url, default_port
from pydantic import BaseModel, ConfigDict, Field

from docproc_sync.connectors.base import BaseSyncConnector, RemoteFile, RemoteListing
from docproc_sync.connectors.globs import Glob
from docproc_sync.connectors.landing import open_landing

#: git's fatal messages, in docproc's words (first match wins; git's own text names the URL)
GIT_FAILURES = (
    ("could not read username", "authentication refused"),  # a 401, token or none
    ("authentication failed", "authentication refused"),
    ("403", "access refused"),
    ("not found", "not found"),
    ("could not resolve host", "host not resolved"),
    ("failed to connect", "connection failed"),
    ("timed out", "timed out"),
    ("ssl", "TLS failed"),
    ("certificate", "TLS failed"),
)


#: The longest the include patterns may take over one tree: past it the run fails, saying so
#: (a huge tree, or patterns costly against it), rather than hold a worker thread.
SELECT_DEADLINE_S = 30.0


class GitFailedError(Exception):
    """git's own stderr: the cause of a ``ClientFailedError``, logged, never stored."""


def git_failure(stderr: str, returncode: int) -> str:
    """Why git failed, in words written here (``exit 128`` when none of ``GIT_FAILURES`` fits)."""
    lowered = re.sub(r"'[^']*'", "", stderr).lower()  # not the quoted URL
    for needle, reason in GIT_FAILURES:
        if needle in lowered:
            return reason
    return f"exit {returncode}"


class GitSecret(BaseModel):
    """The ``git_token`` secret's value."""

    model_config = ConfigDict(extra="ignore")

    token: str = Field(min_length=1)
    username: str = "x-access-token"


def select(
    entries: Iterable[tuple[str, str, int, str]],
    patterns: list[Glob],
    max_file_bytes: int,
    deadline_s: float = SELECT_DEADLINE_S,
) -> list[tuple[str, int, str]]:
    """(blob id, size, path) of the entries of at most ``max_file_bytes`` that a pattern takes.

    A ``ConnectorError`` once ``deadline_s`` has passed: the matching is bounded by the
    sizes (``globs``), and this bounds the whole tree's.
    """
    deadline = time.monotonic() + deadline_s
    kept: list[tuple[str, int, str]] = []
    for _mode, blob, size, path in entries:
        if time.monotonic() > deadline:
            raise ConnectorError(
                f"Matching the include patterns against the repository took more than "
                f"{deadline_s:.0f} s: narrow them"
            )
        if size <= max_file_bytes and any(p.matches(path) for p in patterns):
            kept.append((blob, size, path))
    return kept


def parse_tree(raw: bytes) -> list[tuple[str, str, int, str]]:
    """``git ls-tree -r -l -z`` output as (mode, blob id, size, path) of regular files only."""
    entries: list[tuple[str, str, int, str]] = []
    for record in raw.split(b"\0"):
        if not record:
            continue
        meta, _, path = record.partition(b"\t")
        mode, kind, obj, size = meta.decode().split()
        if kind != "blob" or mode not in {"100644", "100755"}:
            continue  # 120000 symlink, 160000 submodule
        entries.append((mode, obj, int(size), path.decode("utf-8", errors="surrogateescape")))
    return entries


class GitConnector(GitSpec, BaseSyncConnector[GitConfig]):
    def __init__(
        self, config: GitConfig, secret: Mapping[str, Any] | None, options: ConnectorOptions
    ) -> None:
        super().__init__(config, secret, options)
        self._token: GitSecret | None = None
        if self.secret:
            try:
                self._token = GitSecret.model_validate(dict(self.secret))
            except ValueError as exc:
                raise ConnectorError("The source's git_token secret has no token") from exc
        self._resolve: str | None = None  # host:port:address for http.curloptResolve
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        if options.cache_dir is not None:
            base = Path(options.cache_dir)
        else:
            self._tmp = tempfile.TemporaryDirectory(prefix="docproc-git-")
            base = Path(self._tmp.name)
        base.mkdir(parents=True, exist_ok=True)
        self.repo = base / "repo.git"
        self.home = base / "home"
        self.home.mkdir(exist_ok=True)
        self.patterns = [Glob.compile(p) for p in config.include]

    def _env(self) -> dict[str, str]:
        settings = [
            ("http.followRedirects", "false"),
            ("credential.helper", ""),
            ("protocol.file.allow", "never"),
            ("core.hooksPath", os.devnull),
        ]
        if self._resolve is not None:
            settings.append(("http.curloptResolve", self._resolve))
        if self._token is not None:
            pair = f"{self._token.username}:{self._token.token}".encode()
            header = f"Authorization: Basic {base64.b64encode(pair).decode()}"
            settings.append(("http.extraHeader", header))
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "LC_ALL": "C",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_ALLOW_PROTOCOL": "https:http" if self.options.allow_plain_http else "https",
            "GIT_CONFIG_COUNT": str(len(settings)),
        }
        for n, (key, value) in enumerate(settings):
            env[f"GIT_CONFIG_KEY_{n}"] = key
            env[f"GIT_CONFIG_VALUE_{n}"] = value
        return env

    def _git(self, *args: str, stdout: int | None = None, subject: Subject = "source") -> bytes:
        """Blocking: run git. A failure is a ``ClientFailedError`` naming the command and
        ``git_failure``'s reason; git's stderr (which quotes the URL, query string and all)
        is only its cause, for the log."""
        command = args[2] if args[0] == "-C" else args[0]
        try:
            done = subprocess.run(
                ["git", *args],
                env=self._env(),
                stdin=subprocess.DEVNULL,
                stdout=stdout if stdout is not None else subprocess.PIPE,
                stderr=subprocess.PIPE,
                timeout=max(self.options.timeout_s, 60.0),
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise ClientFailedError(f"git {command}: timed out", subject=subject) from exc
        if done.returncode != 0:
            stderr = done.stderr.decode(errors="replace").strip()
            kind = f"git {command}: {git_failure(stderr, done.returncode)}"
            raise ClientFailedError(kind, subject=subject) from GitFailedError(stderr[-2000:])
        return done.stdout or b""

    def _list(self) -> RemoteListing:
        url, branch = self.config.repo_url, self.config.branch
        remote = self._git("ls-remote", "--", url, f"refs/heads/{branch}").split()
        if not remote:
            raise ConnectorError(f"The branch {branch!r} does not exist in the repository")
        if not (self.repo / "HEAD").exists():
            self._git("init", "--bare", "--quiet", str(self.repo))
        commit = remote[0].decode()
        has = subprocess.run(
            ["git", "-C", str(self.repo), "cat-file", "-e", f"{commit}^{{commit}}"],
            env=self._env(),
            capture_output=True,
            check=False,
        )
        if has.returncode != 0:
            self._git(
                "-C", str(self.repo), "fetch", "--quiet", "--depth=1", "--no-tags", "--",
                url, f"+refs/heads/{branch}:refs/heads/synced",
            )  # fmt: skip
            commit = self._git("-C", str(self.repo), "rev-parse", "refs/heads/synced").decode()
            commit = commit.strip()
        tree = self._git("-C", str(self.repo), "ls-tree", "-r", "-l", "-z", "--full-tree", commit)
        files = [
            RemoteFile(
                address=f"git+{url}#{branch}:{path}", name=path, size=size, version=blob, key=blob
            )
            for blob, size, path in select(
                parse_tree(tree), self.patterns, self.config.max_file_bytes
            )
        ]
        return RemoteListing(files, complete=True, signal=commit)

    async def list_files(self) -> RemoteListing:
        checked = await check_url(
            self.config.repo_url, allow_private=self.options.allow_private_networks
        )
        if checked:  # git connects to the address just checked, not to a second DNS answer
            host = urlsplit(self.config.repo_url).hostname or ""
            address = f"[{checked[0]}]" if ":" in checked[0] else checked[0]
            self._resolve = f"{host}:{default_port(self.config.repo_url)}:{address}"
        return await self.blocking(self._list)

    def _cat(self, blob: str, dest: Path) -> None:
        if not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", blob):
            raise ConnectorError("Not a blob id")
        fd = open_landing(dest)
        try:
            self._git("-C", str(self.repo), "cat-file", "blob", blob, stdout=fd, subject="document")
        finally:
            os.close(fd)

    async def _fetch(self, remote: RemoteFile, dest: Path) -> None:
        await self.blocking(self._cat, remote.key, dest)

    async def aclose(self) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()
