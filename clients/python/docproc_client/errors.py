"""The error envelope every refusal of docproc's API carries, as one exception."""

from __future__ import annotations

import json
from typing import Any


class DocprocError(Exception):
    """A refused request: the envelope ``{"error": {"code", "message", "details"}}``.

    ``fields`` maps each form input the server named in ``details.fields`` (rooted at the
    submitted document, ``ingestion_config.chunk_size``) to its message; ``retry_after`` is
    the ``Retry-After`` of a 503 (a busy intake), in seconds.
    """

    def __init__(
        self,
        status_code: int,
        code: str,
        message: str,
        details: dict[str, Any] | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(f"{status_code} {code}: {message}")
        self.status_code = status_code
        self.code = code
        self.message = message
        self.details = details or {}
        self.retry_after = retry_after

    @property
    def fields(self) -> dict[str, str]:
        problems = self.details.get("fields") or []
        return {str(p.get("field")): str(p.get("message")) for p in problems if isinstance(p, dict)}

    @classmethod
    def from_response(cls, status_code: int, content: bytes, headers: Any = None) -> DocprocError:
        """The envelope of an answer, or a ``code`` of ``HTTP_<status>`` when the body is
        not one (a proxy's page)."""
        retry = (headers or {}).get("retry-after")
        retry_after = float(retry) if retry and str(retry).replace(".", "", 1).isdigit() else None
        try:
            body = json.loads(content)
            error = body["error"]
            return cls(
                status_code,
                str(error["code"]),
                str(error["message"]),
                dict(error.get("details") or {}),
                retry_after,
            )
        except (ValueError, KeyError, TypeError):
            text = content.decode(errors="replace").strip()[:500]
            return cls(status_code, f"HTTP_{status_code}", text or "no body", None, retry_after)
