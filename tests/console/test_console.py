"""The console's journeys in Chromium against ``docproc dev`` (see conftest.py).

Each journey works through the page as a person would: the development sign-in, a base
created with its ingestion settings refused on the input the API names, files dropped
anywhere on the page (the overlay with the size limit; a drag of text left alone), a long
paste that becomes ``pasted-<date>.txt``, a refused file with its reason, a document going
from processing to indexed, a search, the sync wizard's field errors and its audience
sentence, chat attachment cards, an evaluation set run beside the settings, the vault
(secrets listed, created with their value's fields, deleted; the knowledge-base form and
the sync wizard linking to it when no secret of the kind they need exists), and each
screen's first load failing (said, with a button that tries again). Accessibility basics
are checked on every screen: axe-core (WCAG 2 A/AA: labels, contrast, names) injected into
the page, and keyboard focus.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from docproc_common.auth import EDIT, SECRETS_VIEW, VIEW, mint_token
from docproc_common.vault import VALUE_MODELS, SecretKind
from docproc_testing.auth import DEV_AUTH
from playwright.sync_api import FileChooser, Page, expect

from .conftest import AXE, Dev, screenshot

pytestmark = pytest.mark.integration

OTTERS = "# Otters\n\nSea otters hold hands while they sleep so that they do not drift apart.\n"
#: A paste the console turns into a file: more than 2,000 characters.
LONG_TEXT = "The return window is thirty days from delivery. " * 60
#: What a route answers while it is made to fail.
DOWN = {"error": {"code": "UNAVAILABLE", "message": "The database is down", "details": {}}}


def api(dev: Dev) -> httpx.Client:
    token = mint_token(
        DEV_AUTH,
        user_id="dev",
        organization_id="acme",
        permissions=[VIEW, EDIT, SECRETS_VIEW],
    )
    return httpx.Client(
        base_url=f"{dev.url}/api/v1", headers={"Authorization": f"Bearer {token}"}, timeout=60
    )


def axe_violations(page: Page) -> list[dict[str, Any]]:
    """What axe-core (from npm, injected into the page) finds against WCAG 2 A and AA.
    Evaluated by the browser's devtools protocol: the page's Content-Security-Policy runs no
    script of another origin or inline, which a <script> tag of axe would be."""
    page.evaluate(AXE.read_text())
    result = page.evaluate(
        """async () => (await axe.run(document, {runOnly: ['wcag2a', 'wcag2aa', 'wcag21aa']}))
            .violations.map(v => ({id: v.id, help: v.help, nodes: v.nodes.map(n => n.target)}))"""
    )
    return list(result)


def assert_accessible(page: Page) -> None:
    violations = axe_violations(page)
    assert violations == [], violations


def create_base(page: Page, name: str) -> str:
    """Create a base through the form; the console opens its documents. Its id."""
    page.get_by_label("Name", exact=True).fill(name)
    page.get_by_label("Collection name").fill(name)
    page.get_by_role("button", name="Create").click()
    page.get_by_role("heading", name="How the next uploads are read and filed").wait_for()
    return page.url.rsplit("/", 1)[1]


def drag(page: Page, event: str, selector: str, *, files: bool) -> bool:
    """Dispatch a drag event carrying a file (or only text) on ``selector``; whether the
    page prevented its default."""
    return bool(
        page.evaluate(
            """([event, selector, files, text]) => {
                const data = new DataTransfer();
                if (files) data.items.add(new File([text], 'otters.md', {type: 'text/markdown'}));
                else data.setData('text/plain', 'a selected sentence');
                const e = new DragEvent(event, {dataTransfer: data, bubbles: true, cancelable: true});
                document.querySelector(selector).dispatchEvent(e);
                return e.defaultPrevented;
            }""",
            [event, selector, files, OTTERS],
        )
    )


def test_sign_in_is_reachable_by_keyboard_and_accessible(browser: Any, dev: Dev) -> None:
    context = browser.new_context()
    page = context.new_page()
    page.goto(f"{dev.url}/console/")
    user = page.get_by_label("User id")
    expect(user).to_be_focused()
    assert_accessible(page)
    screenshot(page, "sign-in")
    user.fill("keyboard")
    page.keyboard.press("Tab")
    expect(page.get_by_label("Organization")).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.get_by_label("App admin")).to_be_focused()
    page.keyboard.press("Tab")
    sign_in = page.get_by_role("button", name="Sign in")
    expect(sign_in).to_be_focused()
    outline = sign_in.evaluate("el => getComputedStyle(el).outlineStyle")
    assert outline != "none", "the focused button shows no focus ring"
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Knowledge bases")).to_be_visible()
    expect(page.get_by_text("keyboard · acme")).to_be_visible()
    context.close()


def test_create_shows_field_errors_on_the_inputs_named(page: Page) -> None:
    name = f"kb_{uuid.uuid4().hex[:6]}"
    expect(page.get_by_label("Embedding provider")).to_contain_text("Built-in (in-process, no key)")
    expect(page.get_by_label("Embedding model")).to_contain_text("all-MiniLM-L6-v2")
    page.get_by_label("Name", exact=True).fill(name)
    size = page.get_by_label("Chunk size (characters)")
    size.fill("0")
    page.get_by_role("button", name="Create").click()
    expect(size).to_have_attribute("aria-invalid", "true")
    expect(size).to_be_focused()
    expect(page.locator(f"#{size.get_attribute('id')}-error")).to_contain_text(
        "greater than or equal to 1"
    )
    size.fill("100")
    page.get_by_label("Chunk overlap (characters)").fill("200")
    page.get_by_role("button", name="Create").click()
    expect(page.locator("#ingestion-config-error")).to_contain_text(
        "chunk_overlap must be smaller than chunk_size"
    )
    expect(size).not_to_have_attribute("aria-invalid", "true")
    assert_accessible(page)
    screenshot(page, "create-errors")
    page.get_by_label("Chunk overlap (characters)").fill("20")
    page.get_by_label("Collection name").fill(name)
    page.get_by_role("button", name="Create").click()
    page.get_by_role("heading", name="How the next uploads are read and filed").wait_for()
    page.goto(page.url.split("#")[0] + "#/")
    expect(page.locator(f'tr[data-kb="{name}"]')).to_be_visible()
    screenshot(page, "knowledge-bases")


def test_drop_anywhere_overlay_indexed_and_search(page: Page) -> None:
    create_base(page, f"drop_{uuid.uuid4().hex[:6]}")
    overlay = page.get_by_test_id("drop-overlay")
    # a drag of text is left alone: no overlay, its default not even prevented
    assert drag(page, "dragenter", "h1", files=False) is False
    assert drag(page, "dragover", "h1", files=False) is False
    expect(overlay).to_be_hidden()
    # a file over any part of the page: the overlay, with the per-file limit
    assert drag(page, "dragenter", ".crumbs", files=True) is True
    expect(overlay).to_be_visible()
    expect(overlay).to_contain_text("Up to 50 MB per file")
    screenshot(page, "drop-overlay", full_page=False)  # the overlay covers the viewport
    # every status the document's row takes on, from the first poll on
    page.evaluate(
        """() => { window.statuses = [];
            new MutationObserver(() => {
                const row = document.querySelector('tr[data-document="otters.md"]');
                const s = row && row.dataset.status;
                if (s && window.statuses.at(-1) !== s) window.statuses.push(s);
            }).observe(document.querySelector('[data-testid=documents]'),
                       {subtree: true, childList: true, attributes: true}); }"""
    )
    assert drag(page, "drop", "#search-title", files=True) is True
    expect(overlay).to_be_hidden()
    row = page.locator('tr[data-document="otters.md"]')
    expect(row).to_have_attribute("data-status", "done")
    expect(row).to_contain_text("indexed")
    assert page.evaluate("window.statuses") == ["processing", "done"]
    expect(page.get_by_test_id("collection-status")).to_contain_text("Complete: 1 indexed")
    assert int(row.locator("td").nth(4).inner_text()) >= 1

    page.get_by_label("Query").fill("do sea otters hold hands?")
    page.get_by_role("button", name="Search", exact=True).click()
    first = page.get_by_test_id("results").locator("li").first
    expect(first).to_contain_text("otters.md")
    expect(first).to_contain_text("Sea otters hold hands")
    assert re.search(r"score \d\.\d{3}", first.inner_text())
    page.get_by_label("Mode").select_option("keyword")
    page.get_by_label("Query").fill("drift")
    page.get_by_label("Type").fill("md")
    page.get_by_role("button", name="Search", exact=True).click()
    expect(page.get_by_test_id("results").locator("li")).to_have_count(1)
    page.get_by_label("Type").fill("pdf")  # a filter that matches nothing
    page.get_by_role("button", name="Search", exact=True).click()
    expect(page.get_by_role("status").filter(has_text="No result.")).to_be_visible()
    page.get_by_label("Type").fill("")
    page.get_by_label("Mode").select_option("vector")
    page.get_by_label("Query").fill("do sea otters hold hands?")
    page.get_by_role("button", name="Search", exact=True).click()
    expect(page.get_by_test_id("results").locator("li").first).to_contain_text("otters.md")
    assert_accessible(page)
    screenshot(page, "documents")


def test_a_read_only_token_gets_no_overlay_and_its_drops_are_refused(page: Page, dev: Dev) -> None:
    kb_id = create_base(page, f"ro_{uuid.uuid4().hex[:6]}")
    reader = mint_token(DEV_AUTH, user_id="reader", organization_id="acme", permissions=[VIEW])
    page.evaluate("t => sessionStorage.setItem('docproc.token', t)", reader)
    page.reload()
    expect(page.get_by_text("this base is read-only for you")).to_be_visible()
    assert drag(page, "dragenter", "h1", files=True) is True  # kept from the browser ...
    expect(page.get_by_test_id("drop-overlay")).to_be_hidden()  # ... but not taken
    assert drag(page, "drop", "h1", files=True) is True
    expect(page.get_by_test_id("uploads").locator("li")).to_have_count(0)
    with api(dev) as client:
        assert client.get(f"/kb/{kb_id}/documents").json()["total"] == 0


def test_delete_explains_the_reservation(page: Page) -> None:
    name = f"del_{uuid.uuid4().hex[:6]}"
    create_base(page, name)
    page.get_by_role("link", name="Knowledge bases").first.click()
    row = page.locator(f'tr[data-kb="{name}"]')
    row.get_by_role("button", name="Delete").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text(f"the name {name} stays reserved")
    assert_accessible(page)
    screenshot(page, "delete", full_page=False)
    dialog.get_by_role("button", name="Delete").click()
    expect(row).to_have_count(0)


def test_long_paste_and_a_refused_file(page: Page) -> None:
    create_base(page, f"paste_{uuid.uuid4().hex[:6]}")
    box = page.get_by_label("Paste text")

    def paste(text: str) -> None:
        box.evaluate(
            """(el, text) => { const data = new DataTransfer(); data.setData('text/plain', text);
                el.dispatchEvent(new ClipboardEvent('paste',
                    {clipboardData: data, bubbles: true, cancelable: true})); }""",
            text,
        )

    paste("a short question")  # below the threshold: nothing is uploaded
    paste(LONG_TEXT)
    pasted = page.locator('tr[data-document^="pasted-"]')
    expect(pasted).to_have_count(1)
    assert re.fullmatch(
        r"pasted-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.txt", pasted.get_attribute("data-document") or ""
    )
    expect(box).to_have_value("")
    expect(pasted).to_have_attribute("data-status", "done")

    page.locator("#choose-files").set_input_files(
        files=[{"name": "tool.exe", "mimeType": "application/octet-stream", "buffer": b"MZ\x90"}]
    )
    refused = page.locator('.uploads li[data-file="tool.exe"]')
    expect(refused).to_have_attribute("role", "alert")
    expect(refused).to_contain_text("refused: Unsupported file type: .exe cannot be read")
    expect(page.locator('tr[data-document="tool.exe"]')).to_have_count(0)
    screenshot(page, "upload-refused")


def test_choose_files_is_reachable_by_keyboard(page: Page) -> None:
    choosers: list[FileChooser] = []
    page.on("filechooser", lambda fc: choosers.append(fc))  # first: it starts the interception
    create_base(page, f"keys_{uuid.uuid4().hex[:6]}")
    chooser = page.get_by_role("button", name="choose files")
    for _ in range(30):
        page.keyboard.press("Tab")
        if chooser.evaluate("el => el === document.activeElement"):
            break
    expect(chooser).to_be_focused()
    page.keyboard.press("Enter")
    for _ in range(300):
        if choosers:
            break
        page.wait_for_timeout(100)
    assert choosers and choosers[0].is_multiple()


def test_sync_wizard_field_errors_and_audience(page: Page, dev: Dev) -> None:
    kb_id = create_base(page, f"sync_{uuid.uuid4().hex[:6]}")
    with api(dev) as client:
        secret = client.post(
            "/secrets",
            json={
                "name": "handbook reader",
                "kind": "aws_credentials",
                "value": {"access_key_id": "AKIAEXAMPLE", "secret_access_key": "example"},
                "visibility": "org",
            },
        )
        assert secret.status_code == 201, secret.text
    page.get_by_role("link", name="Sync sources").click()
    page.get_by_role("button", name=re.compile("^Amazon S3")).click()
    assert_accessible(page)
    expect(page.get_by_label("Source name")).to_be_focused()  # the wizard's first input
    bucket = page.get_by_label("Bucket (required)")
    page.get_by_role("button", name="Review").click()
    expect(bucket).to_have_attribute("aria-invalid", "true")
    expect(page.locator(f"#{bucket.get_attribute('id')}-error")).to_have_text("Field required")
    expect(page.locator(".form-error")).to_contain_text("The s3 configuration is not valid")
    assert_accessible(page)
    screenshot(page, "sync-wizard-errors")

    bucket.fill("acme-docs")
    page.get_by_label("Prefix").fill("handbook/")
    credential = page.get_by_label("Credential (aws_credentials secret)")
    page.get_by_role("button", name="Review").click()
    expect(credential).to_have_attribute("aria-invalid", "true")
    credential.select_option(label="handbook reader (org)")
    page.get_by_role("button", name="Review").click()
    audience = page.get_by_test_id("audience")
    expect(audience).to_contain_text('The aws_credentials secret "handbook reader" can read')
    expect(audience).to_contain_text(
        "by everyone in the organization acme who can view the collection."
    )
    with api(dev) as client:  # the review saved nothing
        assert client.get(f"/kb/{kb_id}/sync-sources").json() == []
    assert_accessible(page)
    screenshot(page, "sync-wizard-audience")
    page.get_by_role("button", name="Save source").click()
    expect(page.get_by_text("Saved the Amazon S3 source.")).to_be_visible()
    expect(page.get_by_test_id("sources").locator("tbody tr")).to_have_count(1)
    page.get_by_role("button", name="Runs and logs").click()
    expect(page.get_by_test_id("runs")).to_contain_text("No run yet.")
    screenshot(page, "sync-sources")


def test_chat_upload_cards(page: Page) -> None:
    page.get_by_role("link", name="Try a chat upload").click()
    page.get_by_label("Attach files").set_input_files(
        files=[
            {
                "name": "notes.txt",
                "mimeType": "text/plain",
                "buffer": b"Quarterly notes\nRevenue grew in the north.\nHiring resumes in May.\n",
            }
        ]
    )
    card = page.locator('.attachment[data-file="notes.txt"]')
    expect(card.locator(".att-preview")).to_contain_text("Revenue grew in the north.")
    expect(card.locator(".att-meta")).to_contain_text("text/plain")
    expect(card.locator(".att-meta")).to_contain_text("B")
    assert drag(page, "dragenter", "h1", files=True) is True
    expect(page.get_by_test_id("drop-overlay")).to_contain_text("Up to 10 MB per file")
    drag(page, "dragleave", "h1", files=True)
    assert_accessible(page)
    screenshot(page, "chat-upload")


def test_evaluations_beside_the_settings_run_and_their_history(page: Page, dev: Dev) -> None:
    kb_id = create_base(page, f"eval_{uuid.uuid4().hex[:6]}")
    with api(dev) as client:
        upload = client.post(f"/kb/{kb_id}/documents", files={"file": ("otters.md", OTTERS)})
        assert upload.status_code == 202, upload.text
        for _ in range(600):
            if client.get(f"/kb/{kb_id}/ingestion").json()["indexing_status"] == "complete":
                break
            time.sleep(0.1)
        made = client.post(
            f"/kb/{kb_id}/evaluations",
            json={
                "name": "otter questions",
                "queries": [
                    {"id": "q1", "text": "do sea otters hold hands?", "relevant": {"otters.md": 1}}
                ],
            },
        )
        assert made.status_code == 201, made.text
    page.get_by_role("link", name="Settings", exact=True).click()
    section = page.get_by_test_id("evaluations")
    evaluation = section.locator('article[data-evaluation="otter questions"]')
    expect(evaluation).to_contain_text("1 queries, 1 judged documents")
    expect(evaluation).to_contain_text("Not run yet.")
    evaluation.get_by_role("button", name="Run otter questions").click()
    expect(evaluation.get_by_role("status")).to_contain_text("Ran: nDCG@10 vector 1.000")
    row = evaluation.get_by_test_id("runs").locator("tbody tr")
    expect(row).to_have_count(1)
    expect(row.locator('td[data-mode="vector"]')).to_have_text("1.000")
    expect(row).to_contain_text("manual (dev)")
    expect(row).to_contain_text("all-MiniLM-L6-v2 · chunks 2500/200")
    assert_accessible(page)
    screenshot(page, "evaluations")

    # the sets fail to load: said on the section, and a second try loads them
    refusal = {"error": {"code": "UNAVAILABLE", "message": "The database is down", "details": {}}}
    pattern = "**/api/v1/kb/*/evaluations"
    page.route(pattern, lambda route: route.fulfill(status=503, json=refusal))
    page.reload()
    expect(section.get_by_role("alert")).to_have_text(
        "The evaluation sets could not be loaded: The database is down"
    )
    page.unroute(pattern)
    section.get_by_role("button", name="Try again").click()
    expect(evaluation.get_by_test_id("runs").locator("tbody tr")).to_have_count(1)
    expect(row).to_contain_text("vector weight 0.6")  # the product's blend: none chosen

    # the hybrid blend beside the sets: refused out of range on its input, then saved, and
    # the next run says what it ran with
    form = page.get_by_role("form", name="Settings")
    weight = form.get_by_label("Vector weight in hybrid search")
    weight.fill("1.5")
    form.get_by_role("button", name="Save settings").click()
    expect(weight).to_have_attribute("aria-invalid", "true")
    expect(form.get_by_role("alert").filter(has_text="less than or equal to 1")).to_be_visible()
    weight.fill("0.8")
    form.get_by_role("button", name="Save settings").click()
    expect(form.get_by_role("status").filter(has_text="Saved.")).to_be_visible()
    evaluation.get_by_role("button", name="Run otter questions").click()
    runs = evaluation.get_by_test_id("runs").locator("tbody tr")
    expect(runs).to_have_count(2)
    expect(runs.first).to_contain_text("vector weight 0.8")


def test_settings_choose_a_vision_profile_made_without_leaving_the_dialog(
    page: Page, dev: Dev
) -> None:
    """#image-description: the settings turn image description on with one of the
    organization's vision model profiles; a profile (a provider, a model and a new key saved
    to the vault) is made in a dialog over the settings, a refusal shown on its input; a
    profile the base selects cannot be deleted."""
    kb_id = create_base(page, f"vision_{uuid.uuid4().hex[:6]}")
    page.get_by_role("link", name="Settings", exact=True).click()
    section = page.get_by_test_id("image-description")
    expect(section.get_by_label("Vision model profile")).to_contain_text("None yet")
    section.get_by_role("button", name="New vision profile…").click()
    dialog = page.get_by_role("dialog")
    profile_name = f"vision {uuid.uuid4().hex[:6]}"
    dialog.get_by_label("Profile name").fill(profile_name)
    # a server the deployment does not allow: refused on its input, the dialog stays
    dialog.get_by_label("Provider").select_option("openai-compatible")
    address = dialog.get_by_label("Server address")
    address.fill("http://10.1.2.3:8000/v1")
    dialog.get_by_label("Model").fill("gpt-4o-mini")
    dialog.get_by_label("Key from the vault").select_option("")
    dialog.get_by_role("button", name="Make profile").click()
    expect(address).to_have_attribute("aria-invalid", "true")
    expect(dialog.locator(".form-error")).to_contain_text("A vision key may not be sent")
    assert_accessible(page)
    screenshot(page, "vision-profile-dialog")
    # OpenAI with a new key: the key goes to the vault, the profile is made and chosen
    dialog.get_by_label("Provider").select_option("openai")
    expect(address).to_be_hidden()
    dialog.get_by_label("Key from the vault").select_option("new")
    dialog.get_by_label("New API key").fill("sk-vision-example")
    dialog.get_by_role("button", name="Make profile").click()
    expect(page.get_by_role("dialog")).to_have_count(0)
    choice = section.get_by_label("Vision model profile")
    expect(choice.locator("option:checked")).to_have_text(f"{profile_name} · openai · gpt-4o-mini")
    expect(section.get_by_label(re.compile("Describe images"))).to_be_checked()
    page.get_by_role("button", name="Save settings").click()
    expect(page.get_by_role("status").filter(has_text="Saved.")).to_be_visible()
    assert "sk-vision-example" not in page.content()
    assert_accessible(page)
    screenshot(page, "settings-image-description")
    with api(dev) as client:
        config = client.get(f"/kb/{kb_id}").json()["ingestion_config"]
        (profile,) = [p for p in client.get("/vision-profiles").json() if p["name"] == profile_name]
        assert (config["image_description"], config["vision_profile_id"]) == (True, profile["id"])
        secret = [s for s in client.get("/secrets").json() if s["id"] == profile["secret_id"]]
        assert secret and secret[0]["kind"] == "api_key" and secret[0]["provider"] == "openai"
        refused = client.delete(f"/vision-profiles/{profile['id']}")
        assert refused.status_code == 409, refused.text
    # the choice survives a reload; None turns it off together with image description
    page.reload()
    expect(section.get_by_label("Vision model profile").locator("option:checked")).to_have_text(
        f"{profile_name} · openai · gpt-4o-mini"
    )


@pytest.fixture(scope="module")
def kb_id(dev: Dev) -> Iterator[str]:
    """A base of dev's organization (acme), made through the API."""
    with api(dev) as client:
        made = client.post(
            "/kb",
            json={
                "name": f"loads_{uuid.uuid4().hex[:6]}",
                "scope": "org",
                "embedding_provider": "local",
                "embedding_model": "sentence-transformers/all-MiniLM-L6-v2",
            },
        )
        assert made.status_code == 201, made.text
        yield made.json()["id"]


