"""The Confluence connector's pure parts: its config checks, labels, storage format, retries."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from docproc_common.connectors.config import CREDENTIAL_REFUSAL, check_config, describe
from docproc_common.errors import InvalidInput
from docproc_common.vault import validate_value
from docproc_sync.connectors.confluence import ConfluenceConfig, page_label, page_text
from docproc_sync.connectors.html_text import parse_storage
from docproc_sync.connectors.http_retry import RetryPolicy, retry_after, send
from docproc_sync.connectors.landing import landing_path
from docproc_testing.connectors import LAX, STRICT, refused_fields

SITE = "https://acme.atlassian.net"


class TestConfig:
    def test_a_site_a_space_and_a_tree(self) -> None:
        config = check_config(
            "confluence",
            {"site_url": SITE, "space_key": "DOCS", "root_page_id": 65538},
            STRICT,
        )
        assert isinstance(config, ConfluenceConfig)
        assert (config.root_page_id, config.include_attachments) == ("65538", False)
        check_config("confluence", {"site_url": f"{SITE}/wiki/", "space_key": "d0cs"}, STRICT)

    @pytest.mark.parametrize(
        "site",
        [
            "http://acme.atlassian.net",
            "https://127.0.0.1",
            "https://169.254.169.254",
            "https://[::1]",
            "https://localhost",
            "https://intranet",
            "https://acme.atlassian.net/wiki/spaces/DOCS",
            "https://acme.atlassian.net/?os_authType=basic",
            "https://acme.atlassian.net/#x",
            "ftp://acme.atlassian.net",
            "acme.atlassian.net",
        ],
    )
    def test_the_site_is_an_https_dns_name_alone(self, site: str) -> None:
        (refused,) = refused_fields("confluence", {"site_url": site, "space_key": "DOCS"})
        assert refused["field"] == "config.site_url"

    def test_the_tests_loopback_allowance_is_the_deployments(self) -> None:
        check_config("confluence", {"site_url": "http://127.0.0.1:8090", "space_key": "D"}, LAX)

    @pytest.mark.parametrize("key", ["DO CS", "../x", "D'OR'1", "", "~user", "ДОК"])
    def test_a_space_key_is_letters_and_digits(self, key: str) -> None:
        assert refused_fields("confluence", {"site_url": SITE, "space_key": key}) == [
            {"field": "config.space_key", "message": "A space key is letters and digits"}
        ]

    @pytest.mark.parametrize("page", ["12a", "-1", "1 OR 1", "../2"])
    def test_a_root_page_is_digits(self, page: str) -> None:
        refused = refused_fields(
            "confluence", {"site_url": SITE, "space_key": "D", "root_page_id": page}
        )
        assert refused == [{"field": "config.root_page_id", "message": "A page id is digits"}]

    @pytest.mark.parametrize(
        ("extra", "field"),
        [
            ({"api_token": "ATATT"}, "config.api_token"),
            ({"email": "a@b.c"}, "config.email"),
            ({"bearer_token": "x"}, "config.bearer_token"),
            ({"auth": {"user": "a"}}, "config.auth"),
            ({"site_url": "https://a%40b.c:ATATT@acme.atlassian.net"}, "config.site_url"),
        ],
    )
    def test_a_credential_is_refused_naming_its_field(
        self, extra: dict[str, Any], field: str
    ) -> None:
        assert refused_fields("confluence", {"site_url": SITE, "space_key": "D", **extra}) == [
            {"field": field, "message": CREDENTIAL_REFUSAL}
        ]

    def test_listed_with_its_secret_kind_and_signal(self) -> None:
        described = describe("confluence")
        assert described["secret_kind"] == "confluence_token"
        assert described["secret_required"] is True
        assert described["change_signal"] == "version.number"
        assert set(described["config_schema"]["properties"]) == {
            "site_url",
            "space_key",
            "root_page_id",
            "include_attachments",
        }


class TestSecret:
    def test_email_and_api_token_or_a_bearer_token(self) -> None:
        assert validate_value("confluence_token", {"email": "a@b.c", "api_token": "t"}) == {
            "email": "a@b.c",
            "api_token": "t",
        }
        assert validate_value("confluence_token", {"bearer_token": "b"}) == {"bearer_token": "b"}

    @pytest.mark.parametrize(
        "value",
        [
            {},
            {"email": "a@b.c"},
            {"api_token": "t"},
            {"email": "a@b.c", "api_token": "t", "bearer_token": "b"},
            {"email": "a@b.c", "bearer_token": "b"},
        ],
    )
    def test_anything_else_is_refused_without_echoing_it(self, value: dict[str, Any]) -> None:
        with pytest.raises(InvalidInput) as caught:
            validate_value("confluence_token", value)
        assert "a@b.c" not in str(caught.value.envelope())


class TestLabels:
    @pytest.mark.parametrize(
        ("title", "landed"),
        [
            ("../../x", "..-..-x.md"),
            (
                "../../../../home/app/.ssh/authorized_keys",
                "..-..-..-..-home-app-.ssh-authorized_keys.md",
            ),
            ("a\\b/c", "a-b-c.md"),
            ("．．／．．／etc", "．．／．．／etc.md"),
            ("..", "...md"),
            (".", "..md"),
            ("/", "-.md"),
            ("", "untitled.md"),
            ("tab\there\x00", "tabhere.md"),
        ],
    )
    def test_a_title_lands_inside(self, title: str, landed: str, tmp_path: Path) -> None:
        dest = landing_path(tmp_path, page_label(title))
        assert dest.parent == tmp_path.resolve()
        assert dest.name == landed

    def test_a_long_title_is_cut_to_a_component_keeping_md(self, tmp_path: Path) -> None:
        dest = landing_path(tmp_path, page_label("ü" * 300))
        assert len(dest.name.encode()) <= 255
        assert dest.name.endswith(".md") and dest.parent == tmp_path.resolve()


STORAGE = """<h2>Install</h2><p>Run &amp; go&nbsp;now.</p>
<ac:structured-macro ac:name="info"><ac:parameter ac:name="title">Heads up</ac:parameter>
<ac:rich-text-body><p>Back up first.</p></ac:rich-text-body></ac:structured-macro>
<ac:structured-macro ac:name="code"><ac:parameter ac:name="language">python</ac:parameter>
<ac:plain-text-body><![CDATA[def f(x):
    return x < 2 and "<b>"]]></ac:plain-text-body></ac:structured-macro>
