"""The journey through the deployed shape: the chart's pods as containers of the built images.

Run by `make deploy-smoke` (not part of `pytest tests`): the tests run in file order on
one release, the alert and dashboard checks last so they see the whole journey's metrics.
"""

from __future__ import annotations

import asyncio
import functools
import io
import json
import re
import shutil
import time
import uuid
from pathlib import Path
from typing import Any

import docx
import httpx
import pymupdf
import pytest
import yaml
from aiokafka import AIOKafkaProducer
from docproc_testing import api
from docproc_testing.office import soffice_convert
from docproc_testing.stores import S3Store

from deploy.smoke import broker
from deploy.smoke.conftest import CHART, VALUES, Stack, render
from deploy.smoke.pods import Release, component, run_hooks

# each step waits on the pipeline of a loaded machine (load 20-30 on two cores): the waits
# inside wait for a condition, each bounded generously, and this bounds their sum
pytestmark = pytest.mark.timeout(2400)
SERVICES = ("upload", "parser", "embedder", "sync", "teardown")


#: A pod's pipeline answers slower than a process's: longer waits, asked less often.
wait_for = functools.partial(api.wait_for, timeout=600, interval=1)


def make_pdf(text: str) -> bytes:
    doc: Any = pymupdf.open()  # type: ignore[no-untyped-call]
    page = doc.new_page()
    page.insert_textbox(pymupdf.Rect(50, 50, 550, 800), text, fontsize=10)  # type: ignore[no-untyped-call]
    data: bytes = doc.tobytes()
    return data


def make_docx(text: str) -> bytes:
    document: Any = docx.Document()
    document.add_paragraph(text)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def long_text(n: int) -> bytes:
    return "\n\n".join(
        f"Section {i}. " + " ".join(f"word{i}_{j} covers topic {i % 13} fully." for j in range(60))
        for i in range(n)
    ).encode()


def create_kb(client: httpx.Client, **ingestion: Any) -> dict[str, Any]:
    return api.create_kb(client, "smoke", ingestion_config=ingestion)


def upload(client: httpx.Client, kb: dict[str, Any], name: str, data: bytes) -> uuid.UUID:
    response = client.post(f"/kb/{kb['id']}/documents", files={"file": (name, data)})
    assert response.status_code == 202, response.text
    return uuid.UUID(response.json()["tracking_id"])


def wait_indexed(
    client: httpx.Client, kb: dict[str, Any], count: int, timeout: float = 900
) -> None:
    def done() -> bool:
        state = client.get(f"/kb/{kb['id']}/ingestion").json()
        return bool(state["indexed_count"] == count and state["indexing_status"] == "complete")

    wait_for(done, timeout=timeout, what=f"{count} documents of {kb['name']} indexed")


def search(client: httpx.Client, kb: dict[str, Any], query: str) -> list[dict[str, Any]]:
    response = client.post(
        "/rag/search", json={"query": query, "collections": [kb["collection_name"]], "top_k": 3}
    )
    assert response.status_code == 200, response.text
    hits: list[dict[str, Any]] = response.json()["results"]
    return hits


def one_chunk_set(stack: Stack, kb: dict[str, Any], doc_id: uuid.UUID) -> int:
    """The document's chunks in its collection's table, keyed by its vector document id
    (one per attempt): exactly ``chunk_count`` of them, and no other attempt's left over."""
    [(expected, vector_id)] = stack.query(
        "SELECT chunk_count, vector_document_id FROM rag_documents WHERE id = $1", doc_id
    )
    table = f"rag_{kb['collection_name']}"
    rows = stack.query(
        f"SELECT count(*), count(DISTINCT chunk_no) FROM {table} WHERE document_id = $1",
        vector_id,
    )[0]
    assert rows[0] == rows[1] == expected > 0, (rows, expected)
    [others] = stack.query(
        f"SELECT count(*) FROM {table} WHERE document_id <> $1 AND tracking_id = $2",
        vector_id,
        doc_id,
    )[0]
    assert others == 0, f"{others} chunks of another attempt of {doc_id}"
    return int(expected)


# ------------------------------------------------------------------ install


def test_hooks_ran_in_weight_order_then_every_deployment_is_ready(stack: Stack) -> None:
    assert stack.hooks_ran == ["docproc-migrate", "docproc-topics"]
    assert set(stack.containers) == set(SERVICES)
    for container in stack.containers.values():
        response = httpx.get(container.probe_url("readinessProbe"), timeout=5)
        assert response.status_code == 200, (container.name, response.text)


