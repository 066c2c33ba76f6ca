"""A knowledge base's evaluation sets through the whole API on the embedded pipeline: made
from JSON or BEIR's files, run in every mode on the base as it stands, kept with the
base's settings and listed as history; bad inputs refused naming the field with nothing
stored; reach as the base's (another organization's caller finds nothing, a viewer reads
but does not run); one run of a set at a time; the scheduled run that exports
``docproc_retrieval_ndcg_at_10``."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from docproc_common.db.models import KnowledgeBase
from docproc_common.embedding.client import EmbeddingClients
from docproc_common.errors import NotFound
from docproc_common.runtime import Runtime
from docproc_upload.evaluations import repository, schedule, service
from docproc_upload.evaluations.schemas import MAX_BEIR_FILE_BYTES, MAX_QUERIES
from sqlalchemy import text

from .conftest import Client
from .test_tenancy import EDIT, VIEW, create, uniq, upload, wait_complete

pytestmark = pytest.mark.integration

#: Four documents on four topics: each query's own document is its vector search's first.
DOCUMENTS = {
    "otters.txt": "Sea otters hold hands while they sleep so that they do not drift apart.",
    "volcano.txt": "Magma rises through the crust and erupts from a volcano as lava and ash.",
    "bread.txt": "Sourdough bread rises slowly because wild yeast ferments the flour overnight.",
    "chess.txt": "In chess, castling moves the king two squares towards a rook for safety.",
}
QUERIES = [
    ("q1", "why do otters hold hands when sleeping", "otters.txt"),
    ("q2", "how does lava come out of a volcano", "volcano.txt"),
    ("q3", "what makes sourdough rise", "bread.txt"),
]
MODES = {"vector", "keyword", "hybrid"}


async def indexed_base(alice: httpx.AsyncClient) -> tuple[dict[str, Any], dict[str, str]]:
    """A new base of ``DOCUMENTS``, indexed; its document ids by file name."""
    kb = await create(alice, uniq("evals"), "org")
    ids = {}
    for name, body in DOCUMENTS.items():
        r = await upload(alice, kb["id"], name, body)
        assert r.status_code == 202, r.text
        ids[name] = r.json()["tracking_id"]
    await wait_complete(alice, kb["id"])
    return kb, ids


@pytest.fixture(scope="module")
async def base(client: Client) -> dict[str, Any]:
    alice = client("alice", "acme", (VIEW, EDIT))
    kb, ids = await indexed_base(alice)
    return {"client": alice, "kb": kb, "ids": ids}


def judged(ids: dict[str, str], *, by_id: bool = False) -> list[dict[str, Any]]:
    return [
        {"id": q, "text": t, "relevant": {ids[doc] if by_id and q == "q1" else doc: 1}}
        for q, t, doc in QUERIES
    ]


async def evaluations_stored(runtime: Runtime, kb_id: str) -> int:
    async with runtime.sessionmaker() as s:
        return len(await repository.evaluations_of(s, uuid.UUID(kb_id)))


async def test_create_run_and_history(base: dict[str, Any], runtime: Runtime) -> None:
    c, kb, ids = base["client"], base["kb"], base["ids"]
    r = await c.post(
        f"/kb/{kb['id']}/evaluations",
        json={"name": "topics", "queries": judged(ids, by_id=True)},
    )
    assert r.status_code == 201, r.text
    evaluation = r.json()
    assert (evaluation["query_count"], evaluation["judgment_count"]) == (3, 3)
    assert evaluation["latest_run"] is None
    detail = (await c.get(f"/kb/{kb['id']}/evaluations/{evaluation['id']}")).json()
    # each document kept by its id, whether it was named by id or by file name
    assert [q["relevant"] for q in detail["queries"]] == [{ids[doc]: 1} for _, _, doc in QUERIES]

    first = await c.post(f"/kb/{kb['id']}/evaluations/{evaluation['id']}/run")
    assert first.status_code == 201, first.text
    run = first.json()
    assert (run["trigger"], run["status"], run["started_by"]) == ("manual", "ok", "alice")
    assert set(run["scores"]) | set(run["skipped"]) == MODES
    assert run["scores"]["vector"]["ndcg_at_10"] == 1.0  # each topic's document first
    assert run["scores"]["vector"]["recall_at_100"] == 1.0
    for scores in run["scores"].values():
        assert all(0.0 <= v <= 1.0 for v in scores.values())
    assert (run["query_count"], run["missing_documents"]) == (3, 0)
    settings = run["settings"]
    assert settings["embedding_model"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert settings["ingestion_config"]["chunk_size"] == 2500
    assert settings["search_default_mode"] in MODES
    assert settings["hybrid_vector_weight"] == 0.6  # the product's blend: the base names none

    # a settings change, then a second run: the history shows what each ran with
    patched = await c.patch(
        f"/kb/{kb['id']}",
        json={"ingestion_config": {"chunk_size": 1200}, "hybrid_vector_weight": 0.8},
    )
    assert patched.status_code == 200, patched.text
    second = (await c.post(f"/kb/{kb['id']}/evaluations/{evaluation['id']}/run")).json()
    assert second["settings"]["ingestion_config"]["chunk_size"] == 1200
    assert second["settings"]["hybrid_vector_weight"] == 0.8

    history = (await c.get(f"/kb/{kb['id']}/evaluations/{evaluation['id']}/runs")).json()
    assert [h["id"] for h in history] == [second["id"], run["id"]]
    assert (await c.get(f"/kb/{kb['id']}/evaluations/{evaluation['id']}/runs?limit=1")).json()[0][
        "id"
    ] == second["id"]
    listed = (await c.get(f"/kb/{kb['id']}/evaluations")).json()
    assert [e["latest_run"]["id"] for e in listed if e["id"] == evaluation["id"]] == [second["id"]]
    async with runtime.sessionmaker() as s:
        actions = {
            a
            for (a,) in await s.execute(
                text("SELECT action FROM audit_log WHERE target = :t"), {"t": kb["id"]}
            )
        }
    assert {
        "kb.evaluation_created",
        "kb.evaluation_run",
        "kb.hybrid_vector_weight_changed",
    } <= actions


def beir_files(queries: list[dict[str, Any]], qrels: list[str]) -> dict[str, Any]:
    return {
        "queries": ("queries.jsonl", "\n".join(json.dumps(q) for q in queries).encode()),
        "qrels": ("test.tsv", "\n".join(["query-id\tcorpus-id\tscore", *qrels]).encode()),
    }


async def test_a_beir_upload_maps_corpus_ids_to_file_name_stems(base: dict[str, Any]) -> None:
    c, kb, ids = base["client"], base["kb"], base["ids"]
    files = beir_files(
        [{"_id": q, "text": t} for q, t, _ in QUERIES] + [{"_id": "unjudged", "text": "x"}],
        [f"{q}\t{doc.removesuffix('.txt')}\t1" for q, _, doc in QUERIES] + ["q3\tchess\t0"],
    )
    r = await c.post(f"/kb/{kb['id']}/evaluations/beir", data={"name": "beir"}, files=files)
    assert r.status_code == 201, r.text
    assert (r.json()["query_count"], r.json()["judgment_count"]) == (3, 4)
    detail = (await c.get(f"/kb/{kb['id']}/evaluations/{r.json()['id']}")).json()
    assert detail["queries"][2]["relevant"] == {ids["bread.txt"]: 1, ids["chess.txt"]: 0}
    run = await c.post(f"/kb/{kb['id']}/evaluations/{r.json()['id']}/run")
    assert run.json()["scores"]["vector"]["ndcg_at_10"] == 1.0
    assert (await c.delete(f"/kb/{kb['id']}/evaluations/{r.json()['id']}")).status_code == 204
    assert (await c.get(f"/kb/{kb['id']}/evaluations/{r.json()['id']}")).status_code == 404


def fields(r: httpx.Response) -> list[str]:
    return [f["field"] for f in r.json()["error"]["details"]["fields"]]


async def test_bad_inputs_name_the_field_and_store_nothing(
    base: dict[str, Any], runtime: Runtime
) -> None:
    c, kb, ids = base["client"], base["kb"], base["ids"]
    before = await evaluations_stored(runtime, kb["id"])
    url = f"/kb/{kb['id']}/evaluations"
    queries = judged(ids)

    unknown = [
        *queries,
        {"id": "q4", "text": "t", "relevant": {"nope.txt": 1, ids["chess.txt"]: 2}},
    ]
    r = await c.post(url, json={"name": "bad", "queries": unknown})
    assert r.status_code == 400, r.text
    assert fields(r) == ["queries.3.relevant.nope.txt"]
    assert "'nope.txt'" in r.json()["error"]["message"]

    twice = [{"id": "q", "text": "t", "relevant": {"otters.txt": 1, ids["otters.txt"]: 2}}]
    r = await c.post(url, json={"name": "bad", "queries": twice})
    assert r.status_code == 400
    assert fields(r) == [f"queries.0.relevant.{ids['otters.txt']}"]

    too_many = [{"id": str(i), "text": "t", "relevant": {"otters.txt": 1}} for i in range(101)]
    r = await c.post(url, json={"name": "bad", "queries": too_many})
    assert (r.status_code, fields(r)) == (422, ["queries"])
    assert len(too_many) > MAX_QUERIES

    r = await c.post(url, json={"name": "", "queries": queries})
    assert (r.status_code, fields(r)) == (422, ["name"])
    r = await c.post(
        url, json={"name": "bad", "queries": [{"id": "q", "text": "t", "relevant": {"a": 0}}]}
    )
    assert (r.status_code, fields(r)) == (422, ["queries.0.relevant"])
    r = await c.post(url, json={"name": "bad", "queries": [*queries, queries[0]]})
    assert (r.status_code, fields(r)) == (422, ["queries"])

    beir = f"/kb/{kb['id']}/evaluations/beir"
    r = await c.post(beir, data={"name": "b"}, files=beir_files([], ["q1\totters\t1"]))
    assert (r.status_code, fields(r)) == (400, ["qrels"])
    assert "'q1'" in r.json()["error"]["message"]
    files = beir_files([{"_id": "q1", "text": "t"}], ["q1\tno-such-doc\t1"])
    r = await c.post(beir, data={"name": "b"}, files=files)
    assert (r.status_code, fields(r)) == (400, ["qrels"])
    assert "'no-such-doc'" in r.json()["error"]["message"]
    r = await c.post(beir, data={"name": "b"}, files={"qrels": files["qrels"]})
    assert (r.status_code, fields(r)) == (400, ["queries"])
    big = {**files, "queries": ("queries.jsonl", b" " * (MAX_BEIR_FILE_BYTES + 1))}
    r = await c.post(beir, data={"name": "b"}, files=big)
    assert (r.status_code, fields(r)) == (413, ["queries"])

    assert await evaluations_stored(runtime, kb["id"]) == before


async def test_reach_is_the_bases(base: dict[str, Any], client: Client) -> None:
    c, kb, ids = base["client"], base["kb"], base["ids"]
    made = await c.post(f"/kb/{kb['id']}/evaluations", json={"name": "r", "queries": judged(ids)})
    eid = made.json()["id"]
    outsider = client("bob", "globex", (VIEW, EDIT))
    viewer = client("vera", "acme", (VIEW,))
    base_url = f"/kb/{kb['id']}/evaluations"
    for r in [
        await outsider.get(base_url),
        await outsider.get(f"{base_url}/{eid}"),
        await outsider.get(f"{base_url}/{eid}/runs"),
        await outsider.post(f"{base_url}/{eid}/run"),
        await outsider.post(base_url, json={"name": "x", "queries": judged(ids)}),
        await outsider.delete(f"{base_url}/{eid}"),
    ]:
        assert r.status_code == 404, r.text
        assert r.json()["error"]["message"] == "Collection not found"
    # a viewer reads the sets and their history, and runs, makes or deletes none
    assert [e["id"] for e in (await viewer.get(base_url)).json()].count(eid) == 1
    assert (await viewer.get(f"{base_url}/{eid}/runs")).status_code == 200
    assert (await viewer.post(f"{base_url}/{eid}/run")).status_code == 404
    assert (await viewer.delete(f"{base_url}/{eid}")).status_code == 404
    # a set of another base is not found through this one
    other = await create(c, uniq("other"), "org")
    assert (await c.get(f"/kb/{other['id']}/evaluations/{eid}")).status_code == 404


async def test_one_run_of_a_set_at_a_time(base: dict[str, Any], runtime: Runtime) -> None:
    c, kb, ids = base["client"], base["kb"], base["ids"]
    eid = (
        await c.post(f"/kb/{kb['id']}/evaluations", json={"name": "l", "queries": judged(ids)})
    ).json()["id"]
    async with runtime.engine.connect() as other:
        conn = await other.execution_options(isolation_level="AUTOCOMMIT")
        assert await repository.try_lock_run(conn, uuid.UUID(eid))
        busy = await c.post(f"/kb/{kb['id']}/evaluations/{eid}/run")
        await repository.unlock_run(conn, uuid.UUID(eid))
    assert busy.status_code == 409, busy.text
    assert (await c.get(f"/kb/{kb['id']}/evaluations/{eid}/runs")).json() == []
    assert (await c.post(f"/kb/{kb['id']}/evaluations/{eid}/run")).status_code == 201


async def test_a_set_deleted_during_its_run_keeps_nothing(
    base: dict[str, Any], runtime: Runtime
) -> None:
    c, kb, ids = base["client"], base["kb"], base["ids"]
    eid = uuid.UUID(
        (
            await c.post(
                f"/kb/{kb['id']}/evaluations", json={"name": "gone", "queries": judged(ids)}
            )
        ).json()["id"]
    )
    clients = EmbeddingClients(runtime.settings)
    try:
        async with runtime.sessionmaker() as s, s.begin():
            row = await s.get(KnowledgeBase, uuid.UUID(kb["id"]))
            assert row is not None
            found = await repository.evaluation(s, row.id, eid)
            assert found is not None
            run = await service.plan_run(s, clients, row, found)
    finally:
        await clients.aclose()
    assert (await c.delete(f"/kb/{kb['id']}/evaluations/{eid}")).status_code == 204
    now = datetime.now(UTC)
    async with runtime.sessionmaker() as s:
        with pytest.raises(NotFound):
            async with s.begin():
                await service.record_run(s, None, run, service.Scored(now, now))


def gauge(exposition: str, kb_id: str) -> dict[str, float]:
    prefix = f'docproc_retrieval_ndcg_at_10{{collection_id="{kb_id}",mode="'
    return {
        line[len(prefix) :].split('"')[0]: float(line.rsplit(" ", 1)[1])
        for line in exposition.splitlines()
        if line.startswith(prefix)
    }


async def test_a_scheduled_run_exports_the_gauge(client: Client, runtime: Runtime) -> None:
    c = client("alice", "acme", (VIEW, EDIT))
    kb = await create(c, uniq("sched"), "org")
    for name in ("otters.txt", "volcano.txt"):
        assert (await upload(c, kb["id"], name, DOCUMENTS[name])).status_code == 202
    await wait_complete(c, kb["id"])
    queries = [{"id": q, "text": t, "relevant": {doc: 1}} for q, t, doc in QUERIES[:2]]
    eid = (
        await c.post(f"/kb/{kb['id']}/evaluations", json={"name": "s", "queries": queries})
    ).json()["id"]
    clients = EmbeddingClients(runtime.settings)
    try:
        assert await schedule.run_due(runtime, clients, None, 3600) >= 1
        assert await schedule.run_due(runtime, clients, None, 3600) == 0  # not due again yet
    finally:
        await clients.aclose()
    [scheduled] = (await c.get(f"/kb/{kb['id']}/evaluations/{eid}/runs")).json()
    assert (scheduled["trigger"], scheduled["status"], scheduled["started_by"]) == (
        "scheduled",
        "ok",
        None,
    )
    metrics = await c.get("http://127.0.0.1/metrics")
    exported = gauge(metrics.text, kb["id"])
    assert set(exported) == set(scheduled["scores"])
    assert exported["vector"] == 1.0
    assert kb["name"] not in metrics.text  # ids, never names

    # a manual run changes nothing the gauge shows; a deleted set leaves it
    assert (await c.post(f"/kb/{kb['id']}/evaluations/{eid}/run")).status_code == 201
    await schedule.refresh_gauge(runtime)
    assert gauge((await c.get("http://127.0.0.1/metrics")).text, kb["id"]) == exported
    assert (await c.delete(f"/kb/{kb['id']}/evaluations/{eid}")).status_code == 204
    await schedule.refresh_gauge(runtime)
    assert gauge((await c.get("http://127.0.0.1/metrics")).text, kb["id"]) == {}
