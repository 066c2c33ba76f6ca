"""Knowledge-base ingestion through the real pipeline: the embedded runtime (``docproc dev``:
all five services, the outbox bus, local storage, the local embedding model) on the test
Postgres, with the LlamaParse and vision stand-ins on 127.0.0.1.

The supported-format test pins the routing table: it asks ``GET /rag/supported-formats``
what each parser reads *here* and ingests one generated sample of every listed extension
until its row says ``done``, so no listed format can be accepted and then die in a worker.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from docproc_cli.embedded import run_dev
from docproc_common import vault
from docproc_common.auth import EDIT, VIEW, mint_token
from docproc_common.db.engine import create_engine, create_sessionmaker
from docproc_common.settings import (
    BusMode,
    BusSettings,
    DatabaseSettings,
    EmbedderSettings,
    HttpSettings,
    ParserSettings,
    Settings,
    StorageSettings,
)
from docproc_testing.auth import DEV_AUTH
from docproc_testing.db import create_test_database
from docproc_testing.infra import find_repo_root, load_infra_env
from docproc_testing.runtime import LOCAL_MODEL
from parser_samples import EXTENSIONS, MARKER, make, needs_tesseract, pdf, scanned_pdf
from parser_standins import LlamaParseStandIn, VisionStandIn, free_port

pytestmark = pytest.mark.integration

ORG = "acme"


@dataclass
class Dev:
    api: str
    media: Path
    settings: Settings
    llamaparse_secret: uuid.UUID
    vision_secret: uuid.UUID
    vision_url: str

    def client(
        self, user: str = "alice", org: str | None = ORG, **claims: Any
    ) -> httpx.AsyncClient:
        token = mint_token(
            DEV_AUTH,
            user_id=user,
            organization_id=org,
            permissions=claims.pop("permissions", [VIEW, EDIT]),
            **claims,
        )
        return httpx.AsyncClient(
            base_url=self.api, headers={"Authorization": f"Bearer {token}"}, timeout=60
        )

    def stored(self, collection: str) -> list[Path]:
        root = self.media / "rag" / collection
        return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


async def _secret(
    settings: Settings, kind: str, value: dict[str, str], provider: str | None
) -> uuid.UUID:
    engine = create_engine(settings.database)
    try:
        async with create_sessionmaker(engine)() as session, session.begin():
            secret = await vault.create_secret(
                session,
                owner_id="alice",
                organization_id=ORG,
                name=f"{kind}-test",
                kind=kind,
                value=value,
                visibility="org",
                master_key=settings.vault.key(),
                provider=provider,
            )
            return secret.id
    finally:
        await engine.dispose()


@pytest_asyncio.fixture(scope="module")
async def dev(
    tmp_path_factory: pytest.TempPathFactory,
    llamaparse_standin: tuple[LlamaParseStandIn, str],
    vision_standin: tuple[VisionStandIn, str],
) -> AsyncIterator[Dev]:
    infra = load_infra_env(("postgres",))
    database_url = await create_test_database(infra["DATABASE__URL"])
    tmp = tmp_path_factory.mktemp("dev")
    port = free_port()
    settings = Settings(
        env="dev",
        database=DatabaseSettings(url=database_url),
        bus=BusSettings(mode=BusMode.EMBEDDED, relay_interval_s=0.1),
        storage=StorageSettings(media_dir=tmp / "media"),
        embedder=EmbedderSettings(model_cache_dir=find_repo_root() / ".cache" / "models"),
        parser=ParserSettings(
            llamaparse_base_url=llamaparse_standin[1],
            vision_allowed_base_urls=[vision_standin[1]],
        ),
        http=HttpSettings(port=port),
    )
    stop = asyncio.Event()
    task = asyncio.create_task(run_dev(settings, stop))
    api = f"http://127.0.0.1:{port}"
    async with httpx.AsyncClient() as probe:
        for _ in range(600):
            if task.done():
                task.result()
            try:
                if (await probe.get(f"{api}/readyz")).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            await asyncio.sleep(0.1)
    llama = await _secret(settings, "llamaparse", {"api_key": llamaparse_standin[0].api_key}, None)
    key = vision_standin[0].api_key or ""
    vision_key = await _secret(settings, "api_key", {"api_key": key}, "openai")
    try:
        yield Dev(f"{api}/api/v1", tmp / "media", settings, llama, vision_key, vision_standin[1])
    finally:
        stop.set()
        await asyncio.wait_for(task, 60)


async def create_kb(client: httpx.AsyncClient, **config: Any) -> dict[str, Any]:
    name = f"kbp_{uuid.uuid4().hex[:10]}"
    response = await client.post(
        "/kb",
        json={
            "name": name,
            "collection_name": name,
            "scope": "org",
            **LOCAL_MODEL,
            "ingestion_config": config,
        },
    )
    assert response.status_code == 201, response.text
    return dict(response.json())


async def upload(
    client: httpx.AsyncClient, kb: dict[str, Any], name: str, data: bytes, **form: str
) -> httpx.Response:
    return await client.post(
        f"/kb/{kb['id']}/documents", files={"file": (name, data)}, data=form or None
    )


async def settled(
    client: httpx.AsyncClient, document_id: str, timeout: float = 240
) -> dict[str, Any]:
    """The document once it left ``processing`` (done or error)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        body = (await client.get(f"/rag/documents/{document_id}")).json()
        if body["status"] != "processing":
            return dict(body)
        if loop.time() > deadline:
            raise TimeoutError(f"{body['filename']} still processing")
        await asyncio.sleep(0.3)