@dataclass(frozen=True)
class FirstLoad:
    #: The screen's hash, ``{kb}`` standing for the base's id.
    screen: str
    #: The requests made to fail (globs, or regular expressions where a query follows).
    fail: tuple[str | re.Pattern[str], ...]
    #: What the screen says for each, in its order on the page.
    said: tuple[str, ...]
    #: A heading the screen shows once it has loaded.
    loaded: str


FIRST_LOADS = {
    "bases": FirstLoad(
        "#/",
        ("**/api/v1/kb", "**/api/v1/rag/embedding-models"),
        (
            "The knowledge bases could not be loaded: The database is down",
            "The embedding models could not be loaded: The database is down",
        ),
        "Create a knowledge base",
    ),
    "documents": FirstLoad(
        "#/kb/{kb}",
        ("**/api/v1/kb/*",),
        ("The knowledge base could not be loaded: The database is down",),
        "How the next uploads are read and filed",
    ),
    "settings": FirstLoad(
        "#/kb/{kb}/settings",
        ("**/api/v1/kb/*",),
        ("The knowledge base could not be loaded: The database is down",),
        "Evaluations",
    ),
    "sync base": FirstLoad(
        "#/kb/{kb}/sync",
        ("**/api/v1/kb/*",),
        ("The knowledge base could not be loaded: The database is down",),
        "Add a source: 1. choose a connector",
    ),
    "sync lists": FirstLoad(
        "#/kb/{kb}/sync",
        (re.compile(r"/api/v1/kb/[^/]+/sync-sources$"), "**/api/v1/rag/sync/connectors"),
        (
            "The sources could not be loaded: The database is down",
            "The connectors could not be loaded: The database is down",
        ),
        "Add a source: 1. choose a connector",
    ),
}