def test_containers_honour_the_charts_security_context(stack: Stack) -> None:
    for name, container in stack.containers.items():
        ids = container.exec("id", "-u")
        assert ids.stdout.strip() == "10001", (name, ids)
        # only the chart's emptyDir is writable: the root filesystem refuses a write
        tmp = container.exec("python", "-c", "open('/tmp/smoke-probe', 'w').write('x')")
        assert tmp.returncode == 0, (name, tmp.stderr)
        for path in ("/smoke-probe", "/app/smoke-probe", "/var/tmp/smoke-probe", "/run/x"):
            denied = container.exec("python", "-c", f"open({path!r}, 'w').write('x')")
            assert denied.returncode != 0, f"{name}: {path} is writable"
            assert "Read-only file system" in denied.stderr or "Permission" in denied.stderr


# ------------------------------------------------------------------ the journey


def test_a_pdf_and_a_docx_are_indexed_and_found(stack: Stack) -> None:
    with stack.admin() as client:
        kb = create_kb(client)
        upload(client, kb, "animals.pdf", make_pdf("The capybara is the largest rodent."))
        upload(client, kb, "birds.docx", make_docx("Penguins live in the southern hemisphere."))
        refused = client.post(f"/kb/{kb['id']}/documents", files={"file": ("x.exe", b"MZ")})
        assert refused.status_code == 400  # drives docproc_upload_rejections_total
        wait_indexed(client, kb, 2)
        rows = stack.query(
            "SELECT filename, status FROM rag_documents WHERE knowledge_base_id = $1 "
            "ORDER BY filename",
            uuid.UUID(kb["id"]),
        )
        assert [tuple(r) for r in rows] == [("animals.pdf", "done"), ("birds.docx", "done")]
        assert search(client, kb, "largest rodent")[0]["filename"] == "animals.pdf"
        assert search(client, kb, "where do penguins live")[0]["filename"] == "birds.docx"
        # kept for the scheduled runs (EVALUATIONS__SCHEDULE_INTERVAL_S in the smoke values)
        # that export docproc_retrieval_ndcg_at_10 for the dashboard and the alert
        evaluation = client.post(
            f"/kb/{kb['id']}/evaluations",
            json={
                "name": "smoke",
                "queries": [
                    {"id": "rodent", "text": "largest rodent", "relevant": {"animals.pdf": 1}},
                    {"id": "penguin", "text": "penguins", "relevant": {"birds.docx": 1}},
                ],
            },
        )
        assert evaluation.status_code == 201, evaluation.text


def test_a_chat_upload_returns_a_preview(stack: Stack) -> None:
    with stack.client(user_id="carol") as client:
        response = client.post(
            "/files/upload",
            files={"file": ("note.txt", b"Quarterly numbers\nare up.", "text/plain")},
        )
    assert response.status_code == 201, response.text
    assert "Quarterly numbers" in response.json()["preview"]


def test_the_upload_image_converts_a_chat_doc_with_libreoffice_writer_alone(
    stack: Stack, tmp_path: Path
) -> None:
    """Chat `.doc` is upload's one use of LibreOffice, and its image has Writer only: a Word
    97 file (made by the host's LibreOffice) converted in the running container, as uid
    10001 on its read-only root, its profile in the pod's /tmp (the wait is the check's,
    not the API's 60 s: LibreOffice's first start on a loaded machine is slow)."""
    source = tmp_path / "memo.txt"
    source.write_text("The memo was written in Writer.\n")
    upload_pod = stack.containers["upload"]
    [tmp] = [m for m in upload_pod.spec["volumeMounts"] if m["mountPath"] == "/tmp"]
    (upload_pod.volume_dir / tmp["name"] / "memo.doc").write_bytes(
        soffice_convert(tmp_path, source, "doc:MS Word 97", timeout=600)
    )
    converted = upload_pod.exec(
        "python",
        "-c",
        "from docproc_common.parsing.doc import convert_to_text; "
        "text, note = convert_to_text(open('/tmp/memo.doc', 'rb').read(), '.doc', 600); "
        "print(text.decode() if text else note)",
    )
    assert converted.returncode == 0, converted.stderr
    assert "The memo was written in Writer." in converted.stdout, converted.stdout
    # the components as the parser's own probe reads them: Writer, not Calc or Impress
    probe = upload_pod.exec(
        "python",
        "-c",
        "from docproc_common.formats import office_components; "
        "print(' '.join(sorted(office_components())))",
    )
    assert probe.stdout.split() == ["writer"], (probe.stdout, probe.stderr)


