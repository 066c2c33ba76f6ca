"""A dead letter's failure: the class, a message with no credential in it, the last frames."""

from __future__ import annotations

import time

import pytest
from docproc_common.bus.dead_letter import (
    MAX_MESSAGE,
    failure_headers,
    failure_text,
    last_frames,
    sanitise,
)

BOTO = (
    'Could not connect to the endpoint URL: "https://AKIA:wJalrSECRET@s3.internal:9000/'
    'acme-bucket/key.pdf?X-Amz-Signature=SIGSECRET&X-Amz-Credential=CREDSECRET"'
)


class TestSanitise:
    def test_userinfo_and_query_strings_go_the_path_stays(self) -> None:
        text = sanitise(BOTO)
        assert "SECRET" not in text
        assert "https://<redacted>@s3.internal:9000/acme-bucket/key.pdf?<redacted>" in text

    @pytest.mark.parametrize(
        "message",
        [
            "refused token=tokSECRET for the caller",
            "api_key: keySECRET",
            "password=pwSECRET&user=bob",
            "header Authorization: Bearer eyJSECRET.abc",
            "sent Basic dXNlcjpwYXNzSECRET=",
            "fatal: unable to access 'http://127.0.0.1/r.git?private_token=qSECRET/'",
        ],
    )
    def test_credential_pairs_lose_their_value(self, message: str) -> None:
        assert "SECRET" not in sanitise(message)

    def test_bounded_and_on_one_line(self) -> None:
        text = sanitise("line one\nline two " + "x" * 5000)
        assert "\n" not in text and text.startswith("line one line two")
        assert len(text) == MAX_MESSAGE

    def test_plain_text_is_kept(self) -> None:
        assert sanitise("invalid payload: 2 errors") == "invalid payload: 2 errors"


def _inner() -> None:
    raise ValueError(BOTO)


def _outer() -> None:
    _inner()


class TestHeaders:
    def test_class_sanitised_message_and_innermost_frames(self) -> None:
        with pytest.raises(ValueError, match="Could not connect") as caught:
            _outer()
        headers = failure_headers(caught.value)
        assert headers["x-error-class"] == "ValueError"
        assert "SECRET" not in headers["x-error-message"]
        frames = headers["x-error-frames"].split(" > ")
        assert frames[-2:] == [
            f"unit/test_dead_letter.py:{_outer.__code__.co_firstlineno + 1}:_outer",
            f"unit/test_dead_letter.py:{_inner.__code__.co_firstlineno + 1}:_inner",
        ]
        assert failure_text(caught.value).startswith("ValueError: Could not connect")

    def test_only_the_last_frames(self) -> None:
        def deep(n: int) -> None:
            if n == 0:
                raise RuntimeError("bottom")
            deep(n - 1)

        with pytest.raises(RuntimeError) as caught:
            deep(10)
        assert last_frames(caught.value).count("deep") == 5


class TestSanitiseWork:
    """A message is an exception's text, which a client partly writes: no message makes the
    redaction patterns backtrack (a 10,000-character ``a.a.a.`` took 24 s before)."""

    @pytest.mark.parametrize(
        "message",
        [
            "a." * 5000,
            "a-" * 5000 + "=",
            "token." * 2000,
            "a://" * 2500,
            "x" * 10000 + "token",
            "a" * 10000 + "://",
        ],
        ids=["dots", "dashes", "token-dots", "schemes", "long-word", "long-scheme"],
    )
    def test_a_hostile_message_is_sanitised_at_once(self, message: str) -> None:
        started = time.process_time()
        text = sanitise(message * 10)
        assert time.process_time() - started < 1.0
        assert len(text) <= MAX_MESSAGE

    def test_a_url_cut_at_the_bound_goes_whole(self) -> None:
        message = "x " * (2 * MAX_MESSAGE - 10) + "https://user:pwSECRET@" + "h" * 100
        assert "SECRET" not in sanitise(message, limit=MAX_MESSAGE)
        assert "SECRET" not in sanitise("a " * 996 + "https://u:pSECRET@host/", limit=500)
