"""``/console`` (``docproc_upload.console``): the built page and its assets, the answer when
they are not built, and the development sign-in only in ``docproc dev``."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from docproc_common.auth import EDIT, SECRETS_VIEW, VIEW
from docproc_common.http import create_app
from docproc_common.settings import BusMode, BusSettings, Settings
from docproc_upload.bearer import verify_token
from docproc_upload.console import (
    BUILD_HINT,
    ExposedSignInError,
    LocalRequestsOnly,
    build_console_router,
    dev_sign_in_guard,
    host_name,
)


def client(dist: Path, **settings: Any) -> httpx.AsyncClient:
    runtime: Any = SimpleNamespace(settings=Settings(**settings))
    app = create_app(title="console-test", routers=[build_console_router(runtime, dist)])
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1")


DEV = {"bus": BusSettings(mode=BusMode.EMBEDDED)}


@pytest.fixture
def dist(tmp_path: Path) -> Path:
    (tmp_path / "assets").mkdir()
    (tmp_path / "index.html").write_text("<!doctype html><title>docproc console</title>")
    (tmp_path / "assets" / "index-abc.js").write_text("console.log(1)")
    (tmp_path / "secret.txt").write_text("outside the assets")
    return tmp_path


async def test_the_page_and_its_assets(dist: Path) -> None:
    async with client(dist) as c:
        assert (await c.get("/console")).headers["location"] == "/console/"
        page = await c.get("/console/")
        assert page.status_code == 200 and "docproc console" in page.text
        asset = await c.get("/console/assets/index-abc.js")
        assert asset.status_code == 200 and asset.text == "console.log(1)"
        for name in ("../secret.txt", "..%2Fsecret.txt", "nope.js", ""):
            assert (await c.get(f"/console/assets/{name}")).status_code == 404, name


async def test_the_page_may_not_be_framed_sniffed_or_run_foreign_scripts(dist: Path) -> None:
    async with client(dist) as c:
        for path in ("/console/", "/console/assets/index-abc.js"):
            r = await c.get(path)
            assert r.headers["x-frame-options"] == "DENY", path
            assert r.headers["x-content-type-options"] == "nosniff", path
            policy = dict(
                d.strip().split(" ", 1) for d in r.headers["content-security-policy"].split(";")
            )
            assert policy["script-src"] == "'self'", path
            assert policy["frame-ancestors"] == "'none'", path
            assert policy["default-src"] == "'self'", path


async def test_not_built_says_how_to_build(tmp_path: Path) -> None:
    async with client(tmp_path / "missing") as c:
        r = await c.get("/console/")
    assert r.status_code == 503
    assert r.json()["error"]["message"] == BUILD_HINT
    assert "make console" in BUILD_HINT


async def test_dev_sign_in_mints_a_token_in_docproc_dev(dist: Path) -> None:
    async with client(dist, **DEV) as c:
        assert (await c.get("/console/config.json")).json() == {
            "dev_sign_in": True,
            "max_upload_size_mb": 50,
            "chat_max_upload_size_mb": 10,
        }
        r = await c.post("/console/dev-token", json={"user_id": "ana", "organization_id": "acme"})
        assert r.status_code == 200, r.text
        principal = verify_token(Settings().auth, r.json()["token"])
        assert (principal.user_id, principal.organization_id) == ("ana", "acme")
        assert principal.permissions == {VIEW, EDIT, SECRETS_VIEW} and not principal.app_admin
        refused = await c.post("/console/dev-token", json={"user_id": ""})
        assert refused.status_code == 422
        assert refused.json()["error"]["details"]["fields"][0]["field"] == "user_id"


async def test_the_dev_sign_in_reads_no_body_past_the_json_cap(dist: Path) -> None:
    """It signs in whoever asks, so it reads its body before knowing anyone: held to
    ``LIMITS__MAX_JSON_BODY_BYTES`` like every other JSON body (issue 25, item 6), where
    it read and parsed any body the whole request's cap let through (422 after 2 MiB)."""
    limits = {"max_json_body_bytes": 4096}
    async with client(dist, **DEV, limits=limits) as c:
        big = await c.post("/console/dev-token", json={"user_id": "a" * 5000})
        fits = await c.post("/console/dev-token", json={"user_id": "ana"})
    assert big.status_code == 413, big.text
    assert "LIMITS__MAX_JSON_BODY_BYTES" in big.json()["error"]["message"]
    assert fits.status_code == 200, fits.text


