"""All SQL of the chat-attachment API."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from docproc_common.db.models import ChatAttachmentRender, ChatFile
from sqlalchemy import func, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession


async def own_file(session: AsyncSession, user_id: str, file_id: uuid.UUID) -> ChatFile | None:
    """The caller's file or None: ownership is the whole rule, there is no second branch."""
    row = await session.execute(
        select(ChatFile).where(ChatFile.id == file_id, ChatFile.user_id == user_id)
    )
    return row.scalar_one_or_none()


async def own_files(
    session: AsyncSession, user_id: str, file_ids: Sequence[uuid.UUID]
) -> dict[uuid.UUID, ChatFile]:
    rows = await session.execute(
        select(ChatFile).where(ChatFile.id.in_(list(file_ids)), ChatFile.user_id == user_id)
    )
    return {f.id: f for f in rows.scalars()}


async def lock_own_files(
    session: AsyncSession, user_id: str, file_ids: Sequence[uuid.UUID]
) -> dict[uuid.UUID, ChatFile]:
    """The caller's files among ``file_ids``, row-locked until the transaction ends.

    Locks are taken in id order, so two requests over overlapping sets cannot deadlock.
    """
    rows = await session.execute(
        select(ChatFile)
        .where(ChatFile.id.in_(list(file_ids)), ChatFile.user_id == user_id)
        .order_by(ChatFile.id)
        .with_for_update()
    )
    return {f.id: f for f in rows.scalars()}


async def link(session: AsyncSession, file_ids: Sequence[uuid.UUID], message_id: uuid.UUID) -> None:
    await session.execute(
        update(ChatFile).where(ChatFile.id.in_(list(file_ids))).values(message_id=message_id)
    )


async def workspace_usage(
    session: AsyncSession, user_id: str, agent_id: str, conversation_id: str
) -> int:
    """Bytes attachments already wrote into one workspace (its quota's use)."""
    row = await session.execute(
        select(func.coalesce(func.sum(ChatAttachmentRender.workspace_bytes), 0)).where(
            ChatAttachmentRender.user_id == user_id,
            ChatAttachmentRender.agent_id == agent_id,
            ChatAttachmentRender.conversation_id == conversation_id,
        )
    )
    return int(row.scalar_one())


@dataclass(frozen=True, slots=True)
class RenderRow:
    file_id: uuid.UUID
    message_id: uuid.UUID | None
    mode: str
    workspace_path: str | None
    workspace_bytes: int
    history_text: str


async def save_renders(
    session: AsyncSession,
    user_id: str,
    agent_id: str,
    conversation_id: str,
    rows: Sequence[RenderRow],
) -> None:
    """Upsert one row per (file, agent, conversation); bytes written once are never forgotten."""
    if not rows:
        return
    stmt = insert(ChatAttachmentRender).values(
        [
            {
                "id": uuid.uuid4(),
                "file_id": r.file_id,
                "message_id": r.message_id,
                "user_id": user_id,
                "agent_id": agent_id,
                "conversation_id": conversation_id,
                "mode": r.mode,
                "workspace_path": r.workspace_path,
                "workspace_bytes": r.workspace_bytes,
                "history_text": r.history_text,
            }
            for r in rows
        ]
    )
    table = ChatAttachmentRender.__table__
    stmt = stmt.on_conflict_do_update(
        index_elements=[table.c.file_id, table.c.agent_id, table.c.conversation_id],
        set_={
            "message_id": stmt.excluded.message_id,
            "mode": stmt.excluded.mode,
            "workspace_path": func.coalesce(stmt.excluded.workspace_path, table.c.workspace_path),
            "workspace_bytes": func.greatest(
                stmt.excluded.workspace_bytes, table.c.workspace_bytes
            ),
            "history_text": stmt.excluded.history_text,
            "updated_at": func.now(),
        },
    )
    await session.execute(stmt)


async def message_files(
    session: AsyncSession,
    user_id: str,
    message_id: uuid.UUID,
    agent_id: str | None,
    conversation_id: str | None,
) -> list[tuple[ChatFile, ChatAttachmentRender | None]]:
    """The caller's files on a message, each with its latest rendering (for that agent if named)."""
    files = list(
        (
            await session.execute(
                select(ChatFile)
                .where(ChatFile.message_id == message_id, ChatFile.user_id == user_id)
                .order_by(ChatFile.created_at, ChatFile.id)
            )
        ).scalars()
    )
    if not files:
        return []
    query = select(ChatAttachmentRender).where(
        ChatAttachmentRender.file_id.in_([f.id for f in files]),
        ChatAttachmentRender.user_id == user_id,
    )
    if agent_id is not None:
        query = query.where(ChatAttachmentRender.agent_id == agent_id)
    if conversation_id is not None:
        query = query.where(ChatAttachmentRender.conversation_id == conversation_id)
    latest: dict[uuid.UUID, ChatAttachmentRender] = {}
    for render in (
        await session.execute(query.order_by(ChatAttachmentRender.updated_at))
    ).scalars():
        latest[render.file_id] = render
    return [(f, latest.get(f.id)) for f in files]
