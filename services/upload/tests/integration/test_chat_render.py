"""POST /api/v1/files/render and GET /api/v1/messages/{id}/attachments: routing into the agent.

The agent without a workspace gets inline parts; the agent with one gets files under
``uploads/`` of its workspace (a prefix of the file store) and references. Both file
stores (local and S3 via moto).
"""

from __future__ import annotations

import asyncio
import base64
import os
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import chat_inputs as gen
import pytest
from chat_support import ChatApi, LocalApi, auth, hooked
from docproc_common.auth import Principal
from docproc_testing.disk import file_size_limit
from docproc_upload.chat.attachments import human_size
from docproc_upload.chat.workspace_links import WorkspaceLinks
from docproc_upload.downloads import link_key

pytestmark = pytest.mark.integration

NO_WORKSPACE: dict[str, Any] = {
    "has_workspace": False,
    "agent_id": "helper",
    "conversation_id": "c1",
}


def workspace_agent(conversation: str | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "has_workspace": True,
        "agent_id": "coder",
        "conversation_id": conversation or uuid.uuid4().hex[:12],
        **extra,
    }


async def upload(api: ChatApi, user: str, name: str, data: bytes, mime: str) -> dict[str, Any]:
    response = await api.upload(user, name, data, mime)
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


async def render(api: ChatApi, user: str, ids: list[str], agent: dict[str, Any]) -> dict[str, Any]:
    response = await api.client.post(
        "/api/v1/files/render", json={"file_ids": ids, "agent": agent}, headers=auth(user)
    )
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def texts(rendered: dict[str, Any]) -> list[str]:
    return [p["text"] for p in rendered["parts"] if p["type"] == "text"]


def binaries(rendered: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in rendered["parts"] if p["type"] == "binary"]


# --- without a workspace ------------------------------------------------------------------


async def test_no_workspace_pastes_text_and_sends_images_as_binary(api: ChatApi, user: str) -> None:
    csv = await upload(api, user, "sales.csv", b"month,total\njan,10\nfeb,12\n", "text/csv")
    pdf = await upload(api, user, "q3.pdf", gen.make_pdf(["Revenue grew"]), "application/pdf")
    png_bytes = gen.make_image("PNG")
    png = await upload(api, user, "chart.png", png_bytes, "image/png")
    out = await render(api, user, [csv["id"], pdf["id"], png["id"]], NO_WORKSPACE)

    first, second, third = texts(out)
    assert (
        first
        == f"Attached file: sales.csv ({csv['size']} bytes, text)\nmonth,total\njan,10\nfeb,12\n"
    )
    assert second.startswith("Attached file: q3.pdf (") and "Revenue grew" in second
    assert third.startswith("Attached file: chart.png (")
    (image,) = binaries(out)
    assert image["media_type"] == "image/png" and base64.b64decode(image["data"]) == png_bytes
    assert [f["mode"] for f in out["files"]] == ["inline", "inline", "inline"]
    assert out["notices"] == []
    assert api.keys("workspaces/") == [] or not any(user in k for k in api.keys("workspaces/"))


async def test_no_workspace_tiff_becomes_capped_png_pages(api: ChatApi, user: str) -> None:
    tif = await upload(api, user, "fax.tiff", gen.make_tiff(8), "application/octet-stream")
    out = await render(api, user, [tif["id"]], NO_WORKSPACE)
    pages = binaries(out)
    assert len(pages) == 5  # CHAT_TIFF_MAX_INLINE_PAGES
    assert all(p["media_type"] == "image/png" for p in pages)
    assert base64.b64decode(pages[0]["data"]).startswith(b"\x89PNG")
    assert "Showing pages 1-5 of 8" in texts(out)[0]


