"""The chaos run (issue #14): mixed documents pushed through the five services as processes
while a seeded sequence of faults (``docproc_testing.faults``) hits them, then the
invariant checker. ``bench/chaos.py`` runs it at size; ``tests/faults/test_chaos.py`` runs a
small one in CI.

The documents are PDF, Word, Excel and plain text, every one about its own words; some
are uploaded again with ``replace``, some deleted once accepted. A client that is told
"busy" (429/503 with ``Retry-After``) or loses its connection to a restarting upload
service waits and tries again, as a client does; an upload whose answer was lost is
found by its row. The run ends when every document of the run's knowledge base has left
``processing`` after the last fault.
"""

from __future__ import annotations

import io
import random
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx
import openpyxl

from docproc_testing import faults
from docproc_testing.documents import make_docx, make_pdf
from docproc_testing.proxies import S3FaultProxy

WORDS = (
    "tapir okapi quokka dugong narwhal axolotl pangolin kakapo gharial saola numbat "
    "fossa aye-aye tarsier binturong markhor serow takin zorilla jerboa"
).split()
KINDS = {"text": 0.45, "pdf": 0.25, "docx": 0.25, "xlsx": 0.05}
"""The share of each kind of document (an Excel file is read by LiteParse and LibreOffice,
by far the slowest)."""


class Chaotic(faults.Deployment, Protocol):
    """A deployment the run can call: ``tests.e2e.harness.Cluster``."""

    def admin(self, *, via: str = "upload") -> httpx.Client: ...


@dataclass(frozen=True, slots=True)
class Document:
    name: str
    kind: str
    lines: tuple[str, ...]

    @property
    def data(self) -> bytes:
        lines = self.lines
        if self.kind == "pdf":
            return make_pdf(["\n".join(lines[k : k + 20]) for k in range(0, len(lines), 20)])
        if self.kind == "docx":
            return make_docx(lines)
        if self.kind == "xlsx":
            return make_xlsx([["n", "fact"], *([str(j), line] for j, line in enumerate(lines))])
        return "\n\n".join(lines).encode()

    def revised(self) -> Document:
        """The same file name with a line more: what a ``replace`` uploads."""
        return Document(self.name, self.kind, (*self.lines, f"{self.name} was revised."))


def make_xlsx(rows: Sequence[Sequence[str]]) -> bytes:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    assert sheet is not None
    for row in rows:
        sheet.append(list(row))
    out = io.BytesIO()
    workbook.save(out)
    return out.getvalue()


def corpus(seed: int, count: int, tag: str) -> list[Document]:
    """``count`` documents of the kinds in ``KINDS``, each naming its own facts."""
    rng = random.Random(seed)
    docs = []
    for i in range(count):
        kind = rng.choices(list(KINDS), weights=list(KINDS.values()))[0]
        animal = rng.choice(WORDS)
        lines = tuple(
            f"{tag} document {i}: the {animal} fact {i}.{j} is noted in part {j}."
            for j in range(rng.randint(3, 40))
        )
        extension = "txt" if kind == "text" else kind
        docs.append(Document(f"{tag}-{i:04d}.{extension}", kind, lines))
    return docs


@dataclass
class Report:
    documents: int = 0
    replaced: int = 0
    deleted: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    """Terminal state of every document row of the run's knowledge base."""
    answers: Counter[int] = field(default_factory=Counter)
    """Every HTTP status the API answered (a 5xx other than a busy 503 is a defect)."""
    faults: list[str] = field(default_factory=list)
    wall_s: float = 0.0
    drain_s: float = 0.0
    """From the end of the last fault to the last document leaving ``processing``."""
    violations: list[str] = field(default_factory=list)

    @property
    def documents_per_s(self) -> float:
        return self.documents / self.wall_s if self.wall_s else 0.0


