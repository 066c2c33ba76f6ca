"""The workspace's links on their own: who a link opens for, until when, and what a render
hands the runner (docproc_upload.downloads, docproc_upload.chat.workspace_links)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest
from docproc_common.auth import Principal
from docproc_common.errors import NotFound
from docproc_common.settings import AuthSettings
from docproc_upload.chat.attachments import FileOutcome, Mode
from docproc_upload.chat.workspace_links import (
    FILE,
    FILES_ROUTE,
    LISTING,
    LISTINGS_ROUTE,
    WorkspaceLinks,
    listed,
    open_target,
)
from docproc_upload.downloads import Link, link_key, open_link, sign_link
from pydantic import SecretStr

KEY = link_key(AuthSettings(jwt_secret=SecretStr("k" * 48)))
NOW = 1_800_000_000
ALICE = Principal("alice", "acme")


def links(caller: Principal = ALICE, expires_at: int = NOW + 900) -> WorkspaceLinks:
    return WorkspaceLinks(KEY, caller, "coder", "c-42", expires_at)


def token_of(url: str) -> str:
    return url.rsplit("/", 1)[1]


class TestOpenLink:
    def test_the_caller_that_rendered_opens_its_link(self) -> None:
        entry = links().entry("uploads/3f2a1b9c-a.csv", 10)
        target = open_target(KEY, token_of(entry.url), purpose=FILE, caller=ALICE, now=NOW)
        assert (target.agent_id, target.conversation_id, target.path) == (
            "coder",
            "c-42",
            "uploads/3f2a1b9c-a.csv",
        )
        assert target.key("workspaces/alice/coder/c-42") == (
            "workspaces/alice/coder/c-42/uploads/3f2a1b9c-a.csv"
        )

    @pytest.mark.parametrize(
        "caller",
        [
            pytest.param(Principal("bob", "acme"), id="another-person"),
            pytest.param(Principal("mallory", "globex"), id="another-organisation"),
            pytest.param(Principal("alice", "globex"), id="the-same-id-in-another-organisation"),
            pytest.param(Principal("alice", None), id="the-same-id-in-no-organisation"),
        ],
    )
    def test_anyone_else_is_told_there_is_no_file(self, caller: Principal) -> None:
        token = token_of(links().entry("uploads/a", 1).url)
        with pytest.raises(NotFound) as refused:
            open_link(KEY, token, purpose=FILE, caller=caller, now=NOW)
        assert refused.value.message == "File not found"
        assert refused.value.details == {}

    def test_an_expired_link_says_so_to_its_caller_only(self) -> None:
        token = token_of(links(expires_at=NOW).entry("uploads/a", 1).url)
        with pytest.raises(NotFound) as refused:
            open_link(KEY, token, purpose=FILE, caller=ALICE, now=NOW)
        assert refused.value.message == "File not found"
        assert refused.value.details == {
            "reason": "link_expired",
            "expired_at": datetime.fromtimestamp(NOW, UTC).isoformat(),
        }
        with pytest.raises(NotFound) as elsewhere:
            open_link(KEY, token, purpose=FILE, caller=Principal("bob", "acme"), now=NOW)
        assert elsewhere.value.details == {}
        # a second before it expires it still opens
        open_link(KEY, token, purpose=FILE, caller=ALICE, now=NOW - 1)

    def test_a_link_opens_for_its_own_purpose_only(self) -> None:
        listing = token_of(links().listing_url("uploads/3f2a1b9c-repo/"))
        assert open_target(KEY, listing, purpose=LISTING, caller=ALICE, now=NOW).path == (
            "uploads/3f2a1b9c-repo"
        )
        with pytest.raises(NotFound):
            open_link(KEY, listing, purpose=FILE, caller=ALICE, now=NOW)

    @pytest.mark.parametrize(
        "tamper",
        [
            pytest.param(lambda t: t.replace(".", ".x", 1), id="signature"),
            pytest.param(lambda t: "e" + t, id="payload"),
            pytest.param(lambda t: t.split(".")[0], id="no-signature"),
            pytest.param(lambda t: t + "é", id="not-ascii"),
            pytest.param(lambda _: "", id="empty"),
        ],
    )
    def test_a_tampered_link_is_no_file(self, tamper: object) -> None:
        token = token_of(links().entry("uploads/a", 1).url)
        with pytest.raises(NotFound) as refused:
            open_link(KEY, tamper(token), purpose=FILE, caller=ALICE, now=NOW)  # type: ignore[operator]
        assert refused.value.details == {}

    def test_another_deployment_s_key_opens_nothing(self) -> None:
        token = token_of(links().entry("uploads/a", 1).url)
        other = link_key(AuthSettings(jwt_secret=SecretStr("o" * 48)))
        with pytest.raises(NotFound):
            open_link(other, token, purpose=FILE, caller=ALICE, now=NOW)

    def test_the_link_key_is_not_the_token_key(self) -> None:
        assert KEY != ("k" * 48).encode()

    @pytest.mark.parametrize(
        "target",
        [
            ("coder", "c-42", "../other/uploads/a"),
            ("coder", "c-42", "uploads/../../x"),
            ("coder", "c-42", ".docproc/unpacked/x"),
            ("..", "c-42", "uploads/a"),
            ("coder", "c/42", "uploads/a"),
            ("coder", "c-42"),
        ],
    )
    def test_a_signed_target_outside_uploads_is_refused(self, target: tuple[str, ...]) -> None:
        token = sign_link(KEY, Link(FILE, "alice", "acme", target, NOW + 60))
        with pytest.raises(NotFound):
            open_target(KEY, token, purpose=FILE, caller=ALICE, now=NOW)


class TestWhatARenderHandsOut:
    FILE_ID = uuid.UUID("3f2a1b9c-0000-4000-8000-000000000000")

    def test_a_file_with_its_extracted_text_is_two_entries(self) -> None:
        outcome = FileOutcome(
            self.FILE_ID,
            Mode.WORKSPACE,
            "ref",
            "uploads/3f2a1b9c-q3.pdf",
            "uploads/3f2a1b9c-q3.pdf.txt",
        )
        fetch = links().fetch(outcome, 2048, "Año 2025")
        assert fetch is not None
        assert fetch.expires_at == datetime.fromtimestamp(NOW + 900, UTC)
        assert fetch.listing_url is None
        assert [(e.path, e.size) for e in fetch.entries] == [
            ("/uploads/3f2a1b9c-q3.pdf", 2048),
            ("/uploads/3f2a1b9c-q3.pdf.txt", len("Año 2025".encode())),
        ]
        assert all(e.url.startswith(FILES_ROUTE) for e in fetch.entries)

    def test_an_unpacked_archive_is_one_listing(self) -> None:
        outcome = FileOutcome(self.FILE_ID, Mode.WORKSPACE, "ref", "uploads/3f2a1b9c-repo/")
        fetch = links().fetch(outcome, 999, "repo/\nrepo/a.py")
        assert fetch is not None
        assert fetch.entries == []
        assert fetch.listing_url is not None and fetch.listing_url.startswith(LISTINGS_ROUTE)

    @pytest.mark.parametrize(
        "mode", [Mode.INLINE, Mode.INLINE_FALLBACK, Mode.NOT_OPENED, Mode.NOT_WRITTEN, Mode.SKIPPED]
    )
    def test_nothing_written_is_nothing_to_fetch(self, mode: Mode) -> None:
        assert links().fetch(FileOutcome(self.FILE_ID, mode, "text"), 1, None) is None

    def test_a_listing_names_the_folder_s_objects_each_with_a_link(self) -> None:
        root = "workspaces/alice/coder/c-42"
        objects = [
            (f"{root}/uploads/3f2a1b9c-repo/repo/a.py", 3),
            (f"{root}/uploads/3f2a1b9c-repo/repo/src/b.py", 5),
            ("workspaces/alice/coder/c-420/uploads/x", 1),  # another chat's: never listed
        ]
        entries = listed(links(), root, objects)
        assert [(e.path, e.size) for e in entries] == [
            ("/uploads/3f2a1b9c-repo/repo/a.py", 3),
            ("/uploads/3f2a1b9c-repo/repo/src/b.py", 5),
        ]
        target = open_target(KEY, token_of(entries[1].url), purpose=FILE, caller=ALICE, now=NOW)
        assert target.path == "uploads/3f2a1b9c-repo/repo/src/b.py"
