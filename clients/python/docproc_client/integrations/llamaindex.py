"""A LlamaIndex retriever over docproc's search (``pip install docproc-client[llamaindex]``).

```python
from docproc_client import Docproc
from docproc_client.integrations.llamaindex import DocprocRetriever

retriever = DocprocRetriever(Docproc.from_env(), knowledge_bases=["Handbook"], top_k=4)
for found in retriever.retrieve("how many holidays?"):
    print(found.score, found.node.metadata["citation"], found.node.get_content()[:80])
```
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.callbacks import CallbackManager
from llama_index.core.schema import (
    NodeRelationship,
    NodeWithScore,
    QueryBundle,
    RelatedNodeInfo,
    TextNode,
)

from docproc_client.citations import citation_metadata
from docproc_client.docproc import Docproc

#: Left out of what an LLM is shown of a node (``get_content(MetadataMode.LLM)``): the
#: citation and the file stay, the offsets, links and scores do not, nor an empty field.
NOT_FOR_THE_LLM = [
    "document_id",
    "collection_name",
    "chunk_no",
    "score",
    "char_start",
    "char_end",
    "crosses_pages",
    "download_url",
    "parsed_url",
    "source",
    "document_type",
]


class DocprocRetriever(BaseRetriever):
    """The best ``top_k`` chunks of the knowledge bases named (ids, names or collection
    names) or of every base on ``collections``, as ``NodeWithScore`` objects: a
    ``TextNode`` whose text is the chunk, whose id is the chunk's row, whose ``SOURCE``
    relationship (``node.ref_doc_id``) is its document, and whose metadata is its citation
    (``citation_metadata``), with the hit's score."""

    def __init__(
        self,
        client: Docproc,
        *,
        knowledge_bases: Sequence[str] | None = None,
        collections: Sequence[str] | None = None,
        top_k: int = 5,
        mode: str | None = None,
        filters: Mapping[str, Any] | None = None,
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
    ) -> None:
        super().__init__(callback_manager=callback_manager, verbose=verbose)
        self.client = client
        self.knowledge_bases = None if knowledge_bases is None else list(knowledge_bases)
        self.collections = None if collections is None else list(collections)
        self.top_k = top_k
        self.mode = mode
        self.filters = filters

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        hits = self.client.search(
            query_bundle.query_str,
            knowledge_bases=self.knowledge_bases,
            collections=self.collections,
            top_k=self.top_k,
            mode=self.mode,
            filters=self.filters,
        )
        found = []
        for hit in hits:
            metadata = citation_metadata(hit, self.client.base_url)
            hidden = NOT_FOR_THE_LLM + [k for k, v in metadata.items() if v is None or v == []]
            node = TextNode(
                id_=str(hit.vector_document_id),
                text=hit.content,
                metadata=metadata,
                excluded_llm_metadata_keys=hidden,
                excluded_embed_metadata_keys=hidden,
            )
            if hit.document_id is not None:
                node.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(
                    node_id=str(hit.document_id), metadata={"filename": hit.filename}
                )
            found.append(NodeWithScore(node=node, score=hit.score))
        return found