async def test_no_workspace_archive_is_refused_without_its_listing(api: ChatApi, user: str) -> None:
    z = await upload(
        api,
        user,
        "repo.zip",
        gen.make_zip([("repo/src/secret_module.py", b"x = 1\n")]),
        "application/zip",
    )
    out = await render(api, user, [z["id"]], NO_WORKSPACE)
    (text,) = texts(out)
    assert "cannot open it" in text
    assert "secret_module" not in text and "repo/src" not in text
    assert out["files"][0]["mode"] == "not_opened"


async def test_the_turn_budget_bounds_inline_text(local_api: LocalApi, user: str) -> None:
    async with local_api(chat_inline_turn_max_chars=30) as small:
        a = await upload(small, user, "a.txt", b"a" * 20, "text/plain")
        b = await upload(small, user, "b.txt", b"b" * 20, "text/plain")
        out = await render(small, user, [a["id"], b["id"]], NO_WORKSPACE)
    first, second = texts(out)
    assert first.endswith("a" * 20)
    assert "b" * 10 in second and "b" * 11 not in second
    assert "attachment budget of this turn is spent" in second


# --- with a workspace -------------------------------------------------------------------------


async def test_workspace_gets_the_file_and_a_reference_with_20_lines(
    api: ChatApi, user: str
) -> None:
    rows = "month,total\n" + "".join(f"m{i},{i * 1000}\n" for i in range(400))
    csv = await upload(api, user, "raport.csv", rows.encode(), "text/csv")
    agent = workspace_agent()
    out = await render(api, user, [csv["id"]], agent)
    path = f"uploads/{uuid.UUID(csv['id']).hex[:8]}-raport.csv"
    (text,) = texts(out)
    expected_lines = rows.splitlines()[:20]
    assert text == "\n".join(
        [
            f"Attached file: raport.csv (/{path}, {human_size(csv['size'])}, text)",
            "First 20 lines:",
            *expected_lines,
        ]
    )
    fetch = out["files"][0].pop("fetch")
    assert out["files"][0] == {
        "file_id": csv["id"],
        "filename": "raport.csv",
        "file_type": "text",
        "file_kind": "text",
        "mode": "workspace",
        "workspace_path": f"/{path}",
        "sibling_path": None,
    }
    assert [(e["path"], e["size"]) for e in fetch["entries"]] == [(f"/{path}", csv["size"])]
    assert fetch["listing_url"] is None
    assert api.workspace(user, "coder", agent["conversation_id"]) == [path]


@pytest.mark.parametrize(
    ("agent_extra", "pdf_sibling", "msg_sibling"),
    [
        pytest.param({}, True, True, id="runtime-not-described"),
        pytest.param({"described_runtime_has_lit": True}, False, True, id="lit"),
        pytest.param({"runtime_reads": ["pdf", "email"]}, False, False, id="explicit"),
    ],
)
async def test_extracted_text_goes_beside_only_what_the_runtime_cannot_read(
    api: ChatApi, user: str, agent_extra: dict[str, Any], pdf_sibling: bool, msg_sibling: bool
) -> None:
    pdf = await upload(api, user, "q3.pdf", gen.make_pdf(["Revenue grew"]), "application/pdf")
    msg = await upload(api, user, "mail.msg", gen.make_msg(), "application/vnd.ms-outlook")
    agent = workspace_agent(**agent_extra)
    out = await render(api, user, [pdf["id"], msg["id"]], agent)
    listing = api.workspace(user, "coder", agent["conversation_id"])
    pdf_path = f"uploads/{uuid.UUID(pdf['id']).hex[:8]}-q3.pdf"
    msg_path = f"uploads/{uuid.UUID(msg['id']).hex[:8]}-mail.msg"
    assert pdf_path in listing and msg_path in listing
    assert (pdf_path + ".txt" in listing) is pdf_sibling
    assert (msg_path + ".txt" in listing) is msg_sibling
    pdf_text, _ = texts(out)
    assert ("Extracted text: /" + pdf_path + ".txt" in pdf_text) is pdf_sibling
    assert "First 20 lines:\nRevenue grew" in pdf_text


