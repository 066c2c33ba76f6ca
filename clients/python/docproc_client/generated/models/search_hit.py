from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.search_hit_links import SearchHitLinks
    from ..models.search_hit_metadata import SearchHitMetadata


T = TypeVar("T", bound="SearchHit")


@_attrs_define
class SearchHit:
    """A chunk that matched, and how to cite it. The citation fields are null for a chunk
    indexed before chunks recorded them, until its document is indexed again.

        Attributes:
            collection_name (str):
            document_id (None | UUID):
            vector_document_id (UUID):
            chunk_no (int):
            filename (None | str):
            content (str):
            score (float):
            metadata (SearchHitMetadata):
            page_start (int | None): The 1-based page the chunk begins on (formats with pages)
            page_end (int | None): The page the chunk ends on
            char_start (int | None): Where the chunk begins in the text of page_start (of the document when it has no pages)
            char_end (int | None): Where it ends, counted from the same place as char_start
            crosses_pages (bool | None): Whether the chunk runs onto a later page
            heading_path (list[str] | None): The headings above the chunk, outermost first (empty where the parser saw none)
            links (None | SearchHitLinks): The document's download and parsed view; null for a chunk of no document
    """

    collection_name: str
    document_id: None | UUID
    vector_document_id: UUID
    chunk_no: int
    filename: None | str
    content: str
    score: float
    metadata: SearchHitMetadata
    page_start: int | None
    page_end: int | None
    char_start: int | None
    char_end: int | None
    crosses_pages: bool | None
    heading_path: list[str] | None
    links: None | SearchHitLinks
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.search_hit_links import SearchHitLinks

        collection_name = self.collection_name

        document_id: None | str
        if isinstance(self.document_id, UUID):
            document_id = str(self.document_id)
        else:
            document_id = self.document_id

        vector_document_id = str(self.vector_document_id)

        chunk_no = self.chunk_no

        filename: None | str
        filename = self.filename

        content = self.content

        score = self.score

        metadata = self.metadata.to_dict()

        page_start: int | None
        page_start = self.page_start

        page_end: int | None
        page_end = self.page_end

        char_start: int | None
        char_start = self.char_start

        char_end: int | None
        char_end = self.char_end

        crosses_pages: bool | None
        crosses_pages = self.crosses_pages

        heading_path: list[str] | None
        if isinstance(self.heading_path, list):
            heading_path = self.heading_path

        else:
            heading_path = self.heading_path

        links: dict[str, Any] | None
        if isinstance(self.links, SearchHitLinks):
            links = self.links.to_dict()
        else:
            links = self.links

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "collection_name": collection_name,
                "document_id": document_id,
                "vector_document_id": vector_document_id,
                "chunk_no": chunk_no,
                "filename": filename,
                "content": content,
                "score": score,
                "metadata": metadata,
                "page_start": page_start,
                "page_end": page_end,
                "char_start": char_start,
                "char_end": char_end,
                "crosses_pages": crosses_pages,
                "heading_path": heading_path,
                "links": links,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.search_hit_links import SearchHitLinks
        from ..models.search_hit_metadata import SearchHitMetadata

        d = dict(src_dict)
        collection_name = d.pop("collection_name")

        def _parse_document_id(data: object) -> None | UUID:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                document_id_type_0 = UUID(data)

                return document_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | UUID, data)

        document_id = _parse_document_id(d.pop("document_id"))

        vector_document_id = UUID(d.pop("vector_document_id"))

        chunk_no = d.pop("chunk_no")

        def _parse_filename(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        filename = _parse_filename(d.pop("filename"))

        content = d.pop("content")

        score = d.pop("score")

        metadata = SearchHitMetadata.from_dict(d.pop("metadata"))

        def _parse_page_start(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        page_start = _parse_page_start(d.pop("page_start"))

        def _parse_page_end(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        page_end = _parse_page_end(d.pop("page_end"))

        def _parse_char_start(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        char_start = _parse_char_start(d.pop("char_start"))

        def _parse_char_end(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        char_end = _parse_char_end(d.pop("char_end"))

        def _parse_crosses_pages(data: object) -> bool | None:
            if data is None:
                return data
            return cast(bool | None, data)

        crosses_pages = _parse_crosses_pages(d.pop("crosses_pages"))

        def _parse_heading_path(data: object) -> list[str] | None:
            if data is None:
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                heading_path_type_0 = cast(list[str], data)

                return heading_path_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None, data)

        heading_path = _parse_heading_path(d.pop("heading_path"))

        def _parse_links(data: object) -> None | SearchHitLinks:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                links_type_0 = SearchHitLinks.from_dict(data)

                return links_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SearchHitLinks, data)

        links = _parse_links(d.pop("links"))

        search_hit = cls(
            collection_name=collection_name,
            document_id=document_id,
            vector_document_id=vector_document_id,
            chunk_no=chunk_no,
            filename=filename,
            content=content,
            score=score,
            metadata=metadata,
            page_start=page_start,
            page_end=page_end,
            char_start=char_start,
            char_end=char_end,
            crosses_pages=crosses_pages,
            heading_path=heading_path,
            links=links,
        )

        search_hit.additional_properties = d
        return search_hit

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