class _Client:
    """Uploads and deletes as a patient client: busy answers and lost connections are waited
    out and tried again; an upload whose answer was lost is found by its row."""

    def __init__(self, cluster: Chaotic, kb: dict[str, Any], report: Report) -> None:
        self.cluster = cluster
        self.kb = kb
        self.report = report
        self.lock = threading.Lock()

    def _answered(self, status: int) -> None:
        with self.lock:
            self.report.answers[status] += 1

    def upload(self, doc: Document, *, replace: bool = False) -> uuid.UUID | None:
        form = {"ingestion": '{"parser": "liteparse"}'} if doc.kind == "xlsx" else None
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            since = self.cluster.query("SELECT now()")[0][0]
            try:
                with self.cluster.admin() as client:
                    r = client.post(
                        f"/kb/{self.kb['id']}/documents",
                        files={"file": (doc.name, doc.data)},
                        data=form,
                        params={"replace": "true"} if replace else None,
                    )
            except httpx.TransportError:
                found = self.cluster.query(
                    "SELECT id FROM rag_documents WHERE knowledge_base_id = $1 AND filename = $2 "
                    "AND created_at >= $3",
                    uuid.UUID(str(self.kb["id"])),
                    doc.name,
                    since,
                )
                if found:
                    return uuid.UUID(str(found[0][0]))
                time.sleep(1)
                continue
            self._answered(r.status_code)
            if r.status_code in (429, 503) and "retry-after" in r.headers:
                time.sleep(min(float(r.headers["retry-after"]), 5))
                continue
            if r.status_code != 202:
                return None
            return uuid.UUID(r.json()["tracking_id"])
        return None

    def delete(self, doc: uuid.UUID) -> None:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            try:
                with self.cluster.admin() as client:
                    r = client.delete(f"/rag/documents/{doc}")
            except httpx.TransportError:
                time.sleep(1)
                continue
            self._answered(r.status_code)
            if r.status_code in (429, 503):
                time.sleep(min(float(r.headers.get("retry-after", "1")), 5))
                continue
            return


def run(
    cluster: Chaotic,
    s3: S3FaultProxy,
    *,
    documents: int,
    plan: Sequence[faults.Fault],
    seed: int,
    check: Callable[[], list[Any]],
    concurrency: int = 8,
    replace_share: float = 0.1,
    delete_share: float = 0.05,
    say: Callable[[str], None] = print,
    create_kb: Callable[[httpx.Client], dict[str, Any]],
) -> Report:
    """Push ``documents`` into a new knowledge base while ``plan`` is injected; wait until
    every document has left ``processing``; then ``check()`` (the invariant checker)."""
    rng = random.Random(seed)
    report = Report()
    with cluster.admin() as admin:
        kb = create_kb(admin)
    client = _Client(cluster, kb, report)
    docs = corpus(seed, documents, f"c{seed}-{uuid.uuid4().hex[:4]}")
    replaced = set(rng.sample(range(documents), int(documents * replace_share)))
    rest = sorted(set(range(documents)) - replaced)
    deleted = set(rng.sample(rest, int(documents * delete_share)))

    def push(i: int) -> None:
        accepted = client.upload(docs[i])
        if accepted is None:
            return
        if i in replaced:
            client.upload(docs[i].revised(), replace=True)
        if i in deleted:
            client.delete(accepted)

    fault_rng = random.Random(seed + 1)
    ended = [time.monotonic()]

    def hit() -> None:
        for fault in plan:
            time.sleep(fault.after_s)
            faults.inject(cluster, fault, s3, say=say, rng=fault_rng)
            report.faults.append(fault.kind)
            ended[0] = time.monotonic()

    started = time.monotonic()
    injector = threading.Thread(target=hit, daemon=True)
    injector.start()
    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(push, range(documents)))
    injector.join()
    last_fault = ended[0] if plan else time.monotonic()
    kb_id = uuid.UUID(str(kb["id"]))
    deadline = time.monotonic() + 1800
    while time.monotonic() < deadline:
        left = cluster.query(
            "SELECT count(*) FROM rag_documents WHERE knowledge_base_id = $1 "
            "AND status = 'processing'",
            kb_id,
        )[0][0]
        if not left:
            break
        time.sleep(1)
    finished = time.monotonic()
    report.documents = documents
    report.replaced = len(replaced)
    report.deleted = len(deleted)
    report.wall_s = finished - started
    report.drain_s = max(0.0, finished - last_fault)
    report.statuses = Counter(
        dict(
            cluster.query(
                "SELECT status, count(*) FROM rag_documents WHERE knowledge_base_id = $1 "
                "GROUP BY status",
                kb_id,
            )
        )
    )
    report.violations = [str(v) for v in check()]
    return report
