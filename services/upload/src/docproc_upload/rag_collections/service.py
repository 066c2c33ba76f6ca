"""What is addressed by collection name: its status, its filter values, its deletion.

A name reaches every knowledge base on it the caller may view (or edit); a name the
caller reaches nothing on is "Collection not found", as a denial is.
"""

from __future__ import annotations

from docproc_common.auth import Principal
from docproc_common.db.vector_tables import validate_collection_name
from docproc_common.names import lock_name
from docproc_common.unfiled import adopts_operator
from sqlalchemy.ext.asyncio import AsyncSession

from docproc_upload.access import Access, resolve_collection
from docproc_upload.knowledge_bases.schemas import CollectionDeletedOut
from docproc_upload.knowledge_bases.service import status_for, tear_down
from docproc_upload.rag_collections.schemas import CollectionInfo
from docproc_upload.search import repository as search


async def collection_info(session: AsyncSession, principal: Principal, name: str) -> CollectionInfo:
    validate_collection_name(name)
    kbs = await resolve_collection(session, principal, name, Access.VIEW)
    status = await status_for(session, name, kbs)
    vectors = await search.count_vectors(
        session, name, [kb.id for kb in kbs], include_operator=adopts_operator(kbs)
    )
    return CollectionInfo(collection_name=name, total_vectors=vectors, **status.model_dump())


async def delete_collection(
    session: AsyncSession, principal: Principal, name: str
) -> CollectionDeletedOut:
    """``DELETE /rag/collections/{name}``: every knowledge base on the name the caller may edit."""
    validate_collection_name(name)
    await lock_name(session, name)
    kbs = await resolve_collection(session, principal, name, Access.EDIT)
    return await tear_down(session, principal, name, kbs)


async def filter_values(session: AsyncSession, principal: Principal, name: str) -> list[str]:
    validate_collection_name(name)
    kbs = await resolve_collection(session, principal, name, Access.VIEW)
    return await search.filter_values(
        session, name, [kb.id for kb in kbs], include_operator=adopts_operator(kbs)
    )