async def test_images_go_both_ways_below_the_inline_limit(local_api: LocalApi, user: str) -> None:
    small_png = gen.make_image("PNG", (4, 4))
    big_png = gen.make_image("PNG", (300, 300))
    limit = len(small_png) + 10
    assert len(big_png) > limit
    async with local_api(sandbox_inline_image_max_bytes=limit) as app:
        small = await upload(app, user, "small.png", small_png, "image/png")
        big = await upload(app, user, "big.png", big_png, "image/png")
        agent = workspace_agent()
        out = await render(app, user, [small["id"], big["id"]], agent)
        listing = app.workspace(user, "coder", agent["conversation_id"])
    (shown,) = binaries(out)
    assert base64.b64decode(shown["data"]) == small_png
    assert f"uploads/{uuid.UUID(small['id']).hex[:8]}-small.png" in listing
    assert f"uploads/{uuid.UUID(big['id']).hex[:8]}-big.png" in listing
    small_text, big_text = texts(out)
    assert f"(/uploads/{uuid.UUID(small['id']).hex[:8]}-small.png, " in small_text
    assert "open it from the workspace" in big_text


async def test_workspace_tiff_is_written_and_its_first_pages_shown(api: ChatApi, user: str) -> None:
    tif = await upload(api, user, "fax.tif", gen.make_tiff(7), "image/tiff")
    agent = workspace_agent()
    out = await render(api, user, [tif["id"]], agent)
    assert len(binaries(out)) == 5
    assert api.workspace(user, "coder", agent["conversation_id"]) == [
        f"uploads/{uuid.UUID(tif['id']).hex[:8]}-fax.tif"
    ]
    assert "Showing pages 1-5 of 7 as images; open the original" in texts(out)[0]
    # the specification's eight in file_type; the finer kind the render went by beside it
    assert (out["files"][0]["file_type"], out["files"][0]["file_kind"]) == ("image", "tiff")


@pytest.mark.parametrize(
    ("name", "mime"), [("repo.zip", "application/zip"), ("repo.tar.gz", "application/gzip")]
)
async def test_archive_unpacks_member_by_member_into_its_folder(
    api: ChatApi, user: str, name: str, mime: str
) -> None:
    members = [("repo/src/app.py", b"print('hi')\n"), ("repo/README.md", b"# repo\n")]
    data = (
        gen.make_zip(members)
        if name.endswith(".zip")
        else gen.make_tgz([gen.tar_dir("repo"), *(gen.tar_file(n, d) for n, d in members)])
    )
    archive = await upload(api, user, name, data, mime)
    agent = workspace_agent()
    out = await render(api, user, [archive["id"]], agent)
    folder = f"uploads/{uuid.UUID(archive['id']).hex[:8]}-repo"
    listing = api.workspace(user, "coder", agent["conversation_id"])
    assert f"{folder}/repo/src/app.py" in listing and f"{folder}/repo/README.md" in listing
    assert not [k for k in listing if k.startswith("uploads/") and not k.startswith(folder)]
    (text,) = texts(out)
    assert text.startswith(f"Attached file: {name} (/{folder}/, ")
    assert "2 files" in text and "repo/src/app.py" in text
    assert out["files"][0]["workspace_path"] == f"/{folder}/"
    assert (out["files"][0]["file_type"], out["files"][0]["file_kind"]) == ("document", "archive")
    app_py = api.runtime.storage.sync.get(
        f"workspaces/{user}/coder/{agent['conversation_id']}/{folder}/repo/src/app.py"
    )
    assert app_py == b"print('hi')\n"