def config_for(parser: str, d: Dev) -> dict[str, Any]:
    if parser == "llamaparse":
        return {"parser": parser, "llamaparse_secret_id": str(d.llamaparse_secret)}
    return {"parser": parser}


@pytest.mark.parametrize(
    "parser", ["pymupdf", pytest.param("liteparse", marks=needs_tesseract), "llamaparse"]
)
async def test_every_listed_format_is_ingested_for_real(dev: Dev, parser: str) -> None:
    async with dev.client() as client:
        answer = (await client.get("/rag/supported-formats", params={"parser": parser})).json()
        (formats,) = answer["parsers"]
        listed = {e.lstrip(".") for e in formats["extensions"]}
        assert {"txt", "md", "docx"} <= listed
        assert listed <= EXTENSIONS, f"no sample for {sorted(listed - EXTENSIONS)}: write one"
        kb = await create_kb(client, **config_for(parser, dev))
        accepted = {}
        for ext in sorted(listed):
            response = await upload(client, kb, f"sample.{ext}", make(ext))
            assert response.status_code == 202, (ext, response.text)
            accepted[ext] = response.json()["tracking_id"]
        results = {ext: await settled(client, doc) for ext, doc in accepted.items()}
    failed = {ext: r["error_message"] for ext, r in results.items() if r["status"] != "done"}
    assert not failed, failed
    for ext, doc in results.items():
        content = doc["content"].lower()
        if parser == "llamaparse" and ext not in {"pdf", "txt", "md", "docx"}:
            assert f"sample.{ext}" in content  # the stand-in's answer came back through the route
        else:
            assert MARKER in content, (ext, doc["content"][:200])
        assert doc["chunk_count"] >= 1
        assert doc["has_file"] is True
        assert doc["parser"] == parser


async def test_an_extension_the_parser_cannot_read_is_refused_before_anything_is_stored(
    dev: Dev,
) -> None:
    async with dev.client() as client:
        kb = await create_kb(client)
        for name in ("budget.xlsx", "scan.png", "notes"):
            response = await upload(client, kb, name, b"whatever")
            assert response.status_code == 400, response.text
            assert response.json()["error"]["details"]["fields"][0]["field"] == "file"
        status = (await client.get(f"/kb/{kb['id']}/ingestion")).json()
        assert status["document_count"] == 0
    assert dev.stored(kb["collection_name"]) == []


@pytest.mark.parametrize(
    ("override", "field"),
    [
        ({"chunk_overlap": 4096}, "ingestion_config"),
        ({"chunk_size": 0}, "ingestion_config.chunk_size"),
        ({"chunk_sise": 100}, "ingestion_config.chunk_sise"),
        ({"parser": "llamaparse"}, "ingestion_config"),
        ({"ocr_language": "english"}, "ingestion_config.ocr_language"),
    ],
)
async def test_a_bad_override_pair_is_a_400_before_the_file_or_a_row_exists(
    dev: Dev, override: dict[str, Any], field: str
) -> None:
    async with dev.client() as client:
        kb = await create_kb(client)
        response = await upload(client, kb, "a.txt", b"hello", ingestion=json.dumps(override))
        assert response.status_code == 400
        assert [f["field"] for f in response.json()["error"]["details"]["fields"]] == [field]
        assert (await client.get(f"/kb/{kb['id']}/ingestion")).json()["document_count"] == 0
        assert dev.stored(kb["collection_name"]) == []
        own = await client.post(
            "/kb",
            json={
                "name": "x",
                **LOCAL_MODEL,
                "ingestion_config": {"chunk_size": 2500, **override},
            },
        )
        assert own.status_code == 422
        assert [f["field"] for f in own.json()["error"]["details"]["fields"]] == [field]


