"""Narrowing a search: OR within a field, AND across, fail closed, the legacy filter string."""

from __future__ import annotations

import datetime as dt
import io
from typing import Any

import docx
import httpx
import pytest
from docproc_common.events import DocumentAccepted
from docproc_common.runtime import Runtime
from docproc_upload.search import service
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from .conftest import Client
from .test_tenancy import EDIT, MODEL, VIEW, create, uniq, wait_complete

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
async def corpus(client: Client) -> dict[str, Any]:
    c = client("alice", "acme", (VIEW, EDIT))
    kb = await create(c, uniq("facets"), "org")
    docs = {
        "hr.txt": ("Vacation policy for employees and holidays.", "hr"),
        "eng.md": ("# Vacation\n\nEngineering vacation rota and holidays.", "engineering"),
        "blank.txt": ("Vacation notes without a unit.", " "),
    }
    ids = {}
    for name, (body, unit) in docs.items():
        r = await c.post(
            f"/kb/{kb['id']}/documents",
            files={"file": (name, body.encode())},
            data={"organizational_unit": unit},
        )
        assert r.status_code == 202
        ids[name] = r.json()["tracking_id"]
    await wait_complete(c, kb["id"])
    return {"client": c, "kb": kb, "ids": ids}


async def search(c: httpx.AsyncClient, kb: dict[str, Any], **body: Any) -> httpx.Response:
    return await c.post(
        "/rag/search",
        json={
            "query": "vacation holidays",
            "collections": [kb["collection_name"]],
            "top_k": 10,
            **body,
        },
    )


def names(r: httpx.Response) -> set[str]:
    assert r.status_code == 200, r.text
    return {h["filename"] for h in r.json()["results"]}


async def test_or_within_a_field_and_across_fields(corpus: dict[str, Any]) -> None:
    c, kb = corpus["client"], corpus["kb"]
    assert names(await search(c, kb)) == {"hr.txt", "eng.md", "blank.txt"}
    assert names(await search(c, kb, filters={"organizational_unit": ["hr", "engineering"]})) == {
        "hr.txt",
        "eng.md",
    }
    assert names(
        await search(
            c, kb, filters={"organizational_unit": ["hr", "engineering"], "document_type": ["md"]}
        )
    ) == {"eng.md"}
    assert names(await search(c, kb, filters={"source": ["upload"], "document_type": ["txt"]})) == {
        "hr.txt",
        "blank.txt",
    }


async def test_a_chunk_without_a_value_fails_closed(corpus: dict[str, Any]) -> None:
    c, kb = corpus["client"], corpus["kb"]
    # blank.txt was filed with a blank unit: recorded as none, so no unit filter matches it
    assert "blank.txt" not in names(
        await search(c, kb, filters={"organizational_unit": ["", " ", "hr"]})
    )
    assert names(await search(c, kb, filters={"date_from": "2000-01-01"})) == set()


async def test_filter_values_report_what_is_really_there(corpus: dict[str, Any]) -> None:
    c, kb = corpus["client"], corpus["kb"]
    r = await c.get(f"/rag/collections/{kb['collection_name']}/filter-values")
    assert r.json() == {"organizational_unit": ["engineering", "hr"]}


async def test_an_empty_list_is_422_naming_the_field(corpus: dict[str, Any]) -> None:
    r = await search(corpus["client"], corpus["kb"], filters={"source": []})
    assert r.status_code == 422
    assert r.json()["error"]["details"]["fields"][0]["field"] == "filters.source"


async def test_a_reversed_date_range_is_422_naming_date_to(corpus: dict[str, Any]) -> None:
    r = await search(
        corpus["client"], corpus["kb"], filters={"date_from": "2024-02-01", "date_to": "2024-01-31"}
    )
    assert r.status_code == 422
    [field] = r.json()["error"]["details"]["fields"]
    assert field["field"] == "filters.date_to"
    assert "before date_from" in field["message"]
    same_day = {"date_from": "2024-02-01", "date_to": "2024-02-01"}
    assert (await search(corpus["client"], corpus["kb"], filters=same_day)).status_code == 200


