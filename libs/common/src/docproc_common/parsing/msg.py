"""Outlook ``.msg`` mail: headers and body from the OLE/MAPI property streams (olefile).

Embedded attachments are listed by name, never extracted.
"""

from __future__ import annotations

import datetime as dt
import html
import re
import struct
from typing import Any

from .budget import TextBudget
from .ole import open_ole
from .types import ParsedText, ParseLimits

_SUBJECT = 0x0037
_SENDER_NAME = 0x0C1A
_SENDER_EMAIL = 0x0C1F
_SENDER_SMTP = 0x5D01
_DISPLAY_TO = 0x0E04
_DISPLAY_CC = 0x0E03
_TRANSPORT_HEADERS = 0x007D
_BODY = 0x1000
_HTML_BODY = 0x1013
_ATTACH_LONG_NAME = 0x3707
_ATTACH_NAME = 0x3704
_ATTACH_DISPLAY_NAME = 0x3001
_SUBMIT_TIME = 0x0039
_DELIVERY_TIME = 0x0E06
_PT_SYSTIME = 0x0040
_FILETIME_EPOCH = dt.datetime(1601, 1, 1, tzinfo=dt.UTC)
_PROPERTY = struct.Struct("<HHIQ")
_TAG = re.compile(r"<(script|style)\b.*?</\1\s*>|<[^>]+>", re.IGNORECASE | re.DOTALL)


def _stream(ole: Any, storage: list[str], name: str) -> bytes | None:
    path = [*storage, name]
    if not ole.exists("/".join(path)):
        return None
    try:
        return bytes(ole.openstream(path).read())
    except OSError:
        return None


def _string(ole: Any, storage: list[str], prop: int) -> str | None:
    unicode = _stream(ole, storage, f"__substg1.0_{prop:04X}001F")
    if unicode is not None:
        return unicode.decode("utf-16-le", errors="replace").replace("\x00", "").strip()
    ansi = _stream(ole, storage, f"__substg1.0_{prop:04X}001E")
    if ansi is not None:
        return ansi.decode("cp1252", errors="replace").replace("\x00", "").strip()
    return None


def _time(ole: Any) -> str | None:
    """PR_CLIENT_SUBMIT_TIME (or delivery time) from the top-level property stream."""
    raw = _stream(ole, [], "__properties_version1.0")
    if raw is None:
        return None
    found: dict[int, int] = {}
    for offset in range(32, len(raw) - _PROPERTY.size + 1, _PROPERTY.size):
        prop_type, prop_id, _flags, value = _PROPERTY.unpack_from(raw, offset)
        if prop_type == _PT_SYSTIME and prop_id in (_SUBMIT_TIME, _DELIVERY_TIME):
            found[prop_id] = value
    value = found.get(_SUBMIT_TIME, found.get(_DELIVERY_TIME))
    if not value:
        return None
    try:
        moment = _FILETIME_EPOCH + dt.timedelta(microseconds=value // 10)
    except OverflowError:
        return None
    return moment.strftime("%a, %d %b %Y %H:%M:%S +0000")


def _header_date(headers: str | None) -> str | None:
    if not headers:
        return None
    match = re.search(r"^Date:[ \t]*(.+)$", headers, re.MULTILINE | re.IGNORECASE)
    return match.group(1).strip() if match else None


def _attachments(ole: Any) -> list[str]:
    names: list[str] = []
    storages = sorted(
        {entry[0] for entry in ole.listdir(streams=True, storages=True) if len(entry) > 1}
    )
    for storage in storages:
        if not storage.startswith("__attach_version1.0_"):
            continue
        name = (
            _string(ole, [storage], _ATTACH_LONG_NAME)
            or _string(ole, [storage], _ATTACH_NAME)
            or _string(ole, [storage], _ATTACH_DISPLAY_NAME)
            or "(unnamed attachment)"
        )
        names.append(name)
    return names


def _html_to_text(markup: str) -> str:
    return html.unescape(_TAG.sub(" ", markup))


def _body(ole: Any) -> str:
    body = _string(ole, [], _BODY)
    if body:
        return body
    markup = _string(ole, [], _HTML_BODY)
    if markup is None:
        raw = _stream(ole, [], f"__substg1.0_{_HTML_BODY:04X}0102")
        markup = raw.decode("utf-8", errors="replace") if raw is not None else None
    return _html_to_text(markup).strip() if markup else ""


def parse_msg(data: bytes, limits: ParseLimits) -> ParsedText:
    try:
        ole = open_ole(data)
    except Exception:
        return ParsedText(text=None, note="The Outlook message could not be read")
    try:
        sender_name = _string(ole, [], _SENDER_NAME)
        sender_email = _string(ole, [], _SENDER_SMTP) or _string(ole, [], _SENDER_EMAIL)
        sender = " ".join(
            part for part in (sender_name, f"<{sender_email}>" if sender_email else None) if part
        )
        date = _time(ole) or _header_date(_string(ole, [], _TRANSPORT_HEADERS))
        headers = [
            ("From", sender),
            ("To", _string(ole, [], _DISPLAY_TO)),
            ("Cc", _string(ole, [], _DISPLAY_CC)),
            ("Date", date),
            ("Subject", _string(ole, [], _SUBJECT)),
        ]
        lines = [f"{key}: {value}" for key, value in headers if value]
        body = _body(ole)
        attachments = _attachments(ole)
    except Exception:
        return ParsedText(text=None, note="The Outlook message could not be read")
    finally:
        ole.close()
    budget = TextBudget(limits.max_chars)
    budget.add("\n".join(lines) + "\n\n")
    budget.add(body + "\n")
    if attachments:
        budget.add("\nAttachments (not extracted):\n" + "".join(f"- {n}\n" for n in attachments))
    return budget.result()