async def test_the_same_file_is_written_once(api: ChatApi, user: str) -> None:
    pdf = await upload(api, user, "q.pdf", gen.make_pdf(["once"]), "application/pdf")
    z = await upload(
        api, user, "r.zip", gen.make_zip([("a.txt", b"a"), ("b.txt", b"b")]), "application/zip"
    )
    agent = workspace_agent()
    async with hooked(api, lambda key: None) as store:
        first = await render(api, user, [pdf["id"], z["id"]], agent)
        writes = len(store.puts)
        again = await render(api, user, [pdf["id"], z["id"]], agent)
    assert writes == 2 + 2 + 1  # pdf + sibling, two members, the unpacked marker
    assert len(store.puts) == writes
    assert texts(first) == texts(again)
    (usage,) = await api.fetch(
        "SELECT sum(workspace_bytes) AS n FROM chat_attachment_renders WHERE user_id=$1", user
    )
    assert usage["n"] > 0


@pytest.mark.parametrize("has_workspace", [True, False], ids=["workspace", "no-workspace"])
async def test_a_dry_run_shows_the_turn_and_writes_nothing(
    api: ChatApi, user: str, has_workspace: bool
) -> None:
    """The input guardrail reads the references before the write: a blocked turn writes nothing."""
    rows = "month,total\n" + "".join(f"m{i},{i}\n" for i in range(30))
    csv = await upload(api, user, "raport.csv", rows.encode(), "text/csv")
    pdf = await upload(api, user, "q.pdf", gen.make_pdf(["Revenue grew"]), "application/pdf")
    z = await upload(api, user, "r.zip", gen.make_zip([("a.txt", b"a")]), "application/zip")
    ids = [csv["id"], pdf["id"], z["id"]]
    agent = workspace_agent() if has_workspace else NO_WORKSPACE
    stored = api.keys("")
    async with hooked(api, lambda key: None) as store:
        response = await api.client.post(
            "/api/v1/files/render?dry_run=true",
            json={"file_ids": ids, "agent": agent},
            headers=auth(user),
        )
        assert response.status_code == 200, response.text
        dry = response.json()
        assert store.puts == []
    assert dry["dry_run"] is True
    assert api.keys("") == stored  # no storage object anywhere
    assert api.workspace(user, agent["agent_id"], agent["conversation_id"]) == []
    (renders,) = await api.fetch(
        "SELECT count(*) AS n FROM chat_attachment_renders WHERE user_id = $1", user
    )
    assert renders["n"] == 0

    real = await render(api, user, ids, agent)
    assert real["dry_run"] is False
    assert texts(dry) == texts(real)
    # nothing was written by the dry run, so it has nothing to fetch
    assert [f.pop("fetch") for f in dry["files"]] == [None, None, None]
    fetches = [f.pop("fetch") for f in real["files"]]
    assert dry["files"] == real["files"]
    assert all(fetches) is has_workspace
    if has_workspace:
        header = texts(dry)[0].splitlines()[0]
        path = f"/uploads/{uuid.UUID(csv['id']).hex[:8]}-raport.csv"
        assert header == f"Attached file: raport.csv ({path}, {human_size(csv['size'])}, text)"
        assert api.workspace(user, "coder", agent["conversation_id"])


async def test_untrusted_names_are_sanitized_and_never_collide(api: ChatApi, user: str) -> None:
    evil = await upload(api, user, "../../etc/passwd", b"root:x:0:0", "text/plain")
    one = await upload(api, user, "report.csv", b"a,b\n1,2\n", "text/csv")
    two = await upload(api, user, "report.csv", b"c,d\n3,4\n", "text/csv")
    agent = workspace_agent()
    out = await render(api, user, [evil["id"], one["id"], two["id"]], agent)
    paths = [f["workspace_path"] for f in out["files"]]
    assert paths[0] == f"/uploads/{uuid.UUID(evil['id']).hex[:8]}-etc_passwd"
    assert paths[1] != paths[2] and all(p.endswith("-report.csv") for p in paths[1:])
    root = f"workspaces/{user}/coder/{agent['conversation_id']}/"
    assert api.runtime.storage.sync.get(root + paths[1][1:]) == b"a,b\n1,2\n"
    assert api.runtime.storage.sync.get(root + paths[2][1:]) == b"c,d\n3,4\n"
    assert all(
        k.startswith("uploads/") for k in api.workspace(user, "coder", agent["conversation_id"])
    )