async def test_a_source_outside_the_vocabulary_is_400_naming_the_field(
    corpus: dict[str, Any],
) -> None:
    """``source`` is a fixed vocabulary (the seed): a value nothing stamps would match
    nothing in silence, so it is refused, naming the values docproc stamps."""
    c, kb = corpus["client"], corpus["kb"]
    r = await search(c, kb, filters={"source": ["upload", "dropbox"]})
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert error["details"]["fields"] == [
        {"field": "filters.source", "message": "not a source docproc stamps"}
    ]
    assert "'dropbox'" in error["message"]
    assert all(known in error["message"] for known in ("upload", "cli", "s3", "google_drive"))
    synced = {"source": ["s3", "google_drive", "cli"]}  # known, none of them here
    assert names(await search(c, kb, filters=synced)) == set()


async def test_the_legacy_filter_string(corpus: dict[str, Any]) -> None:
    c, kb, ids = corpus["client"], corpus["kb"], corpus["ids"]
    assert names(await search(c, kb, filter=f'parent_doc_id == "{ids["hr.txt"]}"')) == {"hr.txt"}
    refused = await search(c, kb, filter="source == 'upload'")
    assert refused.status_code == 400
    assert refused.json()["error"]["details"]["fields"][0]["field"] == "filter"
    conflict = await search(
        c,
        kb,
        filter=f'parent_doc_id == "{ids["hr.txt"]}"',
        filters={"parent_doc_id": ids["eng.md"]},
    )
    assert conflict.status_code == 400


async def test_documents_are_paginated_by_cursor(corpus: dict[str, Any]) -> None:
    c, kb = corpus["client"], corpus["kb"]
    first = (await c.get(f"/kb/{kb['id']}/documents", params={"limit": 2})).json()
    assert first["total"] == 3
    assert len(first["items"]) == 2
    second = (
        await c.get(
            f"/kb/{kb['id']}/documents", params={"limit": 2, "cursor": first["next_cursor"]}
        )
    ).json()
    assert len(second["items"]) == 1
    assert second["next_cursor"] is None
    seen = {d["filename"] for d in first["items"] + second["items"]}
    assert seen == {"hr.txt", "eng.md", "blank.txt"}
    assert all(d["has_file"] for d in first["items"])


async def test_retry_refuses_a_document_that_did_not_fail(corpus: dict[str, Any]) -> None:
    c, ids = corpus["client"], corpus["ids"]
    r = await c.post(f"/rag/documents/{ids['hr.txt']}/retry")
    assert r.status_code == 400
    assert r.json()["error"]["message"] == "Only a failed document can be retried"


async def accepted_events(s: AsyncSession, document_id: str) -> int:
    return int(
        (
            await s.execute(
                text(
                    "SELECT count(*) FROM outbox WHERE topic = :t AND payload->>'document_id' = :d"
                ),
                {"t": DocumentAccepted.TOPIC, "d": document_id},
            )
        ).scalar_one()
    )


async def test_retry_refuses_a_failed_document_without_a_stored_original(
    client: Client, runtime: Runtime
) -> None:
    c = client("alice", "acme", (VIEW, EDIT))
    kb = await create(c, uniq("noorig"), "org")
    r = await c.post(f"/kb/{kb['id']}/documents", files={"file": ("blank.txt", b" \n\t\n ")})
    assert r.status_code == 202, r.text
    doc = r.json()["tracking_id"]
    await wait_complete(c, kb["id"])
    async with runtime.sessionmaker() as s, s.begin():
        # as a synced document, whose staged copy is gone once parsed
        await s.execute(
            text("UPDATE rag_documents SET storage_path = NULL WHERE id = :d"), {"d": doc}
        )
        events = await accepted_events(s, doc)
    failed = (await c.get(f"/kb/{kb['id']}/documents")).json()["items"][0]
    assert (failed["status"], failed["has_file"]) == ("error", False)

    r = await c.post(f"/rag/documents/{doc}/retry")
    assert r.status_code == 400
    assert r.json()["error"]["message"].startswith(
        "This document has no stored original to retry from; upload it again"
    )
    after = (await c.get(f"/kb/{kb['id']}/documents")).json()["items"][0]
    assert after == failed  # still failed, same message: nothing was queued
    async with runtime.sessionmaker() as s:
        assert await accepted_events(s, doc) == events == 1  # the upload's own