@pytest.mark.parametrize("load", FIRST_LOADS.values(), ids=FIRST_LOADS.keys())
def test_a_first_load_that_fails_says_why_and_tries_again(
    page: Page, dev: Dev, kb_id: str, load: FirstLoad
) -> None:
    for pattern in load.fail:
        page.route(pattern, lambda route: route.fulfill(status=503, json=DOWN))
    page.goto(f"{dev.url}/console/{load.screen.format(kb=kb_id)}")
    page.reload()  # the screen drawn anew, whatever was shown before
    alerts = page.get_by_role("alert")
    expect(alerts).to_have_text(list(load.said))
    retry = page.get_by_role("button", name="Try again")
    expect(retry).to_have_count(len(load.said))
    assert_accessible(page)
    retry.first.click()  # still failing: said again, the focus kept on the button
    expect(retry.first).to_be_focused()
    expect(alerts).to_have_text(list(load.said))
    for pattern in load.fail:
        page.unroute(pattern)
    for left in range(len(load.said), 0, -1):
        expect(retry).to_have_count(left)
        retry.first.click()
    expect(page.get_by_role("heading", name=load.loaded, exact=True)).to_be_visible()
    expect(alerts).to_have_count(0)


def test_the_documents_poll_says_it_failed_until_it_succeeds(
    page: Page, dev: Dev, kb_id: str
) -> None:
    documents = re.compile(r"/api/v1/kb/[^/]+/documents\?")
    page.route(documents, lambda route: route.fulfill(status=503, json=DOWN))
    page.goto(f"{dev.url}/console/#/kb/{kb_id}")
    expect(page.get_by_role("alert")).to_have_text(
        "The documents could not be loaded: The database is down. Trying again every few seconds."
    )
    page.unroute(documents)  # the next poll is the retry
    expect(page.get_by_test_id("documents")).to_contain_text("No documents yet.")
    expect(page.get_by_role("alert")).to_have_count(0)


