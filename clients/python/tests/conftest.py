"""The client's tests run against a running docproc (``docproc dev``): ``DOCPROC_URL``, and
``DOCPROC_TOKEN`` (a token with ``collections:view`` and ``collections:edit``) and
``DOCPROC_OTHER_TOKEN`` (the same for a user of another organisation). In CI,
``tests/clients/test_published.py`` starts ``docproc dev``, installs the built wheel with
both extras in a fresh virtual environment and runs these tests there.

Locally, on a ``docproc dev`` at :8000 (``ENV=dev``, so ``docproc token`` signs with the
development key it accepts)::

    export DOCPROC_URL=http://127.0.0.1:8000
    export DOCPROC_TOKEN=$(docproc token --user alice --org acme \\
        --permission collections:view --permission collections:edit)
    export DOCPROC_OTHER_TOKEN=$(docproc token --user bob --org globex \\
        --permission collections:view --permission collections:edit)
    pytest clients/python/tests
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import docproc_client
import pytest
from docproc_client import Docproc
from docproc_client.generated.models import KnowledgeBaseOut

#: One chunk per page of the PDF and per section of the note (the default is 2,500).
SMALL_CHUNKS = {"chunk_size": 60, "chunk_overlap": 0}
PAGES = ["The atlas shows the old lighthouse.", "The tide tables for the harbour."]
NOTE = "# Leave\n\nHow the keepers rest.\n\n## Holidays\n\nEvery keeper takes thirty days of holiday a year.\n"


def pytest_report_header() -> str:
    """Which ``docproc_client`` the tests import (CI checks that it is the wheel's)."""
    return f"docproc_client: {docproc_client.__file__}"


def make_pdf(pages: list[str]) -> bytes:
    """A PDF of one line of Helvetica per page (PyMuPDF, the default parser, reads it)."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>"
        % (b" ".join(b"%d 0 R" % (4 + 2 * i) for i in range(len(pages))), len(pages)),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    for i, text in enumerate(pages):
        escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        stream = b"BT /F1 12 Tf 72 720 Td (%s) Tj ET" % escaped.encode("latin-1")
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792]"
            b" /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % (5 + 2 * i)
        )
        objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream))
    out = b"%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return out


@dataclass
class World:
    base: KnowledgeBaseOut
    pdf: bytes
    documents: dict[str, str]  # filename -> document id


@pytest.fixture(scope="session")
def docproc() -> Iterator[Docproc]:
    with Docproc.from_env() as client:
        yield client


@pytest.fixture(scope="session")
def other() -> Iterator[Docproc]:
    with Docproc(os.environ["DOCPROC_URL"], os.environ["DOCPROC_OTHER_TOKEN"]) as client:
        yield client


@pytest.fixture(scope="session")
def world(docproc: Docproc, tmp_path_factory: pytest.TempPathFactory) -> World:
    """A base holding a two-page PDF (uploaded from a path), a markdown note (as text) and
    a text file (an open file), all indexed."""
    suffix = uuid.uuid4().hex[:8]
    base = docproc.create_knowledge_base(
        f"Client handbook {suffix}",
        collection_name=f"client_{suffix}",
        scope="org",
        embedding_provider="local",
        embedding_model="sentence-transformers/all-MiniLM-L6-v2",
    )
    pdf = make_pdf(PAGES)
    path = tmp_path_factory.mktemp("files") / "atlas.pdf"
    path.write_bytes(pdf)
    uploads = [
        docproc.upload(base.id, path, ingestion=SMALL_CHUNKS),
        docproc.upload_text(base.id, NOTE, filename="keeper.md", ingestion=SMALL_CHUNKS),
    ]
    log = path.with_name("log.txt")
    log.write_text("The keeper wound the clockwork at dusk.")
    with log.open("rb") as handle:
        uploads.append(docproc.upload(base.name, handle))  # by its name, from an open file
    status = docproc.wait_indexed(base.id, timeout=240)
    assert (status.indexed_count, status.failed_count) == (3, 0), status
    return World(base, pdf, {u.filename: str(u.tracking_id) for u in uploads})


def here() -> Path:
    return Path(__file__).parent
