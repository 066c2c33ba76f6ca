"""The console in real Chromium: ``docproc dev`` as an OS process, Debian's ``chromium``
driven by Playwright for Python through ``executable_path`` (no browser download).

``docproc dev`` runs on a fresh database of the test Postgres with local storage and the
local model, and serves the console built by ``make console`` (the fixture fails, naming
the command, when ``docproc_upload/console_dist`` is missing). Each test gets a fresh
page signed in through the development sign-in. With ``CONSOLE_SCREENSHOTS=<dir>`` the
journeys save a screenshot of each screen there (``make console-screenshots`` writes
``docs/console/``).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest
from docproc_testing.dev import Dev, running_dev
from docproc_testing.infra import find_repo_root
from docproc_upload.console import DIST

pytest.importorskip("playwright", reason="playwright (a dev dependency) is not installed")
from playwright.sync_api import Browser, Page, Playwright, expect, sync_playwright  # noqa: E402

ROOT = find_repo_root()
CONSOLE = ROOT / "services" / "upload" / "console"
AXE = CONSOLE / "node_modules" / "axe-core" / "axe.min.js"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
#: Generous: the machine is shared; no assertion is timed, these only bound a wait.
WAIT_MS = 90_000
expect.set_options(timeout=WAIT_MS)


@pytest.fixture(scope="module")
def dev(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dev]:
    if not (DIST / "index.html").is_file() or not AXE.is_file():
        pytest.fail("the console is not built: run `make console` first", pytrace=False)
    if CHROMIUM is None:
        pytest.skip("chromium (Debian package) is not installed: make system-packages")
    with running_dev(tmp_path_factory.mktemp("console")) as dev:
        yield dev


@pytest.fixture(scope="module")
def playwright(dev: Dev) -> Iterator[Playwright]:
    """After ``dev``: Playwright's sync API runs an event loop in this thread, and the test
    database is made with ``asyncio.run``. Module-scoped, so the loop is gone before the
    next module's asyncio tests run in the same session."""
    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="module")
def browser(playwright: Playwright) -> Iterator[Browser]:
    b = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
    yield b
    b.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item,
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Each phase's report kept on the test (``page`` reads whether the call failed)."""
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


@pytest.fixture
def page(browser: Browser, dev: Dev, request: pytest.FixtureRequest) -> Iterator[Page]:
    """A fresh tab signed in through the development sign-in as dev of acme. When the test
    fails, what the page logged and each API exchange are printed with the failure (a
    flake on a loaded machine leaves its evidence in CI's log)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(WAIT_MS)
    p = context.new_page()
    journal: list[str] = []
    p.on("console", lambda m: journal.append(f"console {m.type}: {m.text}"))
    p.on("pageerror", lambda e: journal.append(f"page error: {e}"))
    p.on("framenavigated", lambda f: journal.append(f"navigated: {f.url}"))
    p.on("requestfinished", lambda r: journal.append(f"{r.method} {r.url}: done"))
    p.on("requestfailed", lambda r: journal.append(f"{r.method} {r.url}: {r.failure}"))
    p.goto(f"{dev.url}/console/")
    p.get_by_label("User id").fill("dev")
    p.get_by_label("Organization").fill("acme")
    p.get_by_role("button", name="Sign in").click()
    p.get_by_role("heading", name="Knowledge bases").wait_for()
    yield p
    call = getattr(request.node, "report_call", None)
    if call is not None and call.failed:
        print("the page's last events:", *journal[-80:], sep="\n  ")
    context.close()


def screenshot(page: Page, name: str, *, full_page: bool = True) -> None:
    """The screen as ``<name>.png`` under ``CONSOLE_SCREENSHOTS``, when it is set."""
    directory = os.environ.get("CONSOLE_SCREENSHOTS")
    if directory:
        Path(directory).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(directory) / f"{name}.png"), full_page=full_page)
