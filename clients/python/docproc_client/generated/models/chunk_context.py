from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.chunk import Chunk


T = TypeVar("T", bound="ChunkContext")


@_attrs_define
class ChunkContext:
    """A chunk of a document (a search hit's ``chunk_no``) and its neighbours, in order.

    Attributes:
        document_id (UUID):
        knowledge_base_id (None | UUID):
        collection_name (str):
        filename (str):
        chunk_no (int):
        chunk_count (int):
        chunks (list[Chunk]):
    """

    document_id: UUID
    knowledge_base_id: None | UUID
    collection_name: str
    filename: str
    chunk_no: int
    chunk_count: int
    chunks: list[Chunk]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        document_id = str(self.document_id)

        knowledge_base_id: None | str
        if isinstance(self.knowledge_base_id, UUID):
            knowledge_base_id = str(self.knowledge_base_id)
        else:
            knowledge_base_id = self.knowledge_base_id

        collection_name = self.collection_name

        filename = self.filename

        chunk_no = self.chunk_no

        chunk_count = self.chunk_count

        chunks = []
        for chunks_item_data in self.chunks:
            chunks_item = chunks_item_data.to_dict()
            chunks.append(chunks_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "document_id": document_id,
                "knowledge_base_id": knowledge_base_id,
                "collection_name": collection_name,
                "filename": filename,
                "chunk_no": chunk_no,
                "chunk_count": chunk_count,
                "chunks": chunks,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.chunk import Chunk

        d = dict(src_dict)
        document_id = UUID(d.pop("document_id"))

        def _parse_knowledge_base_id(data: object) -> None | UUID:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                knowledge_base_id_type_0 = UUID(data)

                return knowledge_base_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | UUID, data)

        knowledge_base_id = _parse_knowledge_base_id(d.pop("knowledge_base_id"))

        collection_name = d.pop("collection_name")

        filename = d.pop("filename")

        chunk_no = d.pop("chunk_no")

        chunk_count = d.pop("chunk_count")

        chunks = []
        _chunks = d.pop("chunks")
        for chunks_item_data in _chunks:
            chunks_item = Chunk.from_dict(chunks_item_data)

            chunks.append(chunks_item)

        chunk_context = cls(
            document_id=document_id,
            knowledge_base_id=knowledge_base_id,
            collection_name=collection_name,
            filename=filename,
            chunk_no=chunk_no,
            chunk_count=chunk_count,
            chunks=chunks,
        )

        chunk_context.additional_properties = d
        return chunk_context

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
