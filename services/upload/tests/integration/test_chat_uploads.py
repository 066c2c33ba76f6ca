"""POST /api/v1/files/upload, GET /api/v1/files/{id}, POST /api/v1/messages/{id}/attachments.

Every test runs against the local file store and against S3 (moto), on a fresh database.
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
import uuid
from collections.abc import Callable
from functools import cache
from typing import Any

import chat_inputs as gen
import pytest
from chat_support import ChatApi, LocalApi, auth
from docproc_common.auth import EDIT, VIEW
from docproc_common.storage import AsyncStorage, Storage
from prometheus_client import REGISTRY

pytestmark = pytest.mark.integration

MiB = 1024 * 1024
NOT_FOUND = {"error": {"code": "NOT_FOUND", "message": "File not found", "details": {}}}


@cache
def _doc() -> bytes:
    return bytes(gen.soffice_convert(gen.make_docx(["Legacy words here"]), ".docx", "doc"))


@cache
def _xls() -> bytes:
    return bytes(
        gen.soffice_convert(gen.make_xlsx([["month", "total"], ["jan", 10]]), ".xlsx", "xls")
    )


needs_soffice = pytest.mark.skipif(gen.SOFFICE is None, reason="LibreOffice is not installed")

#: The specification's eight file types: every answer's ``file_type`` is one of them.
EIGHT = {"image", "pdf", "docx", "spreadsheet", "document", "presentation", "email", "text"}
#: The finer kinds (``file_kind``) that fold into one of the eight.
FOLDED = {"tiff": "image", "doc": "docx", "archive": "document"}

# name, bytes, declared type, file_kind, canonical MIME, text the preview shows (None: null)
FORMATS: list[Any] = [
    ("photo.png", lambda: gen.make_image("PNG"), "image/png", "image", "image/png", None),
    ("photo.jpg", lambda: gen.make_image("JPEG"), "image/jpeg", "image", "image/jpeg", None),
    ("photo.webp", lambda: gen.make_image("WEBP"), "image/webp", "image", "image/webp", None),
    ("anim.gif", lambda: gen.make_image("GIF"), "image/gif", "image", "image/gif", None),
    ("scan.tiff", lambda: gen.make_tiff(2), "application/octet-stream", "tiff", "image/tiff", None),
    ("scan.tif", lambda: gen.make_tiff(1), "image/tiff", "tiff", "image/tiff", None),
    (
        "report.pdf",
        lambda: gen.make_pdf(["Quarterly numbers"]),
        "application/pdf",
        "pdf",
        "application/pdf",
        "Quarterly numbers",
    ),
    (
        "letter.docx",
        lambda: gen.make_docx(["Dear Ana,", "the figures."]),
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "docx",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "Dear Ana,",
    ),
    pytest.param(
        "legacy.doc",
        _doc,
        "application/msword",
        "doc",
        "application/msword",
        "Legacy words",
        marks=needs_soffice,
    ),
    (
        "sheet.xlsx",
        lambda: gen.make_xlsx([["month", "total"], ["jan", 10]]),
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "spreadsheet",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "month\ttotal",
    ),
    (
        "macro.xlsm",
        lambda: gen.make_xlsx([["a", "b"]]),
        None,
        "spreadsheet",
        "application/vnd.ms-excel.sheet.macroEnabled.12",
        "a\tb",
    ),
    pytest.param(
        "old.xls",
        _xls,
        "application/vnd.ms-excel",
        "spreadsheet",
        "application/vnd.ms-excel",
        "jan\t10",
        marks=needs_soffice,
    ),
    (
        "calc.ods",
        lambda: gen.make_ods([["x", "y"]]),
        "application/vnd.oasis.opendocument.spreadsheet",
        "spreadsheet",
        "application/vnd.oasis.opendocument.spreadsheet",
        "x\ty",
    ),
    (
        "deck.pptx",
        lambda: gen.make_pptx("Roadmap", "speaker notes"),
        "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "presentation",
        "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "Roadmap",
    ),
    (
        "slides.odp",
        lambda: gen.make_odp("Agenda"),
        "application/vnd.oasis.opendocument.presentation",
        "presentation",
        "application/vnd.oasis.opendocument.presentation",
        "Agenda",
    ),
    (
        "essay.odt",
        lambda: gen.make_odt(["Once upon a time"]),
        "application/vnd.oasis.opendocument.text",
        "document",
        "application/vnd.oasis.opendocument.text",
        "Once upon a time",
    ),
    (
        "mail.msg",
        gen.make_msg,
        "application/vnd.ms-outlook",
        "email",
        "application/vnd.ms-outlook",
        "From: Ana",
    ),
    (
        "notes.txt",
        lambda: b"one\ntwo\nthree\nfour\n",
        "text/plain",
        "text",
        "text/plain",
        "one\ntwo\nthree",
    ),
    ("readme.md", lambda: b"# Title\nbody", "text/markdown", "text", "text/markdown", "# Title"),
    ("data.csv", lambda: b"month,total\njan,10\n", "text/csv", "text", "text/csv", "month,total"),
    ("page.html", lambda: b"<p>hi</p>", "text/html", "text", "text/html", "<p>hi</p>"),
    (
        "data.xml",
        lambda: b"<?xml version='1.0'?><a>1</a>",
        "text/xml",
        "text",
        "application/xml",
        "<a>1</a>",
    ),
    ("data.json", lambda: b'{"a": 1}', "application/json", "text", "application/json", '{"a": 1}'),
    (
        "repo.zip",
        lambda: gen.make_zip([("repo/src/app.py", b"print(1)\n"), ("repo/README.md", b"hi")]),
        "application/zip",
        "archive",
        "application/zip",
        "repo/src/app.py",
    ),
    (
        "bundle.tar.gz",
        lambda: gen.make_tgz([gen.tar_dir("b"), gen.tar_file("b/x.txt", b"x")]),
        "application/gzip",
        "archive",
        "application/gzip",
        "b/",
    ),
    (
        "bundle.tgz",
        lambda: gen.make_tgz([gen.tar_file("y.txt", b"y")]),
        "application/x-gzip",
        "archive",
        "application/gzip",
        "y.txt",
    ),
]


@pytest.mark.parametrize(("filename", "make", "declared", "kind", "mime", "shows"), FORMATS)
async def test_every_format_is_classified_parsed_stored_and_recorded(
    api: ChatApi,
    user: str,
    filename: str,
    make: Callable[[], bytes],
    declared: str | None,
    kind: str,
    mime: str,
    shows: str | None,
) -> None:
    data = make()
    response = await api.upload(user, filename, data, declared, unit="  Finance  ")
    assert response.status_code == 201, response.text
    body = response.json()
    assert set(body) == {"id", "filename", "mime_type", "size", "file_type", "file_kind", "preview"}
    assert body["filename"] == filename
    assert body["mime_type"] == mime
    assert body["size"] == len(data)
    # the specification's eight in file_type, the finer kind beside it
    assert body["file_type"] == FOLDED.get(kind, kind) and body["file_type"] in EIGHT
    assert body["file_kind"] == kind
    if shows is None:
        assert body["preview"] is None
    else:
        assert shows in body["preview"]
        assert len(body["preview"]) <= 240 and body["preview"].count("\n") <= 2

    (row,) = await api.fetch("SELECT * FROM chat_files WHERE id = $1", uuid.UUID(body["id"]))
    assert row["user_id"] == user
    assert row["filename"] == filename and row["mime_type"] == mime and row["size"] == len(data)
    assert row["file_type"] == kind  # the column keeps the finer kind the render reads
    assert row["organizational_unit"] == "Finance"
    assert row["message_id"] is None and row["created_at"] is not None
    assert re.fullmatch(rf"{user}/[0-9a-f]{{32}}_{re.escape(filename)}", row["storage_path"])
    assert (row["parsed_content"] is None) == (shows is None)
    assert api.stored(user) == [row["storage_path"]]
    fetched = await api.client.get(f"/api/v1/files/{body['id']}", headers=auth(user))
    assert fetched.status_code == 200 and fetched.content == data


async def test_preview_is_three_lines_capped_at_240_characters(api: ChatApi, user: str) -> None:
    text = "\n".join(["x" * 100] * 10).encode()
    body = (await api.upload(user, "long.txt", text, "text/plain")).json()
    assert body["preview"] == ("x" * 100 + "\n" + "x" * 100 + "\n" + "x" * 100)[:240]


async def test_blank_organizational_unit_is_no_unit(api: ChatApi, user: str) -> None:
    body = (await api.upload(user, "a.txt", b"a", "text/plain", unit="   ")).json()
    (row,) = await api.fetch(
        "SELECT organizational_unit FROM chat_files WHERE id=$1", uuid.UUID(body["id"])
    )
    assert row["organizational_unit"] is None


async def test_parsed_text_budget_comes_from_settings(local_api: LocalApi, user: str) -> None:
    async with local_api(chat_parsed_text_max_chars=50) as small:
        body = (await small.upload(user, "a.txt", b"y" * 500, "text/plain")).json()
        (row,) = await small.fetch(
            "SELECT parsed_content FROM chat_files WHERE id=$1", uuid.UUID(body["id"])
        )
    assert row["parsed_content"].startswith("y" * 50)
    assert "the rest of the document was omitted" in row["parsed_content"]
    assert "y" * 51 not in row["parsed_content"]


async def test_nul_characters_never_reach_the_database(api: ChatApi, user: str) -> None:
    pdf = await api.upload(user, "n.pdf", gen.make_pdf(["before\x00after"]), "application/pdf")
    utf16 = await api.upload(
        user, "u.txt", "\ufeffhola\x00 mundo".encode("utf-16-le"), "text/plain"
    )
    for response in (pdf, utf16):
        assert response.status_code == 201, response.text
        (row,) = await api.fetch(
            "SELECT parsed_content FROM chat_files WHERE id=$1", uuid.UUID(response.json()["id"])
        )
        assert "\x00" not in row["parsed_content"]
    assert "hola" in utf16.json()["preview"]


# --- size limits ---------------------------------------------------------------------------


async def test_size_limit_is_measured_on_the_content(api: ChatApi, user: str) -> None:
    limit = 10 * MiB
    exactly = await api.upload(user, "big.txt", b"a" * limit, "text/plain")
    assert exactly.status_code == 201, exactly.text
    events = await api.events()
    over = await api.upload(user, "bigger.txt", b"a" * (limit + 1), "text/plain")
    assert over.status_code == 413
    error = over.json()["error"]
    assert error["code"] == "PAYLOAD_TOO_LARGE" and "10 MB" in error["message"]
    assert error["details"]["fields"] == [{"field": "file", "message": "too large"}]
    assert await api.rows(user) == 1 and len(api.stored(user)) == 1
    assert await api.events() == events


async def test_whole_body_is_capped_early_with_413(local_api: LocalApi, user: str) -> None:
    limits = {
        "max_upload_size_mb": 2,
        "chat_max_upload_size_mb": 1,
        "multipart_margin_bytes": 65536,
    }
    cap = 2 * MiB + 65536
    async with local_api(**limits) as small:
        # between the chat limit and the body cap: refused by the content measure
        mid = await small.upload(user, "mid.txt", b"a" * (MiB + 10), "text/plain")
        assert mid.status_code == 413 and "1 MB" in mid.json()["error"]["message"]
        # a declared length above the cap: refused before the body is read
        declared = await small.client.post(
            "/api/v1/files/upload",
            content=b"x" * (cap + 1),
            headers={**auth(user), "content-type": "multipart/form-data; boundary=b"},
        )
        assert declared.status_code == 413
        assert declared.json()["error"]["code"] == "PAYLOAD_TOO_LARGE"

        # no declared length (chunked): refused as soon as the count passes the cap
        sent = 0

        async def chunks() -> Any:
            nonlocal sent
            yield b'--b\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\n'
            for _ in range(64):
                sent += 64 * 1024
                yield b"a" * (64 * 1024)

        streamed = await small.client.post(
            "/api/v1/files/upload",
            content=chunks(),
            headers={**auth(user), "content-type": "multipart/form-data; boundary=b"},
        )
        assert streamed.status_code == 413
        assert await small.rows(user) == 0 and small.stored(user) == []


async def test_an_empty_file_is_refused(api: ChatApi, user: str) -> None:
    response = await api.upload(user, "empty.txt", b"", "text/plain")
    assert response.status_code == 400
    assert response.json()["error"]["details"]["rule"] == "empty_file"
    assert await api.rows(user) == 0 and api.stored(user) == []


async def test_the_request_must_carry_one_file(api: ChatApi, user: str) -> None:
    none = await api.client.post(
        "/api/v1/files/upload", data={"organizational_unit": "x"}, headers=auth(user)
    )
    assert none.status_code == 400
    assert none.json()["error"]["details"]["fields"] == [{"field": "file", "message": "required"}]
    two = await api.client.post(
        "/api/v1/files/upload",
        files=[("file", ("a.txt", b"a", "text/plain")), ("file", ("b.txt", b"b", "text/plain"))],
        headers=auth(user),
    )
    assert two.status_code == 400
    assert await api.rows(user) == 0
    unauthenticated = await api.client.post(
        "/api/v1/files/upload", files={"file": ("a.txt", b"a", "text/plain")}
    )
    assert unauthenticated.status_code == 401


# --- cancellation ---------------------------------------------------------------------------


class SlowStorage:
    """Delegates to a real store; ``put`` signals when it starts and takes its time."""

    def __init__(self, inner: Storage) -> None:
        self.inner = inner
        self.backend = inner.backend
        self.encrypted = inner.encrypted
        self.started = threading.Event()
        self.finished = threading.Event()

    def put(self, key: str, data: bytes, content_type: str | None = None) -> None:
        self.started.set()
        time.sleep(0.5)
        self.inner.put(key, data, content_type)
        self.finished.set()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


async def test_a_cancelled_upload_leaves_no_file_and_no_row(api: ChatApi, user: str) -> None:
    original = api.runtime.storage
    slow = SlowStorage(original.sync)
    api.runtime.storage = AsyncStorage(slow, api.runtime.pool)
    try:
        task = asyncio.create_task(api.upload(user, "c.txt", b"cancel me", "text/plain"))
        while not slow.started.is_set():
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    finally:
        api.runtime.storage = original
    assert slow.finished.is_set()  # the write was waited for, then removed
    assert api.stored(user) == []
    assert await api.rows(user) == 0


# --- ownership ------------------------------------------------------------------------------


async def test_only_the_owner_downloads_and_nothing_widens_it(api: ChatApi, user: str) -> None:
    body = (await api.upload(user, "mine.txt", b"private", "text/plain")).json()
    url = f"/api/v1/files/{body['id']}"
    own = await api.client.get(url, headers=auth(user))
    assert own.status_code == 200 and own.content == b"private"
    assert own.headers["content-type"].startswith("text/plain")
    assert own.headers["content-disposition"].startswith("attachment;")
    assert own.headers["x-content-type-options"] == "nosniff"

    for claims in (
        {},
        {"permissions": [VIEW, EDIT, "secrets:view"]},
        {"app_admin": True},
        {"organization_id": "org-1", "permissions": [VIEW, EDIT]},
    ):
        other = await api.client.get(url, headers=auth("mallory", **claims))
        assert other.status_code == 404
        assert other.json() == NOT_FOUND
    missing = await api.client.get(f"/api/v1/files/{uuid.uuid4()}", headers=auth(user))
    assert missing.status_code == 404 and missing.json() == NOT_FOUND
    assert (await api.client.get(url)).status_code == 401


async def test_info_is_the_owners_record_and_nobody_elses(api: ChatApi, user: str) -> None:
    body = (
        await api.upload(user, "notes.md", b"# Plan\nship it\n", "text/markdown", unit="Ops")
    ).json()
    url = f"/api/v1/files/{body['id']}/info"
    own = await api.client.get(url, headers=auth(user))
    assert own.status_code == 200, own.text
    info = own.json()
    shared = ("id", "filename", "size", "file_type", "file_kind", "preview")
    assert {k: info[k] for k in shared} == {k: body[k] for k in shared}
    assert (info["organizational_unit"], info["message_id"], info["has_parsed_content"]) == (
        "Ops",
        None,
        True,
    )
    assert info["created_at"] and "storage_path" not in info and "user_id" not in info
    message = uuid.uuid4()
    attach = {"file_ids": [body["id"]]}
    r = await api.client.post(
        f"/api/v1/messages/{message}/attachments", json=attach, headers=auth(user)
    )
    assert r.status_code == 200, r.text
    assert (await api.client.get(url, headers=auth(user))).json()["message_id"] == str(message)
    image = (await api.upload(user, "p.png", gen.make_image("PNG"), "image/png")).json()
    pic = (await api.client.get(f"/api/v1/files/{image['id']}/info", headers=auth(user))).json()
    assert (pic["has_parsed_content"], pic["preview"]) == (False, None)

    for claims in ({}, {"app_admin": True}, {"permissions": [VIEW, EDIT]}):
        other = await api.client.get(url, headers=auth("mallory", **claims))
        assert other.status_code == 404 and other.json() == NOT_FOUND
    missing = await api.client.get(f"/api/v1/files/{uuid.uuid4()}/info", headers=auth(user))
    assert missing.status_code == 404 and missing.json() == NOT_FOUND
    assert (await api.client.get(url)).status_code == 401


async def test_images_show_inline_tiff_and_html_download(api: ChatApi, user: str) -> None:
    png = (await api.upload(user, "p.png", gen.make_image("PNG"), "image/png")).json()
    tif = (await api.upload(user, "s.tiff", gen.make_tiff(1), "application/octet-stream")).json()
    html = (await api.upload(user, "x.html", b"<script>alert(1)</script>", "text/html")).json()
    r = await api.client.get(f"/api/v1/files/{png['id']}", headers=auth(user))
    assert r.headers["content-disposition"].startswith("inline;")
    r = await api.client.get(f"/api/v1/files/{tif['id']}", headers=auth(user))
    assert r.headers["content-type"] == "image/tiff"
    assert r.headers["content-disposition"].startswith("attachment;")
    r = await api.client.get(f"/api/v1/files/{html['id']}", headers=auth(user))
    assert r.headers["content-disposition"].startswith("attachment;")
    assert "sandbox" in r.headers["content-security-policy"]


async def test_attach_links_only_own_unlinked_files_all_or_nothing(api: ChatApi, user: str) -> None:
    a = (await api.upload(user, "a.txt", b"a", "text/plain")).json()["id"]
    b = (await api.upload(user, "b.txt", b"b", "text/plain")).json()["id"]
    theirs = (await api.upload("someone-else", "t.txt", b"t", "text/plain")).json()["id"]
    message, other_message = uuid.uuid4(), uuid.uuid4()

    async def linked(file_id: str) -> Any:
        (row,) = await api.fetch(
            "SELECT message_id FROM chat_files WHERE id=$1", uuid.UUID(file_id)
        )
        return row["message_id"]

    # another user's file: refused, naming it, and nothing applied
    r = await api.client.post(
        f"/api/v1/messages/{message}/attachments",
        json={"file_ids": [a, theirs]},
        headers=auth(user),
    )
    assert r.status_code == 400
    error = r.json()["error"]
    assert theirs in error["message"] and error["details"]["file_ids"] == [theirs]
    assert error["details"]["fields"] == [{"field": "file_ids.1", "message": "not found"}]
    assert await linked(a) is None and await linked(theirs) is None

    # an unknown id reads the same as another user's file
    unknown = str(uuid.uuid4())
    r = await api.client.post(
        f"/api/v1/messages/{message}/attachments", json={"file_ids": [unknown]}, headers=auth(user)
    )
    assert (
        r.status_code == 400 and r.json()["error"]["details"]["fields"][0]["message"] == "not found"
    )

    r = await api.client.post(
        f"/api/v1/messages/{message}/attachments", json={"file_ids": [a, b]}, headers=auth(user)
    )
    assert r.status_code == 200 and r.json() == {"message_id": str(message), "file_ids": [a, b]}
    assert await linked(a) == message and await linked(b) == message
    # a file already on this very message is refused too, not applied in silence
    r = await api.client.post(
        f"/api/v1/messages/{message}/attachments", json={"file_ids": [a]}, headers=auth(user)
    )
    assert r.status_code == 400
    assert r.json()["error"]["details"] == {
        "file_ids": [a],
        "fields": [{"field": "file_ids.0", "message": "already attached to this message"}],
    }
    assert await linked(a) == message

    # a file already on a message cannot be pulled onto another one
    c = (await api.upload(user, "c.txt", b"c", "text/plain")).json()["id"]
    r = await api.client.post(
        f"/api/v1/messages/{other_message}/attachments",
        json={"file_ids": [c, a]},
        headers=auth(user),
    )
    assert r.status_code == 400
    assert r.json()["error"]["details"] == {
        "file_ids": [a],
        "fields": [{"field": "file_ids.1", "message": "already attached to another message"}],
    }
    assert await linked(a) == message and await linked(c) is None

    # the owner of the other file cannot attach it either through someone's message
    r = await api.client.post(
        f"/api/v1/messages/{message}/attachments",
        json={"file_ids": [a]},
        headers=auth("someone-else"),
    )
    assert r.status_code == 400


async def test_concurrent_attaches_of_one_file_link_it_once(api: ChatApi, user: str) -> None:
    file_id = (await api.upload(user, "race.txt", b"r", "text/plain")).json()["id"]
    messages = [uuid.uuid4() for _ in range(6)]
    results = await asyncio.gather(
        *(
            api.client.post(
                f"/api/v1/messages/{m}/attachments",
                json={"file_ids": [file_id]},
                headers=auth(user),
            )
            for m in messages
        )
    )
    assert sorted(r.status_code for r in results) == [200] + [400] * 5
    winner = messages[[r.status_code for r in results].index(200)]
    (row,) = await api.fetch("SELECT message_id FROM chat_files WHERE id=$1", uuid.UUID(file_id))
    assert row["message_id"] == winner


async def test_uploads_and_rejections_are_counted(api: ChatApi, user: str) -> None:
    def sample(name: str, **labels: str) -> float:
        return REGISTRY.get_sample_value(name, labels) or 0.0

    before_ok = sample("docproc_upload_chat_files_total", file_type="text")
    before_bad = sample("docproc_upload_rejections_total", rule="content_mismatch")
    await api.upload(user, "ok.txt", b"fine", "text/plain")
    await api.upload(user, "bad.pdf", b"not a pdf", "application/pdf")
    assert sample("docproc_upload_chat_files_total", file_type="text") == before_ok + 1
    assert sample("docproc_upload_rejections_total", rule="content_mismatch") == before_bad + 1


async def test_small_uploads_do_not_wait_for_a_heavy_parse(api: ChatApi, user: str) -> None:
    """A PDF being parsed in a child process leaves the API answering text uploads."""
    heavy = asyncio.create_task(
        api.upload(user, "many.pdf", gen.pdf_many_pages(2500), "application/pdf")
    )
    await asyncio.sleep(0.05)
    started = time.monotonic()
    small = await api.upload(user, "quick.txt", b"quick", "text/plain")
    quick = time.monotonic() - started
    assert small.status_code == 201
    response = await heavy
    assert response.status_code == 201
    assert quick < 2.0
