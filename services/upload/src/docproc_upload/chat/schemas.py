"""Request and response bodies of the chat-attachment API."""

from __future__ import annotations

import re
import uuid
from datetime import datetime
from typing import Literal

from docproc_common.db.models import ChatAttachmentRender
from docproc_common.parsing import FileType
from pydantic import BaseModel, ConfigDict, Field, computed_field, model_validator

from docproc_upload.inputs import column_length

MAX_FILES_PER_CALL = 100
_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"

#: The specification's eight file types: what a card (an icon, a label) is coded to.
FileCategory = Literal[
    "image", "pdf", "docx", "spreadsheet", "document", "presentation", "email", "text"
]

#: Each kind the upload tells apart, as one of the eight: a TIFF is an image, a legacy
#: ``.doc`` a Word document, and an archive a document (its text is a member list extracted
#: from bytes that are not text, as for any other document).
_CATEGORY: dict[FileType, FileCategory] = {
    FileType.IMAGE: "image",
    FileType.TIFF: "image",
    FileType.PDF: "pdf",
    FileType.DOCX: "docx",
    FileType.DOC: "docx",
    FileType.SPREADSHEET: "spreadsheet",
    FileType.DOCUMENT: "document",
    FileType.ARCHIVE: "document",
    FileType.PRESENTATION: "presentation",
    FileType.EMAIL: "email",
    FileType.TEXT: "text",
}


class _Classified(BaseModel):
    """A file's type twice: ``file_type``, one of the eight, and ``file_kind``, finer."""

    file_kind: FileType = Field(
        description="The finer kind: the eight types plus `tiff`, `doc` and `archive`, "
        "which `file_type` reports as `image`, `docx` and `document`"
    )

    @computed_field(  # type: ignore[prop-decorator]
        description="The specification's classified type, one of eight"
    )
    @property
    def file_type(self) -> FileCategory:
        return _CATEGORY[self.file_kind]


class ChatFileOut(_Classified):
    """The upload's answer: what the card shows."""

    id: uuid.UUID
    filename: str
    mime_type: str
    size: int
    preview: str | None = Field(
        description="First three lines of the extracted text (at most 240 characters); "
        "null for an image or a file no parser could read"
    )


class ChatFileInfo(ChatFileOut):
    """``GET /files/{id}/info``: the file's record (the ``ChatFile`` fields a client may read)."""

    organizational_unit: str | None
    #: The message the file is attached to; null until it is sent.
    message_id: uuid.UUID | None
    #: Whether extracted text is kept (false for an image or a file no parser could read).
    has_parsed_content: bool
    created_at: datetime


class AttachRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    file_ids: list[uuid.UUID] = Field(min_length=1, max_length=MAX_FILES_PER_CALL)


class AttachOut(BaseModel):
    message_id: uuid.UUID
    file_ids: list[uuid.UUID]


class AgentIn(BaseModel):
    """The agent a turn runs, as the chat runner knows it after ``prepare``.

    ``runtime_reads`` lists the file types its workspace runtime opens by itself;
    without it, ``described_runtime_has_lit`` says whether the deployment described the
    runtime to the model as having ``lit`` (PDF, office and OpenDocument formats).
    """

    model_config = ConfigDict(extra="forbid")

    has_workspace: bool = False
    agent_id: str = Field(default="", max_length=column_length(ChatAttachmentRender.agent_id))
    conversation_id: str = Field(
        default="", max_length=column_length(ChatAttachmentRender.conversation_id)
    )
    runtime_reads: list[FileType] | None = None
    described_runtime_has_lit: bool = False

    @model_validator(mode="after")
    def _ids(self) -> AgentIn:
        for name in ("agent_id", "conversation_id"):
            value = getattr(self, name)
            if value and not re.fullmatch(_ID_PATTERN, value):
                raise ValueError(f"{name} may only hold letters, digits, '.', '_' and '-'")
            if self.has_workspace and not value:
                raise ValueError(f"{name} is required for an agent with a workspace")
        return self


class RenderRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    file_ids: list[uuid.UUID] = Field(min_length=1, max_length=MAX_FILES_PER_CALL)
    agent: AgentIn


class TextPartOut(BaseModel):
    type: Literal["text"] = "text"
    text: str


class BinaryPartOut(BaseModel):
    type: Literal["binary"] = "binary"
    media_type: str
    data: str = Field(description="base64")
    file_id: uuid.UUID
    name: str


class WorkspaceEntryOut(BaseModel):
    """One file to copy into the agent's workspace."""

    path: str = Field(description="Where it goes in the workspace, e.g. `/uploads/3f2a1b9c-a.csv`")
    size: int = Field(description="Its size in bytes")
    url: str = Field(
        description="GET it (with the same bearer token) for the bytes; a path under the API's "
        "base URL, valid until `expires_at`"
    )


class WorkspaceFetchOut(BaseModel):
    """How to fetch what a render wrote for one file: short-lived links bound to the caller."""

    expires_at: datetime
    entries: list[WorkspaceEntryOut] = Field(
        description="The files written for it: the original, and its extracted text when "
        "written beside it; empty for an unpacked archive"
    )
    listing_url: str | None = Field(
        description="An unpacked archive: GET it (same bearer token) for the listing of "
        "its members, each with its own link; null otherwise"
    )


class RenderedFileOut(_Classified):
    file_id: uuid.UUID
    filename: str
    mode: str
    workspace_path: str | None
    sibling_path: str | None
    fetch: WorkspaceFetchOut | None = Field(
        description="How the runner fetches what was written into the workspace; null when "
        "nothing was (inline, not opened, not written, skipped) and on a dry run"
    )


class RenderOut(BaseModel):
    parts: list[TextPartOut | BinaryPartOut]
    files: list[RenderedFileOut]
    notices: list[str]
    #: True when nothing was written (``?dry_run=true``): the text for the input guardrail.
    dry_run: bool = False


class WorkspaceListingOut(BaseModel):
    """``GET /workspace/listings/{link}``: an unpacked archive's members, one link each."""

    folder: str = Field(
        description="The archive's folder in the workspace, e.g. `/uploads/3f2a1b9c-repo/`"
    )
    expires_at: datetime
    entries: list[WorkspaceEntryOut]


class HistoryFileOut(_Classified):
    file_id: uuid.UUID
    filename: str
    mime_type: str
    size: int
    mode: str | None
    workspace_path: str | None
    history: str | None = Field(
        description="What the attachment added to the prompt when it was rendered; null "
        "when it was never rendered"
    )


class MessageAttachmentsOut(BaseModel):
    message_id: uuid.UUID
    files: list[HistoryFileOut]