def test_the_console_says_when_its_settings_cannot_be_loaded(page: Page, dev: Dev) -> None:
    page.route("**/console/config.json", lambda route: route.abort())
    page.reload()
    expect(page.get_by_role("alert")).to_have_text(
        "The console's settings could not be loaded: The server could not be reached"
    )
    assert_accessible(page)
    page.unroute("**/console/config.json")
    page.get_by_role("button", name="Try again").click()
    expect(page.get_by_role("heading", name="Knowledge bases")).to_be_visible()


def test_the_vault_form_takes_each_kinds_value_as_the_vault_does(page: Page) -> None:
    """Each kind's inputs are its value model's fields (``value.<field>``, as a refusal names
    them); a service account's key file is pasted whole."""
    page.get_by_role("link", name="Vault").click()
    kind = page.get_by_label("Kind")
    assert sorted(kind.locator("option").evaluate_all("os => os.map(o => o.value)")) == sorted(
        SecretKind
    )
    for each in SecretKind:
        kind.select_option(each.value)
        inputs = page.locator("#secret-value").locator("input, textarea")
        named = set(inputs.evaluate_all("els => els.map(e => e.dataset.field)"))
        expected = (
            {"value"}
            if each is SecretKind.GCP_SERVICE_ACCOUNT
            else {f"value.{name}" for name in VALUE_MODELS[each].model_fields}
        )
        assert named == expected, each