@pytest.mark.parametrize(
    "settings",
    [
        {},
        {**DEV, "env": "prod", "auth": {"jwt_secret": "p" * 40}, "vault": {"master_key": "A" * 43}},
    ],
    ids=["distributed", "prod"],
)
async def test_no_dev_sign_in_outside_docproc_dev(dist: Path, settings: dict[str, Any]) -> None:
    async with client(dist, **settings) as c:
        assert (await c.get("/console/config.json")).json()["dev_sign_in"] is False
        r = await c.post("/console/dev-token", json={"user_id": "ana"})
    assert r.status_code in (404, 405)


class TestDnsRebinding:
    """Under docproc dev a page whose name is rebound to 127.0.0.1 is refused: the server
    answers only a loopback name or the name it is bound to, and listens on loopback."""

    @staticmethod
    def guarded(dist: Path, host: str) -> httpx.AsyncClient:
        settings = Settings(**DEV, http={"host": "127.0.0.1"})
        runtime: Any = SimpleNamespace(settings=settings)
        app = create_app(title="console-test", routers=[build_console_router(runtime, dist)])
        for cls, options in dev_sign_in_guard(settings):
            app.add_middleware(cls, **options)
        return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=host)

    @pytest.mark.parametrize(
        "host",
        ["http://attacker.example:8000", "http://127.0.0.1.nip.io", "http://10.0.0.5:8000"],
    )
    async def test_another_name_mints_nothing(self, dist: Path, host: str) -> None:
        async with self.guarded(dist, host) as c:
            r = await c.post("/console/dev-token", json={"user_id": "root", "app_admin": True})
            assert r.status_code == 403, r.text
            assert "token" not in r.json()
            assert r.json()["error"]["code"] == "FORBIDDEN"
            assert (await c.get("/console/config.json")).status_code == 403

    @pytest.mark.parametrize(
        "host", ["http://127.0.0.1:8000", "http://localhost:8000", "http://[::1]:8000"]
    )
    async def test_a_loopback_name_signs_in(self, dist: Path, host: str) -> None:
        async with self.guarded(dist, host) as c:
            r = await c.post("/console/dev-token", json={"user_id": "ana"})
        assert r.status_code == 200, r.text

    async def test_the_bound_name_is_answered(self, dist: Path) -> None:
        app = create_app(title="console-test")
        app.add_middleware(LocalRequestsOnly, bound="devbox.internal")
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://devbox.internal") as c:
            assert (await c.get("/healthz")).status_code == 200

    @pytest.mark.parametrize(
        ("header", "name"),
        [
            ("LocalHost.:8000", "localhost"),
            ("[::1]:8000", "::1"),
            ("127.0.0.1", "127.0.0.1"),
            ("", ""),
        ],
    )
    def test_host_name(self, header: str, name: str) -> None:
        assert host_name(header) == name

    def test_a_bind_beyond_loopback_needs_the_sign_in_off(self) -> None:
        for host in ("0.0.0.0", "::", "192.0.2.7"):
            with pytest.raises(ExposedSignInError, match="--no-dev-sign-in"):
                dev_sign_in_guard(Settings(**DEV, http={"host": host}))
            assert (
                dev_sign_in_guard(Settings(**DEV, http={"host": host, "dev_sign_in": False})) == []
            )
        assert dev_sign_in_guard(Settings(**DEV, http={"host": "localhost"}))