async def test_a_full_workspace_falls_back_to_inline(local_api: LocalApi, user: str) -> None:
    async with local_api(workspace_max_bytes=64) as app:
        small = await upload(app, user, "s.txt", b"fits", "text/plain")
        big = await upload(app, user, "b.txt", b"x" * 100, "text/plain")
        z = await upload(
            app, user, "z.zip", gen.make_zip([("a.txt", b"y" * 200)]), "application/zip"
        )
        agent = workspace_agent()
        out = await render(app, user, [small["id"], big["id"], z["id"]], agent)
        listing = app.workspace(user, "coder", agent["conversation_id"])
    assert [f["mode"] for f in out["files"]] == ["workspace", "inline_fallback", "not_written"]
    _, big_text, z_text = texts(out)
    assert "x" * 100 in big_text and "workspace is full" in big_text
    assert "workspace is full" in z_text
    assert listing == [f"uploads/{uuid.UUID(small['id']).hex[:8]}-s.txt"]
    assert out["notices"] == []


async def test_a_disk_full_mid_unpack_leaves_no_half_unpacked_archive(
    local_api: LocalApi, user: str
) -> None:
    """Issue #14 F12: the local store's disk refuses a member's write mid-archive (this
    process's ``RLIMIT_FSIZE``, as a full disk): the members written so far are removed
    with their folder, no partial file remains, and the archive is reported not written."""
    members = [
        ("a.bin", os.urandom(4000)),
        ("b.bin", os.urandom(4000)),
        ("c.bin", os.urandom(200_000)),
    ]
    async with local_api() as app:
        z = await upload(app, user, "z.zip", gen.make_zip(members), "application/zip")
        agent = workspace_agent()
        with file_size_limit(64 * 1024):
            out = await render(app, user, [z["id"]], agent)
        listing = app.workspace(user, "coder", agent["conversation_id"])
        media = Path(app.runtime.storage.sync.root)  # type: ignore[attr-defined]
    assert [f["mode"] for f in out["files"]] == ["not_written"]
    assert "workspace is full" in texts(out)[0]
    assert listing == []
    assert [p for p in media.rglob("*") if p.name.endswith(".tmp")] == []


async def test_a_refused_workspace_write_is_said_once(api: ChatApi, user: str) -> None:
    a = await upload(api, user, "a.txt", b"alpha", "text/plain")
    b = await upload(api, user, "b.txt", b"beta", "text/plain")
    z = await upload(api, user, "z.zip", gen.make_zip([("m.txt", b"m")]), "application/zip")

    def refuse(key: str) -> None:
        if key.startswith("workspaces/"):
            raise PermissionError(13, "Permission denied")

    agent = workspace_agent()
    async with hooked(api, refuse):
        out = await render(api, user, [a["id"], b["id"], z["id"]], agent)
    assert len(out["notices"]) == 1 and "workspace is not available" in out["notices"][0]
    all_text = "\n".join(texts(out))
    assert all_text.count("workspace is not available") == 2  # the notice, and the archive line
    assert all_text.count("not available") == 2
    assert texts(out)[0] == out["notices"][0]
    assert "alpha" in all_text and "beta" in all_text
    assert [f["mode"] for f in out["files"]] == [
        "inline_fallback",
        "inline_fallback",
        "not_written",
    ]


