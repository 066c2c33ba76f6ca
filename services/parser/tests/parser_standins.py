"""Local HTTP stand-ins for the parser's cloud dependencies, served on 127.0.0.1.

* :class:`LlamaParseStandIn` speaks LlamaParse's v2 REST shape: ``POST
  /api/v2/parse/upload`` (multipart ``file`` + ``configuration``) -> job; ``GET
  /api/v2/parse/{id}`` -> ``{"job": {...}}`` whose status moves PENDING -> RUNNING ->
  COMPLETED; ``?expand=markdown`` adds ``markdown.pages``. A PDF's pages are read
  with PyMuPDF (bounded by ``page_ranges.max_pages``, as LlamaParse bills).
* :class:`VisionStandIn` speaks OpenAI's ``POST /v1/chat/completions`` with an
  ``image_url`` data URL and describes an image by its bytes' digest.

Both count what they were asked, so tests can assert "described once", "not billed twice".
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pymupdf
import uvicorn
from docproc_testing.infra import free_port
from fastapi import FastAPI, File, Form, Header, Request, UploadFile
from fastapi.responses import JSONResponse
from PIL import Image


@contextmanager
def serve(app: FastAPI) -> Iterator[str]:
    """Serve ``app`` on a free loopback port in a thread; yields its base URL."""
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the stand-in did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


def _pdf_pages(data: bytes, max_pages: int) -> list[str]:
    doc: Any = pymupdf.open(stream=data, filetype="pdf")  # type: ignore[no-untyped-call]
    try:
        return [
            str(doc.load_page(i).get_text()).strip() for i in range(min(doc.page_count, max_pages))
        ]
    finally:
        doc.close()


@dataclass
class Job:
    id: str
    filename: str
    data: bytes
    configuration: dict[str, Any]
    polls: int = 0


@dataclass
class LlamaParseStandIn:
    api_key: str = "llx-standin"
    #: Polls before a job completes.
    polls_until_done: int = 2
    #: The terminal status a job reaches ("COMPLETED", "FAILED", or "NEVER" to hang).
    outcome: str = "COMPLETED"
    #: Answer every upload with this HTTP status instead (401, 402, 500, ...).
    upload_status: int | None = None
    jobs: dict[str, Job] = field(default_factory=dict)
    uploads: int = 0
    polls: int = 0

    def reset(self, **changes: Any) -> None:
        self.jobs.clear()
        self.uploads = self.polls = 0
        self.polls_until_done, self.outcome, self.upload_status = 2, "COMPLETED", None
        for k, v in changes.items():
            setattr(self, k, v)

    def _authorized(self, authorization: str | None) -> bool:
        return authorization == f"Bearer {self.api_key}"

    def app(self) -> FastAPI:
        app = FastAPI()

        @app.post("/api/v2/parse/upload")
        async def upload(
            file: UploadFile = File(),  # noqa: B008
            configuration: str = Form(),
            authorization: str | None = Header(default=None),
        ) -> JSONResponse:
            if not self._authorized(authorization):
                return JSONResponse({"detail": "Invalid API key"}, status_code=401)
            self.uploads += 1
            if self.upload_status is not None:
                return JSONResponse({"detail": "refused"}, status_code=self.upload_status)
            config = json.loads(configuration)
            if "tier" not in config or "version" not in config:
                return JSONResponse({"detail": "tier and version are required"}, status_code=422)
            job = Job(str(uuid.uuid4()), file.filename or "file", await file.read(), config)
            self.jobs[job.id] = job
            return JSONResponse(
                {"id": job.id, "project_id": "standin", "status": "PENDING", "tier": config["tier"]}
            )

        @app.get("/api/v2/parse/{job_id}")
        async def get_job(
            job_id: str, request: Request, authorization: str | None = Header(default=None)
        ) -> JSONResponse:
            if not self._authorized(authorization):
                return JSONResponse({"detail": "Invalid API key"}, status_code=401)
            job = self.jobs.get(job_id)
            if job is None:
                return JSONResponse({"detail": "Job not found"}, status_code=404)
            self.polls += 1
            job.polls += 1
            if job.polls <= self.polls_until_done or self.outcome == "NEVER":
                status = "PENDING" if job.polls == 1 else "RUNNING"
            else:
                status = self.outcome
            body: dict[str, Any] = {
                "job": {
                    "id": job.id,
                    "project_id": "standin",
                    "status": status,
                    "error_message": "could not parse" if status == "FAILED" else None,
                }
            }
            expand = request.query_params.get("expand", "")
            if "markdown" in expand.split(",") and status == "COMPLETED":
                pages = self._pages(job)
                body["markdown"] = {
                    "pages": [
                        {"page_number": i + 1, "markdown": md, "success": True}
                        for i, md in enumerate(pages)
                    ]
                }
            return JSONResponse(body)

        return app

    @staticmethod
    def _pages(job: Job) -> list[str]:
        max_pages = int(job.configuration.get("page_ranges", {}).get("max_pages") or 10_000)
        if job.data.startswith(b"%PDF"):
            return _pdf_pages(job.data, max_pages)
        return [
            f"# {job.filename}\n\nParsed by the LlamaParse stand-in from {len(job.data)} bytes."
        ]


@dataclass
class VisionStandIn:
    api_key: str | None = "sk-vision"
    model: str = "standin-vision"
    asked: Counter[str] = field(default_factory=Counter)
    #: Answer every request with this status instead (401, 500, ...).
    status: int | None = None

    def reset(self, **changes: Any) -> None:
        self.asked.clear()
        self.status = None
        for k, v in changes.items():
            setattr(self, k, v)

    @staticmethod
    def describe(digest: str) -> str:
        return f"A picture number {digest[:12]}"

    def app(self) -> FastAPI:
        app = FastAPI()

        @app.post("/v1/chat/completions")
        async def completions(
            request: Request, authorization: str | None = Header(default=None)
        ) -> JSONResponse:
            if self.api_key is not None and authorization != f"Bearer {self.api_key}":
                return JSONResponse({"error": {"message": "bad key"}}, status_code=401)
            if self.status is not None:
                return JSONResponse({"error": {"message": "refused"}}, status_code=self.status)
            body = await request.json()
            if body.get("model") != self.model:
                return JSONResponse({"error": {"message": "no such model"}}, status_code=404)
            parts = body["messages"][0]["content"]
            url = next(p["image_url"]["url"] for p in parts if p.get("type") == "image_url")
            header, _, payload = url.partition(",")
            assert header.startswith("data:image/") and header.endswith(";base64")
            data = base64.b64decode(payload)
            Image.open(io.BytesIO(data)).verify()  # a real picture, not a placeholder
            digest = hashlib.sha256(data).hexdigest()
            self.asked[digest] += 1
            return JSONResponse(
                {
                    "id": "chatcmpl-standin",
                    "object": "chat.completion",
                    "model": self.model,
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": self.describe(digest)},
                            "finish_reason": "stop",
                        }
                    ],
                }
            )

        return app
