"""Git repository: the configuration the API checks (the connector runs in ``docproc_sync.connectors.git``)."""

from __future__ import annotations

import re
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

from docproc_common.connectors.base import (
    ConfigRefusal,
    ConnectorOptions,
    ConnectorSpec,
)
from docproc_common.egress.rules import literal_refusal

BRANCH = re.compile(r"^(?!-)(?!.*\.\.)(?!.*//)(?!.*\.lock$)[A-Za-z0-9._/-]{1,200}(?<!/)$")


DEFAULT_INCLUDE = ["**/*.md", "**/*.txt"]

#: At most this many include patterns, each at most ``MAX_PATTERN_CHARS`` long: every file of
#: the tree is matched against each, so they bound a listing's work with the tree's size.
MAX_PATTERNS = 20
MAX_PATTERN_CHARS = 200


def pattern_refusal(pattern: str) -> str | None:
    """Why ``pattern`` is not an include glob the connector matches, or None.

    ``**`` stands for whole folders (``**/*.md``, ``docs/**``, ``a/**/b``): inside a segment
    (``**.md``, ``'**a' * 10``) it would cross folders within one name, which only a
    backtracking search can follow (the matcher: ``docproc_sync.connectors.globs``).
    """
    segments = pattern.split("/")
    if pattern.startswith("/") or ".." in segments:
        return f"The pattern {pattern!r} is not a relative glob"
    if any("**" in s and s != "**" for s in segments):
        return (
            f"In the pattern {pattern!r}, ** stands for whole folders only "
            "(**/*.md, docs/**, a/**/b)"
        )
    return None


class GitConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", title="Git repository")

    repo_url: str = Field(max_length=1000, description="The repository's https:// clone URL")
    branch: str = Field(default="main", max_length=200)
    include: list[Annotated[str, Field(min_length=1, max_length=MAX_PATTERN_CHARS)]] = Field(
        default_factory=lambda: list(DEFAULT_INCLUDE),
        min_length=1,
        max_length=MAX_PATTERNS,
        description="Glob patterns of the files to sync (**/ any folders, * and ? within a name)",
    )
    max_file_bytes: int = Field(default=20 * 1024 * 1024, ge=1, le=200 * 1024 * 1024)


class GitSpec(ConnectorSpec):
    NAME = "git"
    TITLE = "Git repository"
    DESCRIPTION = "Documentation files of one branch of a repository, over HTTPS"
    CONFIG_MODEL = GitConfig
    SECRET_KIND = "git_token"
    DESTINATION_FIELDS = frozenset({"repo_url"})
    SECRET_REQUIRED = False  # a public repository needs none
    CHANGE_SIGNAL = "commit sha, then blob id"

    @classmethod
    def validate_config(cls, config: object, options: ConnectorOptions) -> ConfigRefusal | None:
        assert isinstance(config, GitConfig)
        parts = urlsplit(config.repo_url)
        schemes = {"https", "http"} if options.allow_plain_http else {"https"}
        if parts.scheme not in schemes or not parts.hostname:
            return ConfigRefusal("The repository URL must be an https:// URL", "repo_url")
        if parts.username or parts.password:
            return ConfigRefusal(
                "a credential does not go in a source's configuration: "
                "put the token in the vault as a git_token secret",
                "repo_url",
            )
        if parts.query or parts.fragment:
            return ConfigRefusal("The repository URL has no query or fragment", "repo_url")
        reason = literal_refusal(config.repo_url)
        if reason and not options.allow_private_networks:
            return ConfigRefusal(f"The repository URL is refused: {reason}", "repo_url")
        if not BRANCH.fullmatch(config.branch):
            return ConfigRefusal("Not a branch name", "branch")
        for pattern in config.include:
            reason = pattern_refusal(pattern)
            if reason is not None:
                return ConfigRefusal(reason, "include")
        return None
