"""What a failed ingest says in its stored ``error_message``: stage, exception type, advice.

The column is shown to everyone who can see the collection, weeks later, so it
never carries the failing client's text (endpoints, hosts, buckets, keys in
query strings). That goes to the worker log with ``logger.exception``. A refusal
docproc wrote itself (an ``AppError``) is passed whole: its message was written
here and is the most useful thing to show.
"""

from __future__ import annotations

from enum import StrEnum

from docproc_common.errors import AppError


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


def failure_message(stage: Stage, exc: BaseException) -> str:
    if isinstance(exc, AppError):
        return exc.message
    return (
        f"The document could not be {stage.value} ({type(exc).__name__}) - {_ADVICE[stage]}. "
        "The worker log has the full error."
    )