async def test_the_documents_own_date_narrows_a_search(client: Client) -> None:
    c = client("alice", "acme", (VIEW, EDIT))
    kb = await create(c, uniq("dated"), "org")
    for name, day in (("old.txt", "2019-03-01"), ("new.txt", " 2024-06-30 "), ("undated.txt", "")):
        r = await c.post(
            f"/kb/{kb['id']}/documents",
            files={"file": (name, b"Vacation policy and holidays.")},
            data={"document_date": day},
        )
        assert r.status_code == 202, r.text
    await wait_complete(c, kb["id"])

    assert names(await search(c, kb, filters={"date_from": "2020-01-01"})) == {"new.txt"}
    # inclusive at both ends; the undated document fails closed
    assert names(await search(c, kb, filters={"date_to": "2024-06-30"})) == {"old.txt", "new.txt"}
    r = await search(c, kb, filters={"date_from": "2019-03-01", "date_to": "2019-03-01"})
    assert names(r) == {"old.txt"}
    assert r.json()["results"][0]["metadata"]["document_date"] == "2019-03-01"
    assert names(await search(c, kb)) == {"old.txt", "new.txt", "undated.txt"}


@pytest.mark.parametrize("day", ["2024-13-01", "2024-02-30", "01/02/2024", "20240101", "yesterday"])
async def test_a_bad_document_date_is_400_and_leaves_nothing(
    client: Client, runtime: Runtime, day: str
) -> None:
    c = client("alice", "acme", (VIEW, EDIT))
    kb = await create(c, uniq("baddate"), "org")
    r = await c.post(
        f"/kb/{kb['id']}/documents",
        files={"file": ("a.txt", b"Some text.")},
        data={"document_date": day},
    )
    assert r.status_code == 400
    error = r.json()["error"]
    assert error["message"] == "document_date must be a calendar date written YYYY-MM-DD"
    assert [f["field"] for f in error["details"]["fields"]] == ["document_date"]
    async with runtime.sessionmaker() as s:
        rows = await s.execute(
            text("SELECT count(*) FROM rag_documents WHERE knowledge_base_id = :k"),
            {"k": kb["id"]},
        )
        assert rows.scalar_one() == 0
    assert not (runtime.settings.storage.media_dir / "rag" / kb["collection_name"]).exists()


def docx_created(text_: str, created: dt.datetime) -> bytes:
    document = docx.Document()
    document.add_paragraph(text_)
    document.core_properties.created = created
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


async def test_without_a_document_date_the_files_metadata_dates_it(
    client: Client, runtime: Runtime
) -> None:
    c = client("alice", "acme", (VIEW, EDIT))
    kb = await create(c, uniq("metadate"), "org")
    body = docx_created("Vacation policy and holidays.", dt.datetime(2021, 5, 4, 9, 30))
    for name, given in (("meta.docx", ""), ("told.docx", "2024-01-15")):
        r = await c.post(
            f"/kb/{kb['id']}/documents",
            files={"file": (name, body)},
            data={"document_date": given},
        )
        assert r.status_code == 202, r.text
    await wait_complete(c, kb["id"])
    async with runtime.sessionmaker() as s:
        rows: dict[str, dt.date] = dict(
            (
                await s.execute(
                    text(
                        "SELECT filename, document_date FROM rag_documents "
                        "WHERE knowledge_base_id = :k AND status = 'done'"
                    ),
                    {"k": kb["id"]},
                )
            ).all()
        )
    # the uploader's date wins over the file's own
    assert rows == {"meta.docx": dt.date(2021, 5, 4), "told.docx": dt.date(2024, 1, 15)}
    r = await search(c, kb, filters={"date_from": "2021-05-04", "date_to": "2021-05-04"})
    assert names(r) == {"meta.docx"}