async def test_an_override_changes_only_this_upload(dev: Dev) -> None:
    async with dev.client() as client:
        kb = await create_kb(client, chunk_size=400, chunk_overlap=50)
        text = ("The capybara is the largest rodent. " * 40).encode()
        small = (await upload(client, kb, "a.txt", text)).json()["tracking_id"]
        big = (await upload(client, kb, "b.txt", text, ingestion='{"chunk_size": 5000}')).json()
        small_doc, big_doc = await settled(client, small), await settled(client, big["tracking_id"])
        assert small_doc["chunk_count"] > 1
        assert big_doc["chunk_count"] == 1


async def test_organizational_unit_is_recorded_and_blank_means_none(dev: Dev) -> None:
    async with dev.client() as client:
        kb = await create_kb(client)
        named = await upload(client, kb, "a.txt", b"capybara", organizational_unit="  Finance  ")
        blank = await upload(client, kb, "b.txt", b"capybara", organizational_unit="   ")
        none = await upload(client, kb, "c.txt", b"capybara")
        units = [
            (await settled(client, r.json()["tracking_id"]))["organizational_unit"]
            for r in (named, blank, none)
        ]
    assert units == ["Finance", None, None]


@pytest.mark.parametrize(
    ("name", "data", "override", "kind"),
    [
        ("damaged.pdf", b"%PDF-1.7\n" + b"\x00broken" * 200, {}, "FileDataError"),
        ("locked.pdf", None, {}, "EncryptedDocument"),
        ("empty.txt", b" \n\n ", {}, "EmptyDocument"),
        ("blank.pdf", pdf([""]), {}, "EmptyDocument"),
        pytest.param(
            "slow.pdf",
            scanned_pdf(pages=40, dpi=300),
            {"parser": "liteparse", "liteparse_dpi": 600, "parse_timeout_seconds": 5},
            "ParseTimeout",
            marks=needs_tesseract,  # the OCR is what takes the time
        ),
    ],
)
async def test_bad_input_ends_in_error_with_the_three_part_message(
    dev: Dev, name: str, data: bytes | None, override: dict[str, Any], kind: str
) -> None:
    if data is None:
        import pymupdf

        doc: Any = pymupdf.open(stream=pdf(), filetype="pdf")  # type: ignore[no-untyped-call]
        data = doc.tobytes(encryption=4, user_pw="u", owner_pw="o")  # AES-256
    assert data is not None
    async with dev.client() as client:
        kb = await create_kb(client)
        response = await upload(client, kb, name, data, ingestion=json.dumps(override))
        assert response.status_code == 202
        doc_out = await settled(client, response.json()["tracking_id"])
        assert doc_out["status"] == "error"
        message = doc_out["error_message"]
        assert message.startswith(f"The document could not be parsed ({kind}) - ")
        assert "retry the upload" in message
        assert doc_out["content"] is None
        # the worker lives on: the next document is parsed
        ok = await upload(client, kb, "ok.txt", b"The capybara is the largest rodent.")
        assert (await settled(client, ok.json()["tracking_id"]))["status"] == "done"


async def test_images_are_described_into_every_page_and_chunks_carry_text(
    dev: Dev, vision_standin: tuple[VisionStandIn, str]
) -> None:
    import pymupdf
    from parser_samples import text_png

    standin = vision_standin[0]
    standin.reset()
    logo = text_png("LOGO")
    doc: Any = pymupdf.open()  # type: ignore[no-untyped-call]
    for number in (1, 2, 3):
        page = doc.new_page()
        page.insert_text((72, 72), f"Quarterly report page {number}.")
        page.insert_image(pymupdf.Rect(72, 100, 272, 164), stream=logo)  # type: ignore[no-untyped-call]
    data: bytes = doc.tobytes()
    async with dev.client() as client:
        kb = await create_kb(
            client,
            image_description=True,
            vision_profile={
                "base_url": f"{dev.vision_url}/v1",
                "model": standin.model,
                "secret_id": str(dev.vision_secret),
            },
        )
        response = await upload(client, kb, "report.pdf", data)
        out = await settled(client, response.json()["tracking_id"])
        assert out["status"] == "done", out["error_message"]
        assert sum(standin.asked.values()) == 1  # three xrefs, identical bytes: described once
        (digest,) = standin.asked
        assert out["content"].count(f"[Image: {standin.describe(digest)}]") == 3
        hits = (
            await client.post(
                "/rag/search",
                json={"query": "picture", "collections": [kb["collection_name"]], "top_k": 5},
            )
        ).json()["results"]
        assert hits and any("[Image: A picture number" in h["content"] for h in hits)
        assert not any("base64" in h["content"] or "\x89PNG" in h["content"] for h in hits)