async def test_an_archive_failing_mid_way_leaves_no_folder(api: ChatApi, user: str) -> None:
    members = [(f"repo/f{i}.txt", f"{i}".encode()) for i in range(6)]
    z = await upload(api, user, "repo.zip", gen.make_zip(members), "application/zip")
    folder_key = f"uploads/{uuid.UUID(z['id']).hex[:8]}-repo/"
    seen: list[str] = []

    def fail_third(key: str) -> None:
        if folder_key in key:
            seen.append(key)
            if len(seen) == 3:
                raise PermissionError(13, "Permission denied")

    agent = workspace_agent()
    async with hooked(api, fail_third):
        out = await render(api, user, [z["id"]], agent)
    assert len(seen) == 3
    assert api.workspace(user, "coder", agent["conversation_id"]) == []
    assert out["files"][0]["mode"] == "not_written"
    assert "could not be written" in texts(out)[-1]


async def test_a_cancelled_unpack_removes_its_folder(api: ChatApi, user: str) -> None:
    members = [(f"repo/f{i}.txt", f"{i}".encode()) for i in range(5)]
    z = await upload(api, user, "repo.zip", gen.make_zip(members), "application/zip")
    folder_key = f"uploads/{uuid.UUID(z['id']).hex[:8]}-repo/"
    second = threading.Event()

    def slow(key: str) -> None:
        if folder_key in key:
            if second.is_set():
                time.sleep(0.3)
            second.set()

    agent = workspace_agent()
    async with hooked(api, slow):
        task = asyncio.create_task(render(api, user, [z["id"]], agent))
        while not second.is_set():
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0.5)
    assert api.workspace(user, "coder", agent["conversation_id"]) == []


async def test_a_file_the_store_cannot_load_is_left_out(api: ChatApi, user: str) -> None:
    gone = await upload(api, user, "gone.png", gen.make_image("PNG"), "image/png")
    kept = await upload(api, user, "kept.txt", b"still here", "text/plain")
    (row,) = await api.fetch(
        "SELECT storage_path FROM chat_files WHERE id=$1", uuid.UUID(gone["id"])
    )
    api.runtime.storage.sync.delete(row["storage_path"])
    out = await render(api, user, [gone["id"], kept["id"]], workspace_agent())
    assert [f["mode"] for f in out["files"]] == ["skipped", "workspace"]
    assert "gone.png could not be loaded and was left out" in texts(out)[0]
    assert binaries(out) == []


async def test_only_own_files_render(api: ChatApi, user: str) -> None:
    theirs = await upload(api, "another-person", "t.txt", b"theirs", "text/plain")
    response = await api.client.post(
        "/api/v1/files/render",
        json={"file_ids": [theirs["id"]], "agent": NO_WORKSPACE},
        headers=auth(user),
    )
    assert response.status_code == 400
    assert response.json()["error"]["details"]["file_ids"] == [theirs["id"]]


@pytest.mark.parametrize(
    "agent",
    [
        {"has_workspace": True},
        {"has_workspace": True, "agent_id": "../x", "conversation_id": "c"},
        {"has_workspace": True, "agent_id": "a", "conversation_id": "c/d"},
        {"has_workspace": False, "runtime_reads": ["exe"]},
    ],
)
async def test_agent_descriptions_are_validated(
    api: ChatApi, user: str, agent: dict[str, Any]
) -> None:
    f = await upload(api, user, "a.txt", b"a", "text/plain")
    response = await api.client.post(
        "/api/v1/files/render", json={"file_ids": [f["id"]], "agent": agent}, headers=auth(user)
    )
    assert response.status_code == 422
    assert response.json()["error"]["details"]["fields"][0]["field"].startswith("agent")


# --- history replay --------------------------------------------------------------------------