def test_vault_lists_creates_and_deletes_secrets(page: Page, dev: Dev) -> None:
    name = f"parser key {uuid.uuid4().hex[:6]}"
    value = f"llx-{uuid.uuid4().hex}"
    page.get_by_role("link", name="Vault").click()
    expect(page.get_by_role("heading", name="Vault", exact=True)).to_be_visible()
    expect(page.get_by_label("Provider")).to_be_visible()  # api_key first: it names its provider
    page.get_by_label("Name", exact=True).fill(name)
    page.get_by_label("Kind").select_option("llamaparse")
    expect(page.get_by_label("Provider")).to_be_hidden()
    key = page.get_by_label("API key")
    expect(key).to_have_attribute("type", "password")
    page.get_by_role("button", name="Save secret").click()  # no value: refused on its input
    expect(key).to_have_attribute("aria-invalid", "true")
    expect(page.locator(f"#{key.get_attribute('id')}-error")).to_have_text("Field required")
    expect(page.locator(".form-error")).to_contain_text("The value is not a valid llamaparse")
    assert_accessible(page)
    screenshot(page, "vault-errors")

    key.fill(value)
    page.get_by_label("Shared with").select_option("org")
    page.get_by_role("button", name="Save secret").click()
    expect(page.get_by_role("status").filter(has_text=f"Saved {name}.")).to_contain_text(
        "is not shown again"
    )
    row = page.locator(f'tr[data-secret="{name}"]')
    expect(row).to_contain_text("LlamaParse key")
    expect(row).to_contain_text("the organization")
    expect(page.get_by_label("API key")).to_have_value("")  # the value went with its inputs
    assert value not in page.content()
    with api(dev) as client:
        listed = client.get("/secrets", params={"kind": "llamaparse"}).json()
        assert [s["name"] for s in listed if s["name"] == name] == [name]
        assert value not in str(listed)
    assert_accessible(page)
    screenshot(page, "vault")

    row.get_by_role("button", name=f"Delete {name}").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("nothing falls back to another key")
    dialog.get_by_role("button", name="Delete").click()
    expect(row).to_have_count(0)
    with api(dev) as client:
        assert name not in {s["name"] for s in client.get("/secrets").json()}

    # without secrets:view: only one's own secrets, and nothing to share with the organization
    mine = mint_token(DEV_AUTH, user_id="dev", organization_id="acme", permissions=[VIEW, EDIT])
    page.evaluate("t => sessionStorage.setItem('docproc.token', t)", mine)
    page.reload()
    expect(page.get_by_text("Your token does not grant secrets:view")).to_be_visible()
    sharing = page.get_by_label("Shared with").locator("option")
    assert sharing.evaluate_all("os => os.map(o => o.value)") == ["private"]


