"""HTML pages as the text a knowledge base indexes, and the links a crawler follows."""

from __future__ import annotations

from docproc_sync.connectors.html_text import parse_html
from docproc_sync.connectors.web import normalize, page_name


def test_text_headings_lists_and_links() -> None:
    page = parse_html(
        """<html><head><title>Guide</title><style>p{}</style>
        <script>var x = "<p>not text</p>";</script></head>
        <body><nav><a href="/a">A</a></nav><h1>Install</h1><p>Run   the
        installer.</p><ul><li>one</li><li>two</li></ul>
        <a href="b.html#top" rel="nofollow">skip</a><a href="c.html">C</a>
        <pre>  keep
  spacing</pre></body></html>"""
    )
    assert page.title == "Guide"
    assert "# Install" in page.text
    assert "Run the installer." in page.text
    assert "- one" in page.text and "- two" in page.text
    assert "not text" not in page.text and "p{}" not in page.text
    assert page.links == ["/a", "c.html"]
    assert "  keep\n  spacing" in page.text
    assert page.text.startswith("# Install"), "a page's own heading leads; the title is not added"
    assert parse_html("<title>T</title><p>body</p>").text == "# T\n\nbody"


def test_robots_meta() -> None:
    page = parse_html('<meta name="robots" content="noindex, nofollow"><p>x</p>')
    assert page.noindex and page.nofollow


def test_normalize() -> None:
    assert normalize("HTTPS://Example.COM:443/a?b=1#frag") == "https://example.com/a?b=1"
    assert normalize("http://example.com") == "http://example.com/"
    assert normalize("http://example.com:8080/x") == "http://example.com:8080/x"
    assert normalize("mailto:a@b") is None
    assert normalize("javascript:alert(1)") is None


def test_page_names() -> None:
    assert page_name("https://e.com/docs/intro.html", "md") == "intro.md"
    assert page_name("https://e.com/docs/", "md") == "index.md"
    assert page_name("https://e.com/files/guide.pdf", "pdf") == "guide.pdf"
    assert page_name("https://e.com/x/..%2F..%2Fhome%2Fapp%2F.ssh%2Fauthorized_keys", "md") == (
        "../../home/app/.ssh/authorized_keys.md"
    )
