"""Unfiled content (rows and chunks no knowledge base owns): which bases take it.

An app-scoped base adopts the operator's (``rag-ingest``: no organization, ``writer_kind
operator``); any other base in an organization takes its organization's (legacy uploads
filed under no base); a personal base outside one takes none. Upload's reads (listing,
search, counts), the teardown of bases (``documents.Release``) and the embedder's write of
operator content ask these, as ``vectorstore.OPERATOR_CHUNKS`` / ``TENANT_UNFILED_CHUNKS``
ask the same of chunks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from docproc_common.db.models import KnowledgeBase, RagDocument, Scope, WriterKind


def adopts_operator(kbs: Sequence[KnowledgeBase]) -> bool:
    """An app-scoped base adopts the operator's unfiled content on its name (``rag-ingest``):
    its search reads those chunks, so it lists, counts and deletes their rows too."""
    return any(kb.scope == Scope.APP for kb in kbs)


def tenants(kbs: Sequence[KnowledgeBase]) -> frozenset[str]:
    """The organizations whose unfiled content on their name these bases list, search, count
    and take with them: each base's own, but an app-scoped base's (it adopts the operator's
    instead) and a base outside an organization (none). ``vectorstore.TENANT_UNFILED_CHUNKS``
    says the same of chunks."""
    return frozenset(
        kb.organization_id for kb in kbs if kb.scope != Scope.APP and kb.organization_id
    )


def is_operator_row(doc: RagDocument) -> bool:
    """The operator's unfiled row (``vectorstore.OPERATOR_CHUNKS`` for chunks)."""
    return (
        doc.knowledge_base_id is None
        and doc.organization_id is None
        and doc.writer_kind == WriterKind.OPERATOR
    )


@dataclass(frozen=True, slots=True)
class Unfiled:
    """The unfiled content some bases take with them (module docstring)."""

    operator: bool
    organization_ids: frozenset[str]

    @classmethod
    def taken_by(cls, kbs: Sequence[KnowledgeBase]) -> Unfiled:
        """What these bases take: exactly what they list and search."""
        return cls(operator=adopts_operator(kbs), organization_ids=tenants(kbs))

    def takes(self, doc: RagDocument) -> bool:
        if doc.knowledge_base_id is not None:
            return False
        if doc.organization_id is None:
            return self.operator and is_operator_row(doc)
        return doc.organization_id in self.organization_ids