def test_the_knowledge_base_form_links_to_the_vault_when_no_key_exists(page: Page) -> None:
    # an organization of its own: acme's vault holds the keys other tests of this module
    # made (a vision profile's api_key, whatever the order)
    alone = mint_token(
        DEV_AUTH,
        user_id="dev",
        organization_id=f"novault-{uuid.uuid4().hex[:8]}",
        permissions=[VIEW, EDIT, SECRETS_VIEW],
    )
    page.evaluate("t => sessionStorage.setItem('docproc.token', t)", alone)
    page.reload()
    page.get_by_role("heading", name="Knowledge bases").wait_for()
    page.get_by_label("Embedding provider").select_option(label="OpenAI")
    keys = page.get_by_label("API key (vault secret)")
    expect(keys).to_contain_text("No openai api_key in the vault")
    link = page.get_by_role("link", name="Add a key for OpenAI to the vault")
    assert_accessible(page)
    link.click()
    expect(page.get_by_label("Kind")).to_have_value("api_key")
    expect(page.get_by_label("Provider")).to_have_value("openai")
    page.get_by_label("Name", exact=True).fill("openai embeddings")
    page.get_by_label("API key").fill("sk-example")
    page.get_by_role("button", name="Save secret").click()
    page.get_by_role("link", name="Back to where you were").click()
    page.get_by_label("Embedding provider").select_option(label="OpenAI")
    expect(keys).to_contain_text("openai embeddings")
    expect(page.get_by_test_id("vault-link")).to_have_count(0)


def test_the_sync_wizard_links_to_the_vault_when_no_secret_of_its_kind_exists(
    page: Page, dev: Dev, kb_id: str
) -> None:
    page.goto(f"{dev.url}/console/#/kb/{kb_id}/sync")
    page.get_by_role("button", name=re.compile("^Git")).click()
    expect(page.get_by_label("Credential (git_token secret)")).to_contain_text(
        "No git_token secret in the vault"
    )
    assert_accessible(page)
    page.get_by_role("link", name="Add a git_token secret to the vault").click()
    expect(page.get_by_role("heading", name="Vault", exact=True)).to_be_visible()
    expect(page.get_by_label("Kind")).to_have_value("git_token")
    expect(page.get_by_label("Token", exact=True)).to_be_visible()