def test_an_s3_source_on_moto_syncs(stack: Stack) -> None:
    store = S3Store(stack.infra)
    store.put({"a/readme.md": b"# Otters\n\nSea otters hold hands while sleeping."})
    with stack.admin() as client:
        kb = create_kb(client)
        secret = client.post(
            "/secrets", json={"name": "smoke", "kind": store.secret_kind, "value": store.secret()}
        )
        assert secret.status_code == 201, secret.text
        created = client.post(
            f"/kb/{kb['id']}/sync-sources",
            json={
                "connector": store.connector,
                "config": store.config(),
                "secret_id": secret.json()["id"],
            },
        )
        assert created.status_code == 201, created.text
        source = created.json()["id"]
        run = client.post(f"/kb/{kb['id']}/sync-sources/{source}/run")
        assert run.status_code == 202, run.text
        log_id = run.json()["sync_log_id"]

        def finished() -> dict[str, Any] | None:
            page = client.get(f"/kb/{kb['id']}/sync-sources/{source}/logs").json()
            log = next(i for i in page["items"] if i["id"] == log_id)
            return log if log["status"] not in {"queued", "running"} else None

        log = wait_for(finished, what="the sync run")
        assert (log["status"], log["ingested"]) == ("done", 1), log
        wait_indexed(client, kb, 1)
        assert "otters" in search(client, kb, "otters sleeping")[0]["content"].lower()


def status_of(stack: Stack, doc_id: uuid.UUID) -> str:
    return str(stack.query("SELECT status FROM rag_documents WHERE id = $1", doc_id)[0][0])


def parsed_path(stack: Stack, doc_id: uuid.UUID) -> str | None:
    path = stack.query("SELECT parsed_path FROM rag_documents WHERE id = $1", doc_id)[0][0]
    return str(path) if path else None


def kill_mid_document(
    stack: Stack, client: httpx.Client, kb: dict[str, Any]
) -> tuple[uuid.UUID, int]:
    """SIGKILL the embedder once a document is parsed and still processing: the document it
    was killed in the middle of, and how many the base has. A machine fast enough to finish
    one before the kill lands gets the next, four times longer (a loaded one kills in the
    first)."""
    embedder = stack.containers["embedder"]
    for n, sections in enumerate((12, 48, 192), start=1):
        doc_id = upload(client, kb, f"long-{sections}.txt", long_text(sections))
        wait_for(lambda d=doc_id: parsed_path(stack, d), interval=0.2, what="it parsed")
        if status_of(stack, doc_id) != "processing":
            continue
        embedder.kill()
        if status_of(stack, doc_id) == "processing":
            return doc_id, n
        embedder.restart()  # it had finished: the kill was not mid-document
        embedder.wait_ready()
        wait_indexed(client, kb, n)
    raise AssertionError("every document finished before the kill; make them longer")


def test_the_embedder_killed_mid_document_sticks_fires_the_alert_and_finishes_once(
    stack: Stack,
) -> None:
    """The embedder SIGKILLed mid-document (a crashed pod: no shutdown hook) and left down:
    the document waits past STUCK_AFTER_MINUTES and Prometheus reports the chart's
    DocprocDocumentsStuck firing; restarted (the kubelet's restart, the pod's emptyDir kept),
    it finishes the document with one chunk set."""
    assert stack.prom is not None
    embedder = stack.containers["embedder"]
    with stack.admin() as client:
        # short chunks: many of them for little embedding
        kb = create_kb(client, chunk_size=500, chunk_overlap=50)
        doc_id, documents = kill_mid_document(stack, client, kb)

        def firing() -> dict[str, Any] | None:
            alerts = stack.prom.get("/api/v1/alerts")["alerts"] if stack.prom else []
            return next(
                (
                    a
                    for a in alerts
                    if a["labels"]["alertname"] == "DocprocDocumentsStuck"
                    and a["state"] == "firing"
                ),
                None,
            )

        alert = wait_for(firing, interval=5, what="DocprocDocumentsStuck firing")
        assert alert["labels"]["namespace"] == "docproc"
        assert alert["labels"]["service"] == "upload"
        assert "longer than 1 minutes" in alert["annotations"]["description"]
        assert status_of(stack, doc_id) == "processing"
        embedder.restart()
        embedder.wait_ready()
        wait_indexed(client, kb, documents)
    assert status_of(stack, doc_id) == "done"
    assert one_chunk_set(stack, kb, doc_id) > 20


