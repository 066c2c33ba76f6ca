"""The typed error tree every docproc service raises.

HTTP-facing errors carry their status code and a stable ``code``; one handler
(``docproc_common.http``) renders them as the envelope fixed in DESIGN.md::

    {"error": {"code": "NOT_FOUND", "message": "Collection not found", "details": {}}}

Refusals about form inputs name them in ``details.fields`` as
``[{"field": "ingestion_config.chunk_size", "message": "..."}]``, rooted at the
submitted document, so a form can mark the input.

Pipeline errors (``RetryableError`` / ``PermanentError``) tell the stage runner
whether a message is worth another attempt or belongs in the dead-letter topic.
"""

from __future__ import annotations

import errno
from dataclasses import dataclass
from typing import Any, ClassVar


@dataclass(frozen=True, slots=True)
class FieldError:
    """One refused form input, named by its dotted path in the submitted document."""

    field: str
    message: str

    def as_dict(self) -> dict[str, str]:
        return {"field": self.field, "message": self.message}


class DocprocError(Exception):
    """Root of every error docproc raises on purpose."""


class AppError(DocprocError):
    """An error with an HTTP meaning. Its message is written here and safe to show."""

    status_code: ClassVar[int] = 500
    code: ClassVar[str] = "INTERNAL_ERROR"

    def __init__(
        self,
        message: str,
        *,
        fields: list[FieldError] | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.fields = list(fields or [])
        self.details = dict(details or {})

    def envelope(self) -> dict[str, Any]:
        details = dict(self.details)
        if self.fields:
            details["fields"] = [f.as_dict() for f in self.fields]
        return {"error": {"code": self.code, "message": self.message, "details": details}}

    def headers(self) -> dict[str, str]:
        """Response headers the answer carries besides the envelope (none by default)."""
        return {}


class InvalidInput(AppError):
    status_code = 400
    code = "INVALID_INPUT"


class Unauthorized(AppError):
    status_code = 401
    code = "UNAUTHORIZED"


class Forbidden(AppError):
    status_code = 403
    code = "FORBIDDEN"


class NotFound(AppError):
    status_code = 404
    code = "NOT_FOUND"


class Conflict(AppError):
    status_code = 409
    code = "CONFLICT"


class PayloadTooLarge(AppError):
    status_code = 413
    code = "PAYLOAD_TOO_LARGE"


class UnprocessableEntity(AppError):
    status_code = 422
    code = "VALIDATION_ERROR"


class Unavailable(AppError):
    status_code = 503
    code = "UNAVAILABLE"


class Busy(Unavailable):
    """Too much work is already waiting: the answer says when to try again (``Retry-After``)."""

    def __init__(
        self, message: str, *, retry_after_s: int, details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message, details=details)
        self.retry_after_s = max(1, retry_after_s)

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after_s)}


class InsufficientStorage(AppError):
    status_code = 507
    code = "INSUFFICIENT_STORAGE"


#: An ``OSError`` of a disk with no room: full, over quota, past a file-size limit.
NO_ROOM_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
#: An ``OSError`` of a disk that refuses writes: read-only, permissions.
NOT_WRITABLE_ERRNOS = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})


class CollectionNotFound(NotFound):
    """Absence and denial of a collection look the same, so the API is no oracle."""

    def __init__(self) -> None:
        super().__init__("Collection not found")


class RetryableError(DocprocError):
    """A transient failure (timeout, 5xx, broker hiccup): try the message again."""


class RetryLater(RetryableError):
    """Try the message again after the transport's delay, never at once in place: a retry
    at once would most likely fail the same way, and each try is costly (a parse child that
    died). The message's attempts bound it as any other."""


class PermanentError(DocprocError):
    """A message that will never succeed: send it to the dead-letter topic."""