async def test_one_unreachable_collection_refuses_the_search_before_a_vector_is_read(
    client: Client, corpus: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    c, kb = corpus["client"], corpus["kb"]
    other = await create(client("bob", "globex", (VIEW, EDIT)), uniq("theirs"), "org")
    read: list[str] = []
    real = service.search_collection

    async def recording(session: Any, collection: str, *args: Any, **kwargs: Any) -> Any:
        read.append(collection)
        return await real(session, collection, *args, **kwargs)

    monkeypatch.setattr(service, "search_collection", recording)
    assert names(await search(c, kb)) == {"hr.txt", "eng.md", "blank.txt"}
    assert read == [kb["collection_name"]]
    read.clear()
    for order in (
        [kb["collection_name"], other["collection_name"]],
        [other["collection_name"], kb["collection_name"]],
    ):
        r = await c.post("/rag/search", json={"query": "vacation", "collections": order})
        assert r.status_code == 404
        assert r.json()["error"]["message"] == "Collection not found"
    assert read == []  # not even the reachable one was read


async def test_a_search_is_never_billed_to_another_organizations_key(client: Client) -> None:
    """A base reached only through a grant is another organization's: embedding the query
    with its configuration would spend its key on this caller's text. So the search
    resolves to the caller's own base or an app-scoped one and otherwise is refused,
    naming the bases; a personal base outside any organization is its owner's own."""
    alice = client("alice", "acme", (VIEW, EDIT))
    bob = client("bob", "globex", (VIEW, EDIT))
    theirs = await create(alice, uniq("granted"), "org")
    r = await alice.put(f"/kb/{theirs['id']}/grants", json={"user_id": "bob", "permission": "edit"})
    assert r.status_code == 204
    assert (await bob.get(f"/kb/{theirs['id']}")).status_code == 200  # the grant reaches it
    for body, field in (
        ({"collections": [theirs["collection_name"]]}, "collections"),
        ({"knowledge_base_ids": [theirs["id"]]}, "knowledge_base_ids"),
    ):
        for mode in ("vector", "keyword"):
            r = await bob.post("/rag/search", json={"query": "policy", "mode": mode, **body})
            assert r.status_code == 400, r.text
            error = r.json()["error"]
            assert error["details"]["fields"][0]["field"] == field
            assert theirs["id"] in error["message"]
            assert "another organization's key" in error["message"]
    # bob's own base on the name (the edit grant lets him claim it) is what his search uses
    await create(bob, theirs["collection_name"], "org")
    r = await bob.post(
        "/rag/search", json={"query": "policy", "collections": [theirs["collection_name"]]}
    )
    assert r.status_code == 200, r.text
    solo = client("solo", None, (VIEW, EDIT))
    own = await create(solo, uniq("solo"), "personal")
    r = await solo.post("/rag/search", json={"query": "q", "knowledge_base_ids": [own["id"]]})
    assert r.status_code == 200, r.text


async def test_filter_values_stay_within_the_bases_the_caller_reaches(client: Client) -> None:
    """An org base and its owner's personal twin share a name (and a table); a colleague
    reaches only the org base, and sees only its organizational units."""
    name = uniq("shared")
    alice = client("alice", "acme", (VIEW, EDIT))
    colleague = client("carol", "acme", (VIEW,))
    for scope, unit in (("org", "hr"), ("personal", "private-notes")):
        kb = await create(alice, name, scope)
        r = await alice.post(
            f"/kb/{kb['id']}/documents",
            files={"file": ("a.txt", b"Some policy text.")},
            data={"organizational_unit": unit},
        )
        assert r.status_code == 202, r.text
        await wait_complete(alice, kb["id"])
    for c, units in ((alice, ["hr", "private-notes"]), (colleague, ["hr"])):
        r = await c.get(f"/rag/collections/{name}/filter-values")
        assert r.status_code == 200, r.text
        assert r.json() == {"organizational_unit": units}


async def test_keyword_and_hybrid_modes_through_the_api(corpus: dict[str, Any]) -> None:
    """``mode`` on the search: keyword matches any word by BM25 (no embedding), hybrid fuses
    both rankings, both under the same filters; a search naming no mode is hybrid."""
    c, kb = corpus["client"], corpus["kb"]
    r = await search(c, kb, query="rota", mode="keyword")
    assert names(r) == {"eng.md"}
    hybrid = await search(c, kb, query="engineering rota", mode="hybrid")
    assert hybrid.json()["results"][0]["filename"] == "eng.md"
    assert names(hybrid) == {"hr.txt", "eng.md", "blank.txt"}  # the vector ranking's too
    filtered = await search(
        c, kb, query="rota", mode="hybrid", filters={"organizational_unit": ["hr"]}
    )
    assert names(filtered) == {"hr.txt"}
    default = (await search(c, kb, query="engineering rota")).json()["results"]
    assert default == hybrid.json()["results"]
    vector = (await search(c, kb, query="engineering rota", mode="vector")).json()["results"]
    assert [h["score"] for h in default] != [h["score"] for h in vector]
    r = await search(c, kb, mode="fuzzy")
    assert r.status_code == 422
    assert r.json()["error"]["details"]["fields"][0]["field"] == "mode"


async def test_a_collection_chooses_its_text_search_configuration(client: Client) -> None:
    c = client("alice", "acme", (VIEW, EDIT))
    name = uniq("english")
    body: dict[str, Any] = {"name": name, "collection_name": name, **MODEL}
    for bad in ("klingon", "english; DROP TABLE x", "English"):
        r = await c.post("/kb", json={**body, "text_search_config": bad})
        assert r.status_code == 400, r.text
        assert r.json()["error"]["details"]["fields"][0]["field"] == "text_search_config"
    r = await c.post("/kb", json={**body, "text_search_config": "english"})
    assert r.status_code == 201, r.text
    kb = r.json()
    assert kb["text_search_config"] == "english"
    r = await c.post(f"/rag/collections/{name}", json={"scope": "personal"})
    assert r.status_code == 201, r.text
    assert r.json()["text_search_config"] == "english"  # adopted from the name
    r = await c.post(
        f"/rag/collections/{name}", json={"scope": "personal", "text_search_config": "simple"}
    )
    assert r.status_code == 400, r.text
    assert r.json()["error"]["details"]["fields"][0]["field"] == "text_search_config"
    r = await c.post(
        f"/kb/{kb['id']}/documents",
        files={"file": ("jobs.txt", b"The nightly jobs were running slowly.")},
    )
    assert r.status_code == 202, r.text
    await wait_complete(c, kb["id"])
    r = await search(c, kb, query="job runs", mode="keyword")
    assert names(r) == {"jobs.txt"}  # english stems: jobs/job, running/runs


async def _bases_named(runtime: Runtime, collection: str) -> int:
    async with runtime.sessionmaker() as s:
        count = await s.scalar(
            text("SELECT count(*) FROM knowledge_bases WHERE collection_name = :c"),
            {"c": collection},
        )
    return int(count or 0)


async def test_a_collection_stores_its_embeddings_as_halfvec_when_asked(
    client: Client, runtime: Runtime
) -> None:
    c = client("alice", "acme", (VIEW, EDIT))
    name = uniq("half")
    body: dict[str, Any] = {"name": name, "collection_name": name, **MODEL}
    for bad in ("float16", "HALFVEC", "", 16):
        r = await c.post("/kb", json={**body, "vector_type": bad})
        assert r.status_code == 422, r.text
        assert r.json()["error"]["details"]["fields"][0]["field"] == "vector_type"
    r = await c.post(f"/rag/collections/{name}", json={"vector_type": "half"})
    assert r.status_code == 422, r.text
    assert r.json()["error"]["details"]["fields"][0]["field"] == "vector_type"
    assert await _bases_named(runtime, name) == 0  # the refusals kept nothing
    r = await c.post(f"/rag/collections/{name}", json={**MODEL, "vector_type": "halfvec"})
    assert r.status_code == 201, r.text
    kb = r.json()
    assert kb["vector_type"] == "halfvec"
    r = await c.post("/kb", json={**body, "name": "twin", "scope": "personal"})
    assert r.status_code == 201, r.text
    assert r.json()["vector_type"] == "halfvec"  # adopted from the name
    r = await c.post("/kb", json={**body, "scope": "personal", "vector_type": "vector"})
    assert r.status_code == 400, r.text
    assert r.json()["error"]["details"]["fields"][0]["field"] == "vector_type"
    assert await _bases_named(runtime, name) == 2  # the collection's base and its twin only
    r = await c.post(
        f"/kb/{kb['id']}/documents",
        files={"file": ("lighthouse.txt", b"The lighthouse keeper logs every passing ship.")},
    )
    assert r.status_code == 202, r.text
    await wait_complete(c, kb["id"])
    async with runtime.sessionmaker() as s:
        column = await s.scalar(
            text(
                "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
                "WHERE attrelid = to_regclass(:t) AND attname = 'embedding'"
            ),
            {"t": f"rag_{name}"},
        )
        index = await s.scalar(
            text("SELECT indexdef FROM pg_indexes WHERE indexname = :i"),
            {"i": f"rag_{name}_embedding_idx"},
        )
    assert column == "halfvec(384)"
    assert "halfvec_cosine_ops" in index
    for mode in ("vector", "hybrid"):
        r = await search(c, kb, query="who records the ships?", mode=mode)
        assert names(r) == {"lighthouse.txt"}


async def test_a_new_collection_is_halfvec_unless_it_asks_for_vector(client: Client) -> None:
    c = client("alice", "acme", (VIEW, EDIT))
    name = uniq("vt")
    r = await c.post("/kb", json={"name": name, **MODEL, "vector_type": "vector"})
    assert r.status_code == 201, r.text
    chosen = {None: (await create(c, uniq("vt")))["vector_type"], "vector": r.json()["vector_type"]}
    assert chosen == {None: "halfvec", "vector": "vector"}
