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

_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s'\"@]*@")
_QUERY = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^\s'\"?#]*)\?[^\s'\"#]*")
_SCHEME_CREDENTIAL = re.compile(r"(?i)\b(bearer|basic)\s+[\w.~+/=-]+")
_SECRET_PAIR = re.compile(
    r"(?i)\b([\w.-]*(?:token|secret|password|passwd|signature|credential|api_?key|"
    r"access_?key|auth)[\w.-]*)([=:]\s*)[^\s&'\",;]+"
)


def sanitise(message: str, limit: int = MAX_MESSAGE) -> str:
    """``message`` without credentials in URLs or ``key=value`` pairs, at most ``limit`` chars."""
    text = _USERINFO.sub(r"\1<redacted>@", message)
    text = _QUERY.sub(r"\1?<redacted>", text)
    text = _SCHEME_CREDENTIAL.sub(r"\1 <redacted>", text)
    text = _SECRET_PAIR.sub(r"\1\2<redacted>", text)
    text = " ".join(text.split())  # one line: a header value
    return text if len(text) <= limit else text[: limit - 1] + "…"


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