async def test_a_selected_vision_profile_is_resolved_and_used_when_parsing(
    dev: Dev, vision_standin: tuple[VisionStandIn, str]
) -> None:
    """The collection names a vision model profile, not an endpoint: the parser resolves it
    (its address, model and key) when it parses."""
    import pymupdf
    from parser_samples import text_png

    standin = vision_standin[0]
    standin.reset()
    doc: Any = pymupdf.open()  # type: ignore[no-untyped-call]
    page = doc.new_page()
    page.insert_text((72, 72), "Annual report cover.")
    page.insert_image(pymupdf.Rect(72, 100, 272, 164), stream=text_png("CHART"))  # type: ignore[no-untyped-call]
    async with dev.client() as client:
        made = await client.post(
            "/vision-profiles",
            json={
                "name": f"standin-{uuid.uuid4().hex[:6]}",
                "provider": "openai-compatible",
                "base_url": f"{dev.vision_url}/v1",
                "model": standin.model,
                "secret_id": str(dev.vision_secret),
            },
        )
        assert made.status_code == 201, made.text
        kb = await create_kb(client, image_description=True, vision_profile_id=made.json()["id"])
        assert kb["ingestion_config"]["vision_profile_id"] == made.json()["id"]
        response = await upload(client, kb, "cover.pdf", doc.tobytes())
        out = await settled(client, response.json()["tracking_id"])
    assert out["status"] == "done", out["error_message"]
    (digest,) = standin.asked  # the profile's address, model and key answered
    assert f"[Image: {standin.describe(digest)}]" in out["content"]


async def test_a_synced_document_keeps_no_original(dev: Dev, tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("# Rodents\n\nThe capybara is the largest rodent.\n")
    # a server directory is synced by an app admin who may also write the base
    async with dev.client() as client, dev.client("root", app_admin=True) as admin:
        kb = await create_kb(client)
        response = await admin.post(
            "/rag/sync/local", json={"path": str(tmp_path), "knowledge_base_id": kb["id"]}
        )
        assert response.status_code == 202, response.text
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 120
        items: list[dict[str, Any]] = []
        while not items and loop.time() < deadline:
            items = (await client.get(f"/kb/{kb['id']}/documents")).json()["items"]
            await asyncio.sleep(0.3)
        synced = await settled(client, items[0]["id"])
        uploaded = await settled(
            client, (await upload(client, kb, "up.md", b"# Up\n\ncapybara")).json()["tracking_id"]
        )
    assert synced["status"] == "done" and MARKER in synced["content"]
    assert synced["has_file"] is False
    assert uploaded["has_file"] is True
    kept = [p.name for p in dev.stored(kb["collection_name"]) if "parsed" not in p.parts]
    assert any(name.endswith("_up.md") for name in kept)
    assert not any("_staged" in str(p) for p in dev.stored(kb["collection_name"]))


async def test_a_document_one_may_not_view_is_the_same_404_as_none(dev: Dev) -> None:
    async with dev.client() as client:
        kb = await create_kb(client)
        response = await upload(client, kb, "a.txt", b"The capybara is the largest rodent.")
        tracking = response.json()["tracking_id"]
        await settled(client, tracking)
    async with (
        dev.client("mallory", "evil-corp") as other,
        dev.client("bob", ORG, permissions=[]) as bob,
    ):
        denied = await other.get(f"/rag/documents/{tracking}")
        no_permission = await bob.get(f"/rag/documents/{tracking}")
        absent = await other.get(f"/rag/documents/{uuid.uuid4()}")
    assert denied.status_code == no_permission.status_code == absent.status_code == 404
    assert denied.json() == no_permission.json() == absent.json()


async def test_the_content_view_pages_long_text(dev: Dev) -> None:
    body = "The capybara is the largest rodent. " * 100
    async with dev.client() as client:
        kb = await create_kb(client)
        response = await upload(client, kb, "long.txt", body.encode())
        tracking = response.json()["tracking_id"]
        whole = await settled(client, tracking)
        window = (
            await client.get(f"/rag/documents/{tracking}", params={"offset": 10, "limit": 50})
        ).json()
    assert whole["content_length"] in (len(body), len(body.strip()))
    assert window["content"] == whole["content"][10:60]
    assert window["content_truncated"] is True and whole["content_truncated"] is False


async def test_a_cloud_parser_that_keeps_failing_ends_in_error_not_processing(
    dev: Dev, llamaparse_standin: tuple[LlamaParseStandIn, str]
) -> None:
    standin = llamaparse_standin[0]
    standin.reset(upload_status=503)
    try:
        async with dev.client() as client:
            kb = await create_kb(client, **config_for("llamaparse", dev))
            response = await upload(client, kb, "a.pdf", pdf())
            out = await settled(client, response.json()["tracking_id"], timeout=180)
            tried = standin.uploads
    finally:
        standin.reset()
    assert out["status"] == "error"
    assert out["error_message"].startswith(
        "The document could not be parsed (LlamaParseUnavailable) - it failed 5 times"
    )
    assert tried >= 5  # every attempt asked (a 503 created no job, so nothing was billed)
