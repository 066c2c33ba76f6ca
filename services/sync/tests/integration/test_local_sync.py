"""The ``local`` connector: a server directory, symbolic links never followed; what a run
matches a file to, and what a source files on the documents it brings."""

from __future__ import annotations

import hashlib
import os
import uuid
from pathlib import Path

import pytest
from docproc_common.db.models import DocumentStatus, KnowledgeBase, RagDocument
from docproc_sync.testing import SyncBed
from sqlalchemy import update

pytestmark = pytest.mark.integration


async def test_directory_sync_skips_links_and_deletes_what_is_gone(
    bed: SyncBed, tmp_path: Path
) -> None:
    root = tmp_path / "share"
    (root / "a").mkdir(parents=True)
    (root / "b").mkdir()
    (root / "a" / "readme.md").write_text("alpha")
    (root / "b" / "readme.md").write_text("bravo")
    secret = tmp_path / "secret.md"
    secret.write_text("outside the share")
    (root / "link.md").symlink_to(secret)
    (root / "linkdir").symlink_to(tmp_path)
    kb = await bed.kb(scope="app", organization_id=None)
    src = await bed.source(kb, "local", {"path": str(root)})
    log = await bed.run(src.id)
    assert (log.status, log.total_files, log.ingested) == ("done", 2, 2)
    docs = await bed.documents(kb.id)
    assert sorted(d.source_path or "" for d in docs) == [
        str(root / "a" / "readme.md"),
        str(root / "b" / "readme.md"),
    ]
    await bed.finish_pipeline(kb.id)
    assert (await bed.run(src.id)).skipped == 2
    os.remove(root / "a" / "readme.md")
    gone = await bed.run(src.id)
    assert gone.deleted == 1
    assert [d.source_path for d in await bed.documents(kb.id)] == [str(root / "b" / "readme.md")]


async def test_a_missing_directory_is_an_error_not_a_deletion(bed: SyncBed, tmp_path: Path) -> None:
    root = tmp_path / "share"
    root.mkdir()
    (root / "x.md").write_text("x")
    kb = await bed.kb(scope="app", organization_id=None)
    src = await bed.source(kb, "local", {"path": str(root)})
    await bed.run(src.id)
    await bed.finish_pipeline(kb.id)
    (root / "x.md").unlink()
    root.rmdir()
    log = await bed.run(src.id)
    assert log.status == "error"
    assert len(await bed.documents(kb.id)) == 1


async def stored(bed: SyncBed, kb: KnowledgeBase, filename: str, content_hash: str | None) -> None:
    """A ``done`` document of ``kb`` as an upload files it: a name, no address."""
    async with bed.runtime.sessionmaker() as s, s.begin():
        s.add(
            RagDocument(
                collection_name=kb.collection_name,
                knowledge_base_id=kb.id,
                organization_id=kb.organization_id,
                filename=filename,
                filetype="md",
                status=DocumentStatus.DONE,
                vector_document_id=uuid.uuid4(),
                chunk_count=1,
                source="upload",
                source_path=None,
                content_hash=content_hash,
            )
        )


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


async def test_an_uploaded_file_synced_later_from_its_folder_is_replaced_not_duplicated(
    bed: SyncBed, tmp_path: Path
) -> None:
    """The specification's name match: an upload records no address, so the same name synced
    from the folder it came from is that document (unchanged: skipped; changed: replaced,
    counted as an update), never a second copy."""
    root = tmp_path / "share"
    root.mkdir()
    (root / "same.md").write_text("unchanged text")
    (root / "edited.md").write_text("edited text")
    kb = await bed.kb(scope="app", organization_id=None)
    await stored(bed, kb, "same.md", sha(b"unchanged text"))
    await stored(bed, kb, "edited.md", sha(b"the text as uploaded"))
    src = await bed.source(kb, "local", {"path": str(root)})
    log = await bed.run(src.id)
    assert (log.status, log.skipped, log.updated, log.ingested) == ("done", 1, 1, 0)
    await bed.finish_pipeline(kb.id)
    docs = {d.filename: d for d in await bed.documents(kb.id)}
    assert sorted(docs) == ["edited.md", "same.md"]
    assert docs["edited.md"].source_path == str(root / "edited.md")
    assert docs["same.md"].source_path is None  # the upload's row, kept as it is


async def test_a_stored_document_without_a_content_hash_is_reingested(
    bed: SyncBed, tmp_path: Path
) -> None:
    """No stored hash is no proof the file is unchanged: even when the source's claim has
    the file's very version (its change signal says nothing moved), the file is fetched
    and replaced instead of skipped as current."""
    root = tmp_path / "share"
    root.mkdir()
    (root / "old.md").write_text("indexed before hashes were stored")
    kb = await bed.kb(scope="app", organization_id=None)
    src = await bed.source(kb, "local", {"path": str(root)})
    assert (await bed.run(src.id)).ingested == 1
    await bed.finish_pipeline(kb.id)
    assert (await bed.run(src.id)).skipped == 1  # the signal settles it while the hash is there
    async with bed.runtime.sessionmaker() as s, s.begin():
        await s.execute(
            update(RagDocument)
            .where(RagDocument.knowledge_base_id == kb.id)
            .values(content_hash=None)
        )
    log = await bed.run(src.id)
    assert (log.skipped, log.updated, log.ingested) == (0, 1, 0)
    await bed.finish_pipeline(kb.id)
    (doc,) = await bed.documents(kb.id)
    assert doc.content_hash == sha(b"indexed before hashes were stored")


async def test_every_document_a_source_brings_inherits_its_organizational_unit(
    bed: SyncBed, tmp_path: Path
) -> None:
    """A source's default unit is filed on each document it brings, across the slices of a
    long run too; a source with none files none."""
    sliced = SyncBed(bed.runtime, bed.settings.model_copy(update={"run_slice_s": 1e-6}))
    root = tmp_path / "share"
    root.mkdir()
    for n in range(3):
        (root / f"f{n}.md").write_text(f"file {n}")
    filed = await sliced.kb(scope="app", organization_id=None)
    src = await sliced.source(filed, "local", {"path": str(root)}, organizational_unit="HR")
    assert (await sliced.run(src.id)).ingested == 3
    assert [d.organizational_unit for d in await sliced.documents(filed.id)] == ["HR"] * 3
    unfiled = await bed.kb(scope="app", organization_id=None)
    plain = await bed.source(unfiled, "local", {"path": str(root)})
    assert (await bed.run(plain.id)).ingested == 3
    assert [d.organizational_unit for d in await bed.documents(unfiled.id)] == [None] * 3
