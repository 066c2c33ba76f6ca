"""What a dead letter says about the failure that put it there: for operators, never tenants.

The error's class, its message made safe to keep, and the last frames of its
traceback (``file:line:function``): enough to find the failing code and the
kind of input without the log. The message is still a client's text (a
botocore error quotes the endpoint URL and the request's query string), so
before it is kept a URL loses its userinfo and its query string, a
``token=…``-style pair or an ``Authorization`` value loses its value, and the
whole is bounded. Kafka carries these as the dead letter's headers; the
embedded bus keeps them in the dead row's ``last_error``.
"""

from __future__ import annotations

import re
import traceback
from pathlib import PurePath

MAX_MESSAGE = 500
FRAMES = 5

# Each pattern starts only where its run starts (a lookbehind, not ``\b``): from every
# position inside a long run of name characters, ``\b``-anchored patterns rescanned the
# run, and a 10,000-character "a.a.a..." message took 24 s.
_SCHEME = r"(?<![a-z0-9+.-])[a-z][a-z0-9+.-]*+://"
_USERINFO = re.compile(rf"(?i)({_SCHEME})[^/\s'\"@]*+@")
_QUERY = re.compile(rf"(?i)({_SCHEME}[^\s'\"?#]*+)\?[^\s'\"#]*+")
_SCHEME_CREDENTIAL = re.compile(r"(?i)\b(bearer|basic)\s+[\w.~+/=-]+")
_PAIR = re.compile(r"(?<![\w.-])([\w.-]++)([=:]\s*+)[^\s&'\",;]++")
_SECRET_NAME = re.compile(
    r"(?i)token|secret|password|passwd|signature|credential|api_?key|access_?key|auth"
)


def _redact_secret_pair(match: re.Match[str]) -> str:
    name, separator = match.group(1), match.group(2)
    return f"{name}{separator}<redacted>" if _SECRET_NAME.search(name) else match.group(0)


def _head(message: str, bound: int) -> tuple[str, bool]:
    """The first ``bound`` characters, and whether anything was cut. A cut last word that
    could be part of a URL or a pair (a ``:``, ``=`` or ``@`` in it) goes whole: a URL cut
    before its ``@`` would keep its userinfo."""
    if len(message) <= bound:
        return message, False
    head = message[:bound]
    last = len(head.rstrip()) - len(head.rstrip().split()[-1]) if head.strip() else 0
    if any(mark in head[last:] for mark in ":=@"):
        head = head[:last]
    return head, True


def sanitise(message: str, limit: int = MAX_MESSAGE) -> str:
    """``message`` without credentials in URLs or ``key=value`` pairs, at most ``limit`` chars.

    Only its first ``4 * limit`` characters are read (``_head``), so the patterns' work is
    bounded whatever the message.
    """
    text, cut = _head(message, 4 * limit)
    text = _USERINFO.sub(r"\1<redacted>@", text)
    text = _QUERY.sub(r"\1?<redacted>", text)
    text = _SCHEME_CREDENTIAL.sub(r"\1 <redacted>", text)
    text = _PAIR.sub(_redact_secret_pair, text)
    text = " ".join(text.split())  # one line: a header value
    if len(text) > limit or (cut and len(text) == limit):
        return text[: limit - 1] + "…"
    return text + "…" if cut else text


def last_frames(error: BaseException, count: int = FRAMES) -> str:
    """The innermost ``count`` frames of ``error``'s traceback, ``file:line:function``, outermost
    first; a file is its last two path parts (``connectors/s3.py``)."""
    frames = traceback.extract_tb(error.__traceback__)[-count:]
    return " > ".join(
        f"{'/'.join(PurePath(f.filename).parts[-2:])}:{f.lineno}:{f.name}" for f in frames
    )


def failure_headers(error: BaseException) -> dict[str, str]:
    """``x-error-class``, ``x-error-message`` (sanitised) and ``x-error-frames``."""
    return {
        "x-error-class": type(error).__name__,
        "x-error-message": sanitise(str(error)),
        "x-error-frames": last_frames(error),
    }


def failure_text(error: BaseException) -> str:
    """``failure_headers`` as one text: ``Class: message`` and the frames on a second line."""
    headers = failure_headers(error)
    return f"{headers['x-error-class']}: {headers['x-error-message']}\n{headers['x-error-frames']}"