async def test_later_turns_replay_what_the_attachment_added(api: ChatApi, user: str) -> None:
    csv = await upload(api, user, "raport.csv", b"month,total\njan,10\n", "text/csv")
    png = await upload(api, user, "chart.png", gen.make_image("PNG"), "image/png")
    message = uuid.uuid4()
    linked = await api.client.post(
        f"/api/v1/messages/{message}/attachments",
        json={"file_ids": [csv["id"], png["id"]]},
        headers=auth(user),
    )
    assert linked.status_code == 200
    agent = workspace_agent()
    out = await render(api, user, [csv["id"], png["id"]], agent)

    history = await api.client.get(f"/api/v1/messages/{message}/attachments", headers=auth(user))
    assert history.status_code == 200
    files = history.json()["files"]
    assert [f["file_id"] for f in files] == [csv["id"], png["id"]]
    assert [(f["file_type"], f["file_kind"]) for f in files] == [
        ("text", "text"),
        ("image", "image"),
    ]
    assert files[0]["history"] == texts(out)[0]
    assert files[0]["workspace_path"] == out["files"][0]["workspace_path"]
    assert "open it from the workspace to look again" in files[1]["history"]
    assert "data" not in files[1]

    # someone else sees nothing of this message
    other = await api.client.get(
        f"/api/v1/messages/{message}/attachments", headers=auth("intruder")
    )
    assert other.status_code == 200 and other.json()["files"] == []

    # without a workspace the pasted text itself is replayed, and an image is named only
    await render(api, user, [csv["id"], png["id"]], NO_WORKSPACE)
    again = await api.client.get(
        f"/api/v1/messages/{message}/attachments",
        params={"agent_id": "helper", "conversation_id": "c1"},
        headers=auth(user),
    )
    replay = again.json()["files"]
    assert replay[0]["history"].endswith("month,total\njan,10\n")
    assert "not sent again" in replay[1]["history"]


# --- the runner fetches what a render wrote -----------------------------------------------


async def fetch_written(
    api: ChatApi, rendered: dict[str, Any], headers: dict[str, str]
) -> dict[str, bytes]:
    """The runner's loop (docs/chat-uploads.md): every written file, by its workspace path."""
    copied: dict[str, bytes] = {}
    for f in rendered["files"]:
        fetch = f["fetch"]
        if fetch is None:
            continue
        entries = fetch["entries"]
        if fetch["listing_url"]:
            listing = await api.client.get(fetch["listing_url"], headers=headers)
            assert listing.status_code == 200, listing.text
            assert listing.json()["folder"] == f["workspace_path"]
            assert listing.json()["expires_at"] == fetch["expires_at"]
            entries = listing.json()["entries"]
        for entry in entries:
            response = await api.client.get(entry["url"], headers=headers)
            assert response.status_code == 200, response.text
            assert response.headers["x-content-type-options"] == "nosniff"
            assert len(response.content) == entry["size"]
            copied[entry["path"]] = response.content
    return copied


async def test_the_runner_copies_every_written_file_through_the_render_s_links(
    api: ChatApi, user: str
) -> None:
    csv_bytes = b"month,total\njan,10\n"
    csv = await upload(api, user, "raport.csv", csv_bytes, "text/csv")
    pdf_bytes = gen.make_pdf(["Revenue grew"])
    pdf = await upload(api, user, "q3.pdf", pdf_bytes, "application/pdf")
    members = [("repo/src/app.py", b"print('hi')\n"), ("repo/README.md", b"# repo\n")]
    z = await upload(api, user, "repo.zip", gen.make_zip(members), "application/zip")
    agent = workspace_agent()
    headers = auth(user)
    out = await render(api, user, [csv["id"], pdf["id"], z["id"]], agent)

    copied = await fetch_written(api, out, headers)
    workspace = api.workspace(user, "coder", agent["conversation_id"])
    # everything under uploads/ and nothing else: the runner's sandbox holds what docproc's does
    assert sorted(p.lstrip("/") for p in copied) == [
        k for k in workspace if k.startswith("uploads/")
    ]
    assert copied[f"/uploads/{uuid.UUID(csv['id']).hex[:8]}-raport.csv"] == csv_bytes
    pdf_path = f"/uploads/{uuid.UUID(pdf['id']).hex[:8]}-q3.pdf"
    assert copied[pdf_path] == pdf_bytes
    assert b"Revenue grew" in copied[pdf_path + ".txt"]
    folder = f"/uploads/{uuid.UUID(z['id']).hex[:8]}-repo/"
    assert copied[folder + "repo/src/app.py"] == b"print('hi')\n"
    assert copied[folder + "repo/README.md"] == b"# repo\n"

    # a later turn renders the same files without writing them, and still says how to fetch them
    again = await render(api, user, [csv["id"], pdf["id"], z["id"]], agent)
    assert await fetch_written(api, again, headers) == copied


