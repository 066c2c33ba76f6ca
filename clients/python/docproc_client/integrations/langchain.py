"""A LangChain retriever over docproc's search (``pip install docproc-client[langchain]``).

```python
from docproc_client import Docproc
from docproc_client.integrations.langchain import DocprocRetriever

retriever = DocprocRetriever(client=Docproc.from_env(), knowledge_bases=["Handbook"], top_k=4)
for doc in retriever.invoke("how many holidays?"):
    print(doc.metadata["citation"], doc.page_content[:80])
```
"""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever

from docproc_client.citations import citation_metadata
from docproc_client.docproc import Docproc


class DocprocRetriever(BaseRetriever):
    """The best ``top_k`` chunks of the knowledge bases named (ids, names or collection
    names) or of every base on ``collections``, as ``Document`` objects: ``page_content``
    the chunk, ``id`` the chunk's row, ``metadata`` its citation (``document_id``,
    ``filename``, ``page_start``, ``page_end``, ``heading_path``, ``download_url``,
    ``parsed_url``, ``citation``, ...: ``citation_metadata``). ``client`` is a ``Docproc``
    (``BaseRetriever`` allows a field of any type)."""

    client: Docproc
    knowledge_bases: list[str] | None = None
    collections: list[str] | None = None
    top_k: int = 5
    mode: Literal["vector", "keyword", "hybrid"] | None = None
    filters: dict[str, Any] | None = None

    def _get_relevant_documents(
        self,
        query: str,
        *,
        run_manager: CallbackManagerForRetrieverRun,  # noqa: ARG002 - the interface's
    ) -> list[Document]:
        hits = self.client.search(
            query,
            knowledge_bases=self.knowledge_bases,
            collections=self.collections,
            top_k=self.top_k,
            mode=self.mode,
            filters=self.filters,
        )
        return [
            Document(
                id=str(hit.vector_document_id),
                page_content=hit.content,
                metadata=citation_metadata(hit, self.client.base_url),
            )
            for hit in hits
        ]