def test_a_poison_message_is_dead_lettered(stack: Stack) -> None:
    """A payload that never validates goes to the parser's DLQ (the DLQ panels' data)."""

    async def produce() -> None:
        producer = AIOKafkaProducer(bootstrap_servers=stack.infra["KAFKA__BOOTSTRAP_SERVERS"])
        await producer.start()
        try:
            await producer.send_and_wait(
                stack.on_broker("docproc.documents.accepted.v1"), b'{"not": "an event"}'
            )
        finally:
            await producer.stop()

    asyncio.run(produce())
    assert stack.prom is not None
    wait_for(
        lambda: (
            stack.prom.query('docproc_parser_messages_total{outcome="dlq"} > 0')
            if stack.prom
            else None
        ),
        what="the parser's dlq counter scraped",
    )


# ------------------------------------------------------------------ upgrade


def next_chart(tmp: Path) -> Path:
    """The chart at its next patch version (what a release bump renders)."""
    chart = tmp / "docproc"
    shutil.copytree(CHART, chart)
    meta = yaml.safe_load((chart / "Chart.yaml").read_text())
    major, minor, patch = (int(x) for x in re.findall(r"\d+", meta["version"])[:3])
    meta["version"] = f"{major}.{minor}.{patch + 1}"
    (chart / "Chart.yaml").write_text(yaml.safe_dump(meta, sort_keys=False))
    return chart


def test_an_upgrade_reruns_the_migration_and_rolls_every_pod_without_losing_documents(
    stack: Stack, tmp_path: Path
) -> None:
    upgraded = Release(
        render([VALUES, stack.run_values], next_chart(tmp_path)), stack.release.secrets
    )
    chart_labels = {
        d["metadata"]["labels"]["helm.sh/chart"] for d in upgraded.of_kind("Deployment")
    }
    assert len(chart_labels) == 1
    assert chart_labels != {
        d["metadata"]["labels"]["helm.sh/chart"] for d in stack.release.of_kind("Deployment")
    }
    heads = stack.query("SELECT version_num FROM alembic_version")
    # pre-upgrade hooks: the migration a second time (at head: no harm), the topics again
    assert run_hooks(upgraded, f"smoke-{stack.run}-up", stack.workdir, stack.labels) == [
        "docproc-migrate",
        "docproc-topics",
    ]
    assert stack.query("SELECT version_num FROM alembic_version") == heads
    with stack.admin() as client:
        kb = create_kb(client)
        docs = [upload(client, kb, f"inflight-{i}.txt", long_text(4 + i)) for i in range(3)]
        indexed = stack.query(
            "SELECT count(*) FROM rag_documents WHERE knowledge_base_id = $1 AND status = 'done'",
            uuid.UUID(kb["id"]),
        )[0][0]
        assert indexed < len(docs), "everything finished before the upgrade; make them longer"
        # the rolling replacement, parser then embedder while the documents are in flight,
        # then the other three at once
        stack.replace(upgraded, "parser")
        stack.replace(upgraded, "embedder")
        stack.replace(upgraded, "upload", "sync", "teardown")
        wait_indexed(client, kb, len(docs))
    for doc_id in docs:
        one_chunk_set(stack, kb, doc_id)


def test_deleting_the_knowledge_base_lets_teardown_drop_its_table(stack: Stack) -> None:
    with stack.admin() as client:
        kb = create_kb(client)
        upload(client, kb, "gone.txt", b"to be torn down")
        wait_indexed(client, kb, 1)
        table = f"public.rag_{kb['collection_name']}"
        assert stack.query("SELECT to_regclass($1) IS NOT NULL", table)[0][0]
        assert client.delete(f"/kb/{kb['id']}").status_code == 200
    wait_for(
        lambda: not stack.query("SELECT to_regclass($1) IS NOT NULL", table)[0][0],
        what="teardown to drop the table",
    )


