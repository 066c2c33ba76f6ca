"""HTML to the text a knowledge base indexes, and the links a crawler follows (stdlib only).

Scripts, styles, navigation chrome and forms are dropped; headings become
markdown headings, list items bullets, and block elements end their lines, so
the markdown splitter can cut a page at its own sections.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

_SKIP = {
    "script",
    "style",
    "noscript",
    "template",
    "svg",
    "head",
    "title",
    "nav",
    "form",
    "iframe",
    "object",
}
_BLOCK = {
    "p", "div", "section", "article", "main", "header", "footer", "aside", "br", "hr", "tr",
    "table", "ul", "ol", "dl", "dt", "dd", "pre", "blockquote", "figure", "figcaption", "li",
    "h1", "h2", "h3", "h4", "h5", "h6", "title",
}  # fmt: skip
_PRE_NEWLINE, _PRE_SPACE = "\ue000", "\ue001"
_VOID = {
    "br",
    "hr",
    "img",
    "input",
    "meta",
    "link",
    "area",
    "base",
    "col",
    "embed",
    "source",
    "wbr",
}


@dataclass
class Page:
    title: str = ""
    text: str = ""
    links: list[str] = field(default_factory=list)
    noindex: bool = False
    nofollow: bool = False
    base_href: str | None = None


class _Extractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.page = Page()
        self._skip_depth = 0
        self._in_title = False
        self._in_pre = 0
        self._out: list[str] = []
        self._title: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k.lower(): (v or "") for k, v in attrs}
        if tag == "meta" and a.get("name", "").lower() == "robots":
            content = a.get("content", "").lower()
            self.page.noindex |= "noindex" in content or "none" in content
            self.page.nofollow |= "nofollow" in content or "none" in content
        elif tag == "base" and a.get("href") and self.page.base_href is None:
            self.page.base_href = a["href"]
        elif tag == "a" and a.get("href") and "nofollow" not in a.get("rel", "").lower():
            self.page.links.append(a["href"])
        if tag == "title":
            self._in_title = True
        if tag in _SKIP and tag not in _VOID:
            self._skip_depth += 1
            return
        if self._skip_depth:
            return
        if tag == "pre":
            self._in_pre += 1
        if tag in _BLOCK:
            self._out.append("\n")
        if re.fullmatch(r"h[1-6]", tag):
            self._out.append("#" * int(tag[1]) + " ")
        elif tag == "li":
            self._out.append("- ")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        if tag in _SKIP and tag not in _VOID:
            self._skip_depth = max(0, self._skip_depth - 1)
            return
        if self._skip_depth:
            return
        if tag == "pre":
            self._in_pre = max(0, self._in_pre - 1)
        if tag in _BLOCK:
            self._out.append("\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self._title.append(data)
        if self._skip_depth:
            return
        if self._in_pre:  # kept verbatim: protected from the line clean-up in finish()
            self._out.append(data.replace("\n", _PRE_NEWLINE).replace(" ", _PRE_SPACE))
        else:
            self._out.append(re.sub(r"\s+", " ", data))

    def finish(self) -> Page:
        self.close()
        lines = [line.strip() for line in "".join(self._out).splitlines()]
        text = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
        text = text.replace(_PRE_NEWLINE, "\n").replace(_PRE_SPACE, " ")
        title = " ".join("".join(self._title).split())
        self.page.title = title
        if title and not text.startswith("# "):
            text = f"# {title}\n\n{text}" if text else f"# {title}"
        self.page.text = text
        return self.page


def parse_html(html: str) -> Page:
    extractor = _Extractor()
    extractor.feed(html)
    return extractor.finish()
