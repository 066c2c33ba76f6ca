"""One Alembic history that matches the models, and runtime vector tables that it never owns."""

from __future__ import annotations

import asyncio

import pytest
from alembic import command
from alembic.script import ScriptDirectory
from docproc_common.db.engine import create_engine
from docproc_common.db.migrate import alembic_config
from docproc_common.settings import DatabaseSettings
from docproc_common.vectorstore import ensure_table
from docproc_testing.db import create_test_database
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

pytestmark = pytest.mark.integration


async def test_one_head_and_the_models_match_even_with_runtime_tables(
    infra: dict[str, str],
) -> None:
    url = await create_test_database(infra["DATABASE__URL"])
    config = alembic_config(url)
    assert len(ScriptDirectory.from_config(config).get_heads()) == 1
    engine = create_engine(DatabaseSettings(url=url))
    try:
        async with engine.begin() as conn:
            async with AsyncSession(bind=conn) as session:
                await ensure_table(session, "documents_archive", 384)
    finally:
        await engine.dispose()
    await asyncio.to_thread(command.check, config)  # raises if models and migrations differ


async def test_a_document_status_outside_the_three_is_refused_by_the_database(
    infra: dict[str, str],
) -> None:
    engine = create_engine(DatabaseSettings(url=await create_test_database(infra["DATABASE__URL"])))
    insert = (
        "INSERT INTO rag_documents (id, collection_name, filename, filesize, filetype, status, "
        "chunk_count, source, writer_kind, ingestion_config) VALUES (gen_random_uuid(), 'c', "
        "'f.txt', 0, 'txt', :status, 0, 'upload', 'document', '{}')"
    )
    try:
        async with engine.begin() as conn:
            for status in ("processing", "done", "error"):
                await conn.execute(text(insert), {"status": status})
        with pytest.raises(IntegrityError, match="ck_rag_documents_status"):
            async with engine.begin() as conn:
                await conn.execute(text(insert), {"status": "indexed"})
    finally:
        await engine.dispose()
