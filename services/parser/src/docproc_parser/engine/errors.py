"""Why a knowledge-base document could not be parsed, in the words its stored row shows.

A document row's ``error_message`` has three parts (the seed's "Qué dice una ingesta
fallida"): the stage, the exception type, and advice the reader can act on. These
refusals are written here, so ``docproc_common.failures.failure_message`` passes
them whole; they never carry a client's text (hosts, URLs, paths).
"""

from __future__ import annotations

from docproc_common.errors import InvalidInput
from docproc_common.failures import Retried


class DocumentUnreadable(InvalidInput):
    """This document cannot be read by this collection's parser; retrying the same bytes won't help.

    >>> str(DocumentUnreadable("EncryptedDocument", "remove the password, then retry the upload"))
    'The document could not be parsed (EncryptedDocument) - remove the password, then retry the upload.'
    """

    def __init__(self, kind: str, advice: str, *, logged: bool = False) -> None:
        message = f"The document could not be parsed ({kind}) - {advice}."
        if logged:
            message += " The worker log has the full error."
        super().__init__(message)
        self.kind = kind


class DocumentRefused(DocumentUnreadable):
    """A refusal written by docproc inside the parse child, passed on as it was written."""

    def __init__(self, message: str) -> None:
        InvalidInput.__init__(self, message)
        self.kind = "refused"


class ParserUnavailable(InvalidInput):
    """The route needs something this server lacks (LibreOffice, LiteParse, a vault key)."""


GENERIC_ADVICE = "check that the file opens and is a supported format, then retry the upload"


def encrypted() -> DocumentUnreadable:
    return DocumentUnreadable(
        "EncryptedDocument",
        "the file is password-protected; remove the password, then retry the upload",
    )


def empty(reason: str = "", action: str = "") -> DocumentUnreadable:
    """No text came out: ``reason`` says why that may be, ``action`` what to do about it."""
    advice = "it has no extractable text"
    if reason:
        advice += f" ({reason})"
    advice += f"; {action or 'upload a file that contains text'}, then retry the upload"
    return DocumentUnreadable("EmptyDocument", advice)


def timed_out(seconds: float) -> DocumentUnreadable:
    return DocumentUnreadable(
        "ParseTimeout",
        f"parsing took longer than {seconds:g} s (parse_timeout_seconds); split the document, "
        "lower max_pages or raise the timeout, then retry the upload",
    )


class ParseRetried(Retried):
    """A parse that failed in a way the host may be to blame for: not final at once, the bus
    tries the document again after its delay (never in place: each try is a whole parse), up
    to its attempts; then the document ends ``error`` with ``final``'s three-part message and
    the event is dead-lettered."""

    final: DocumentUnreadable


class ParserCrashed(ParseRetried):
    """The parse child died without a word: a native crash, the memory limit, the host's OOM
    killer."""

    def __init__(self, exitcode: int | None, memory_mb: int) -> None:
        super().__init__(
            f"the parse child stopped (exit {exitcode}) without a result",
            DocumentUnreadable(
                "ParserCrashed",
                f"the parser process stopped (exit {exitcode}), most often because the document "
                f"needs more than the parser's {memory_mb} MB memory limit; split the document, "
                "then retry the upload",
                logged=True,
            ),
        )


class ParseSpaceFull(ParseRetried):
    """The parse's temporary directory was full or read-only (its files are removed with it)."""

    def __init__(self, *, no_room: bool) -> None:
        state = "full" if no_room else "read-only"
        super().__init__(
            f"the parser's temporary space is {state}",
            DocumentUnreadable(
                "TemporarySpaceFull",
                f"the parser's temporary space was {state} at every attempt (not the file's "
                "fault); free space where the parser writes its temporary files, then retry "
                "the upload",
                logged=True,
            ),
        )


def out_of_memory(memory_mb: int) -> DocumentUnreadable:
    return DocumentUnreadable(
        "MemoryError",
        f"the document needs more than the parser's {memory_mb} MB memory limit; split the "
        "document, then retry the upload",
        logged=True,
    )