# ------------------------------------------------------------------ wiring against reality


def test_keda_triggers_name_the_groups_and_topics_the_services_use(stack: Stack) -> None:
    """Each ScaledObject's Kafka trigger against the live broker: the consumer groups of
    this release (its namespace), the topics their running members subscribe to, and the
    committed offsets KEDA's lag is computed from."""
    prefix = f"{stack.kafka_namespace}."

    def stable() -> dict[str, broker.Group] | None:
        groups = asyncio.run(
            broker.consumer_groups(stack.infra["KAFKA__BOOTSTRAP_SERVERS"], prefix)
        )
        ready = groups and all(g.state == "Stable" and g.subscribed for g in groups.values())
        return groups if ready else None

    live = wait_for(stable, interval=3, what="every consumer group stable")
    triggers: dict[str, set[str]] = {}
    for scaled in stack.release.of_kind("ScaledObject"):
        target = scaled["spec"]["scaleTargetRef"]["name"]
        assert target in {d["metadata"]["name"] for d in stack.release.of_kind("Deployment")}
        for trigger in scaled["spec"]["triggers"]:
            md = trigger["metadata"]
            assert trigger["type"] == "kafka"
            assert md["bootstrapServers"] == stack.infra["KAFKA__BOOTSTRAP_SERVERS"]
            assert int(md["lagThreshold"]) > 0
            triggers.setdefault(md["consumerGroup"], set()).add(md["topic"])
    # every consumer group of the release is scaled, on exactly the pipeline topics it reads
    # (its own retry topics aside: the lag that KEDA weighs is the pipeline topic's)
    pipeline = {
        name: {t for t in group.subscribed if ".retry." not in t} for name, group in live.items()
    }
    assert pipeline == triggers
    # the lag KEDA weighs is topic end offset minus the group's committed offset: every group
    # commits on its trigger topics (the journey sent each an event), none on another topic
    committed = {
        name: {t for t in group.committed if ".retry." not in t} for name, group in live.items()
    }
    assert all(committed.values()), committed
    for name, topics in committed.items():
        assert topics <= triggers[name], (name, topics)


def test_every_dashboard_panel_returns_data(stack: Stack) -> None:
    """Every panel's query answers series; a panel fed by periodic work (the scheduled
    evaluation runs) gets the moment that work takes on the pods the upgrade started."""
    assert stack.prom is not None
    prom = stack.prom
    stack.wait_scraped()
    [dashboards] = [
        d for d in stack.release.of_kind("ConfigMap") if d["metadata"]["name"].endswith("dashboard")
    ]
    panels = {
        panel["title"]: [
            t["expr"].replace("$namespace", "docproc").replace("$__rate_interval", "5m")
            for t in panel.get("targets", [])
            if t.get("expr")
        ]
        for raw in dashboards["data"].values()
        for panel in json.loads(raw)["panels"]
    }

    def empty() -> list[str]:
        return [
            title for title, exprs in panels.items() if exprs and not any(map(prom.query, exprs))
        ]

    deadline = time.monotonic() + 60
    while (missing := empty()) and time.monotonic() < deadline:
        time.sleep(2)
    assert not missing, f"panels with no data: {missing}"


def test_rules_and_targets_are_the_charts(stack: Stack) -> None:
    assert stack.prom is not None
    stack.wait_scraped()
    targets = stack.prom.get("/api/v1/targets")["activeTargets"]
    assert {t["labels"]["container"] for t in targets} == set(SERVICES)
    assert all(t["health"] == "up" for t in targets), targets
    # scraped on each pod's metrics port; its API port has no /metrics
    for t in targets:
        container = stack.containers[t["labels"]["container"]]
        metrics, api = container.port("metrics"), container.port("http")
        assert t["scrapeUrl"] == f"http://127.0.0.1:{metrics}/metrics", t
        assert httpx.get(f"http://127.0.0.1:{api}/metrics", timeout=5).status_code == 404
    groups = stack.prom.get("/api/v1/rules")["groups"]
    loaded = {r["name"] for g in groups for r in g["rules"]}
    [rule] = stack.release.of_kind("PrometheusRule")
    assert loaded == {r["alert"] for g in rule["spec"]["groups"] for r in g["rules"]}
    assert {component(d) for d in stack.release.of_kind("Deployment")} == set(SERVICES)
