"""docproc's Python client.

``Docproc`` is the hand-written layer: the bearer token set once, answers unwrapped (a
refusal raises ``DocprocError`` with the envelope's ``code``, ``message`` and ``fields``),
the document listing followed page by page, uploads that wait out a busy intake, and
``cite``/``citation_metadata`` for a search hit. Underneath, ``docproc_client.generated``
is generated from the upload service's OpenAPI by ``openapi-python-client`` (``make
clients``): every operation, every model. The retrievers for LangChain and LlamaIndex are
in ``docproc_client.integrations`` (extras ``langchain`` and ``llamaindex``).
"""

from docproc_client.citations import citation_metadata, cite
from docproc_client.docproc import Docproc, paginate
from docproc_client.errors import DocprocError
from docproc_client.generated import AuthenticatedClient, Client

__all__ = [
    "AuthenticatedClient",
    "Client",
    "Docproc",
    "DocprocError",
    "citation_metadata",
    "cite",
    "paginate",
]
