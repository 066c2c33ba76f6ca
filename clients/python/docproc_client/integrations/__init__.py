"""Retrievers for agent frameworks, each an optional extra of the package:

- ``docproc_client.integrations.langchain.DocprocRetriever`` (``docproc-client[langchain]``),
  a LangChain ``BaseRetriever``: ``invoke(query)`` gives ``Document`` objects;
- ``docproc_client.integrations.llamaindex.DocprocRetriever``
  (``docproc-client[llamaindex]``), a LlamaIndex ``BaseRetriever``: ``retrieve(query)``
  gives ``NodeWithScore`` objects.

Both search through ``Docproc.search`` and put each hit's citation in the document's or
node's metadata (``docproc_client.citations.citation_metadata``).
"""