async def test_a_workspace_is_unreadable_by_any_other_caller(api: ChatApi, user: str) -> None:
    members = [("repo/a.py", b"secret = 1\n")]
    z = await upload(api, user, "repo.zip", gen.make_zip(members), "application/zip")
    csv = await upload(api, user, "a.csv", b"a,b\n", "text/csv")
    agent = workspace_agent()
    owner = auth(user, organization_id="acme")
    response = await api.client.post(
        "/api/v1/files/render",
        json={"file_ids": [z["id"], csv["id"]], "agent": agent},
        headers=owner,
    )
    assert response.status_code == 200, response.text
    archive, text = response.json()["files"]
    file_url = text["fetch"]["entries"][0]["url"]
    listing_url = archive["fetch"]["listing_url"]
    listing = (await api.client.get(listing_url, headers=owner)).json()
    member_url = listing["entries"][0]["url"]

    async def refused(url: str, headers: dict[str, str]) -> dict[str, Any]:
        response = await api.client.get(url, headers=headers)
        assert response.status_code == 404, response.text
        body: dict[str, Any] = response.json()["error"]
        assert (body["code"], body["message"]) == ("NOT_FOUND", "File not found")
        return body

    others = {
        "another person of the organisation": auth(f"{user}-b", organization_id="acme"),
        "a person of another organisation": auth(f"{user}-c", organization_id="globex"),
        "the same id in another organisation": auth(user, organization_id="globex"),
    }
    for url in (file_url, listing_url, member_url):
        for headers in others.values():
            assert (await refused(url, headers))["details"] == {}
        assert (await api.client.get(url)).status_code == 401  # no bearer token at all

    # someone else's link: bob's own render names bob's workspace, never alice's, even with
    # the same agent and conversation; and bob's link does not open for alice
    bob = auth(f"{user}-b", organization_id="acme")
    bobs = await api.upload(f"{user}-b", "b.csv", b"bob\n", "text/csv")
    response = await api.client.post(
        "/api/v1/files/render",
        json={"file_ids": [bobs.json()["id"]], "agent": agent},
        headers=bob,
    )
    bob_url = response.json()["files"][0]["fetch"]["entries"][0]["url"]
    assert (await api.client.get(bob_url, headers=bob)).content == b"bob\n"
    assert (await refused(bob_url, owner))["details"] == {}

    # a link of one kind on the other route, and a tampered one
    assert (await refused(listing_url.replace("/listings/", "/files/"), owner))["details"] == {}
    body, sig = file_url.rsplit("/", 1)[1].split(".")
    assert (await refused(f"/api/v1/workspace/files/{body}x.{sig}", owner))["details"] == {}

    # an expired link: its own caller learns it expired (to render again), nobody else does
    expired = WorkspaceLinks(
        link_key(api.runtime.settings.auth),
        Principal(user, "acme"),
        agent["agent_id"],
        agent["conversation_id"],
        int(time.time()) - 1,
    ).entry(text["workspace_path"].lstrip("/"), 4)
    assert (await refused(expired.url, owner))["details"]["reason"] == "link_expired"
    assert (await refused(expired.url, others["another person of the organisation"]))[
        "details"
    ] == {}
    # the same link, unexpired, is the file
    assert (await api.client.get(file_url, headers=owner)).content == b"a,b\n"
