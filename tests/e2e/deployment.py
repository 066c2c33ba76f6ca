"""What the package's one cluster is configured with (``conftest.cluster``), so that every
module of the package runs on it instead of starting a deployment of its own.

* ``test_embeddings``: the embedder serves its OpenAI-compatible ``/v1/embeddings`` behind
  ``GATEWAY_TOKEN`` (this deployment's "OpenAI" gateway is the embedder itself, serving the
  local model), and the collections may point at it and at a stand-in on loopback.
* ``test_embeddings``: a tiny encoder is mounted (``EMBEDDER__MODELS_DIR``) as
  ``TINY_MODEL``, with query and passage prefixes of its own.
* ``test_sync``: sync reaches the emulators and the Graph and Drive stand-ins on loopback
  over plain http, and its reconciler runs every second.

Each setting only widens what the deployment allows; no module of the package relies on
one being refused (those refusals are the services' own tests).
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from docproc_testing.drive_standin import DriveStandIn
from docproc_testing.graph_standin import GraphStandIn
from docproc_testing.tiny_models import tiny_encoder

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
GATEWAY_TOKEN = f"sk-e2e-{uuid.uuid4().hex}"
TINY_MODEL = "docproc-test/tiny-encoder"


def mounted_models(tmp: Path) -> dict[str, str]:
    """A models directory holding one tiny encoder (``tiny_models.tiny_encoder``)."""
    root = tmp / "embedding-models"
    tiny_encoder(
        root / "tiny",
        name=TINY_MODEL,
        pooling="cls",
        query_prefix="query: ",
        passage_prefix="passage: ",
        window=64,
    )
    return {"EMBEDDER__MODELS_DIR": str(root)}


def embedding_gateway(tmp: Path) -> dict[str, str]:
    catalog = tmp / "catalog.json"
    catalog.write_text(
        json.dumps(
            {
                "providers": {
                    "openai": {
                        "models": {
                            MINILM: {"dimensions": 384, "max_input_tokens": 256, "space": MINILM}
                        }
                    }
                }
            }
        )
    )
    return {
        "EMBEDDER__SERVE_OPENAI_API": "true",
        "EMBEDDER__OPENAI_API_TOKEN": GATEWAY_TOKEN,
        "EMBEDDER__ALLOWED_BASE_URLS": json.dumps(["http://127.0.0.1"]),
        "EMBEDDER__CATALOG_PATH": str(catalog),
    }


def sync_on_loopback(graph: GraphStandIn, drive: DriveStandIn) -> dict[str, str]:
    return {
        "SYNC__ALLOW_PRIVATE_NETWORKS": "true",
        "SYNC__ALLOW_PLAIN_HTTP": "true",
        "SYNC__API_ENDPOINTS": json.dumps({**graph.endpoints, "google_drive": drive.url}),
        "SYNC__RECONCILE_INTERVAL_S": "1",
    }