<ul><li>one</li><li>two</li></ul><ol><li>first</li></ol>
<table><tbody><tr><th>Name</th><th>Role</th></tr><tr><td>Ada</td><td>Engineer</td></tr></tbody></table>
<ac:structured-macro ac:name="toc"><ac:parameter ac:name="maxLevel">3</ac:parameter></ac:structured-macro>
<ac:structured-macro ac:name="html"><ac:plain-text-body><![CDATA[<script>x()</script>]]></ac:plain-text-body></ac:structured-macro>
<p>See <ac:link><ri:page ri:content-title="Other page"/></ac:link> and
<ac:link><ri:page ri:content-title="X"/><ac:plain-text-link-body><![CDATA[the X]]></ac:plain-text-link-body></ac:link>.</p>
<ac:task-list><ac:task><ac:task-id>7</ac:task-id><ac:task-status>incomplete</ac:task-status>
<ac:task-body>Ship it</ac:task-body></ac:task></ac:task-list>
<p><ac:image><ri:attachment ri:filename="a.png"/></ac:image><ac:emoticon ac:name="smile"/></p>"""


class TestStorageFormat:
    def test_text_without_markup(self) -> None:
        text = parse_storage(STORAGE)
        assert "## Install" in text
        assert "Run & go\xa0now." in text or "Run & go now." in text
        assert "Back up first." in text
        assert '```\ndef f(x):\n    return x < 2 and "<b>"\n```' in text
        assert "- one" in text and "- two" in text and "- first" in text
        assert "Name | Role" in text and "Ada | Engineer" in text
        assert "See Other page and the X." in " ".join(text.split())
        assert "- Ship it" in text
        for leaked in ("ac:", "ri:", "<", "Heads up", "python", "maxLevel", "3\n", "x()", "7"):
            assert leaked not in text.replace('"<b>"', "").replace("x < 2", ""), leaked

    def test_the_title_is_the_heading(self) -> None:
        assert page_text("Runbook", "<p>body</p>") == b"# Runbook\n\nbody"


def answered(*statuses: tuple[int, dict[str, str]]) -> tuple[httpx.AsyncClient, list[int]]:
    script = list(statuses)
    seen: list[int] = []

    def handler(_request: httpx.Request) -> httpx.Response:
        status, headers = script.pop(0) if script else (200, {})
        seen.append(status)
        return httpx.Response(status, headers=headers, json={})

    return httpx.AsyncClient(transport=httpx.MockTransport(handler)), seen


class TestRetries:
    def test_retry_after_in_seconds_or_as_a_date(self) -> None:
        now = datetime(2024, 1, 1, tzinfo=UTC)
        later = format_datetime(now + timedelta(seconds=30), usegmt=True)
        assert retry_after(httpx.Response(429, headers={"Retry-After": "7"})) == 7
        assert retry_after(httpx.Response(429, headers={"Retry-After": later}), now) == 30
        assert retry_after(httpx.Response(429, headers={"Retry-After": "soon"})) is None
        assert retry_after(httpx.Response(429)) is None

    async def test_waits_what_it_is_told_then_backs_off(self) -> None:
        client, seen = answered((429, {"Retry-After": "3"}), (503, {}), (503, {}), (200, {}))
        waits: list[float] = []

        async def sleep(s: float) -> None:
            waits.append(s)

        policy = RetryPolicy(attempts=5, base_delay_s=1.0)
        response = await send(
            client, lambda: client.build_request("GET", "http://c/"), policy, sleep=sleep
        )
        assert response.status_code == 200 and seen == [429, 503, 503, 200]
        assert waits[0] == 3
        assert 1.0 <= waits[1] <= 2.0 and 2.0 <= waits[2] <= 4.0

    async def test_a_storm_ends_with_its_last_answer(self) -> None:
        client, seen = answered(*[(429, {"Retry-After": "0"})] * 10)
        policy = RetryPolicy(attempts=3)
        response = await send(client, lambda: client.build_request("GET", "http://c/"), policy)
        assert response.status_code == 429 and len(seen) == 3

    async def test_a_wait_longer_than_the_policy_is_not_waited_out(self) -> None:
        client, seen = answered((429, {"Retry-After": "3600"}), (200, {}))
        response = await send(
            client, lambda: client.build_request("GET", "http://c/"), RetryPolicy()
        )
        assert response.status_code == 429 and seen == [429]
