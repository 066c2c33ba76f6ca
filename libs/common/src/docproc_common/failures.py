"""What a failed ingest says in its stored ``error_message``: stage, exception type, advice.

The column is shown to everyone who can see the collection, weeks later, so it
never carries the failing client's text (endpoints, hosts, buckets, keys in
query strings). That goes to the worker log with ``logger.exception``. A refusal
docproc wrote itself (an ``AppError``) is passed whole: its message was written
here and is the most useful thing to show.
"""

from __future__ import annotations

from enum import StrEnum

from docproc_common.errors import AppError, PermanentError, RetryLater


class Stage(StrEnum):
    PARSE = "parsed"
    INDEX = "indexed"
    RECORD = "recorded"
    SYNC = "synced"


_ADVICE = {
    Stage.PARSE: "check that the file opens and is a supported format, then retry the upload",
    Stage.INDEX: "check the collection's embedding credential, then retry the upload",
    Stage.RECORD: "retry the upload",
    Stage.SYNC: "check the source's configuration and credential, then run the sync again",
}


_TRANSIENT = {
    Stage.PARSE: "storage, the database, or the cloud parser or vision endpoint not answering",
    Stage.INDEX: "the embedding provider not answering, storage or the database",
    Stage.RECORD: "storage or the database",
    Stage.SYNC: "the source not answering, storage or the database",
}


def failure_message(stage: Stage, exc: BaseException, *, subject: str = "document") -> str:
    if isinstance(exc, AppError):
        return exc.message
    return summary(stage, type(exc).__name__, subject=subject)


def summary(stage: Stage, kind: str, *, subject: str = "document") -> str:
    """The three parts, ``kind`` naming what failed: an exception's class, or a symbol docproc
    wrote for a failure that raised none (git's exit, an S3 error code). ``subject``: what
    could not be ``stage`` (a sync source's listing is the source, not a document)."""
    return (
        f"The {subject} could not be {stage.value} ({kind}) - {_ADVICE[stage]}. "
        "The worker log has the full error."
    )


class GaveUp(AppError):
    """The bus gave up on a document's event: every attempt failed on something transient.

    Recorded on the document instead of leaving it ``processing`` for ever (the event
    itself goes to the dead-letter destination). A permanent error reads as any other
    failure; a transient one says how many attempts it took.
    """

    def __init__(self, stage: Stage, cause: BaseException, attempts: int) -> None:
        if isinstance(cause, PermanentError):
            message = failure_message(stage, cause)
        else:
            message = (
                f"The document could not be {stage.value} ({type(cause).__name__}) - it failed "
                f"{attempts} times on something other than the file ({_TRANSIENT[stage]}); "
                "retry the upload later. The worker log has the full error."
            )
        super().__init__(message)


class Retried(RetryLater):
    """A failure the host may be to blame for: the bus tries the document again after its
    delay, up to its attempts; then the document records ``final`` (what the failure means
    for it), not how often it failed (``GaveUp``)."""

    def __init__(self, reason: str, final: AppError) -> None:
        super().__init__(reason)
        self.final = final
