"""HTML to the text a knowledge base indexes, and the links a crawler follows (stdlib only).

Scripts, styles, navigation chrome and forms are dropped; headings become
markdown headings, list items bullets, table cells ``a | b`` on their row's line,
and block elements end their lines, so the markdown splitter can cut a page at
its own sections.

``parse_storage`` reads Confluence's storage format (XHTML with ``ac:`` and
``ri:`` elements) the same way: a macro's parameters never reach the text, a
code or noformat macro becomes a fenced block, a rich-text body (info, note,
panel, expand) is text like any other, and a link without its own text shows
the page or file it names.
"""

from __future__ import annotations

import html
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
        self._cells = 0
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
        if tag == "tr":
            self._cells = 0
        elif tag in {"td", "th"}:
            if self._cells:
                self._out.append(" | ")
            self._cells += 1
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
        # runs of spaces across data chunks collapse too (verbatim text is protected above)
        lines = [re.sub(r" {2,}", " ", line.strip()) for line in "".join(self._out).splitlines()]
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


#: Storage-format elements whose content is no text: a macro's parameters, a placeholder
#: (editor hint), a task's id and status, an ADF extension's attributes.
_STORAGE_SKIP = {
    "ac:parameter",
    "ac:placeholder",
    "ac:task-id",
    "ac:task-uuid",
    "ac:task-status",
    "ac:adf-attribute",
}
_STORAGE_BLOCK = {
    "ac:layout", "ac:layout-section", "ac:layout-cell", "ac:task-list", "ac:task",
    "ac:structured-macro", "ac:macro", "ac:rich-text-body",
}  # fmt: skip
_CODE_MACROS = {"code", "noformat"}
_CDATA = re.compile(r"<!\[CDATA\[(.*?)\]\]>", re.DOTALL)


class _StorageExtractor(_Extractor):
    """Confluence storage format: ``ac:``/``ri:`` elements read as text, never as markup."""

    def __init__(self) -> None:
        super().__init__()
        self._macros: list[str] = []
        self._plain_skip = 0
        self._link: tuple[int, str] | None = None  # output length at the link's start, its target

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k.lower(): (v or "") for k, v in attrs}
        if tag in _STORAGE_SKIP:
            self._skip_depth += 1
            return
        if self._skip_depth:
            return
        if tag in {"ac:structured-macro", "ac:macro"}:
            self._macros.append(a.get("ac:name", "").lower())
        elif tag == "ac:plain-text-body":
            if self._macros and self._macros[-1] in _CODE_MACROS:
                self._out.append("\n```\n")
                self._in_pre += 1
            else:  # the raw body of an html, widget or other macro: markup, not text
                self._plain_skip += 1
            return
        elif tag == "ac:link":
            self._link = (len(self._out), "")
        elif tag.startswith("ri:") and self._link is not None and not self._link[1]:
            target = a.get("ri:content-title") or a.get("ri:filename") or ""
            self._link = (self._link[0], target)
        elif tag == "ac:task":
            self._out.append("\n- ")
            return
        if tag in _STORAGE_BLOCK:
            self._out.append("\n")
            return
        super().handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag in _STORAGE_SKIP:
            self._skip_depth = max(0, self._skip_depth - 1)
            return
        if self._skip_depth:
            return
        if tag in {"ac:structured-macro", "ac:macro"}:
            if self._macros:
                self._macros.pop()
        elif tag == "ac:plain-text-body":
            if self._plain_skip:
                self._plain_skip -= 1
            else:
                self._in_pre = max(0, self._in_pre - 1)
                self._out.append("\n```\n")
            return
        elif tag == "ac:link" and self._link is not None:
            start, target = self._link
            if target and not "".join(self._out[start:]).strip():
                self._out.append(target)
            self._link = None
        if tag in _STORAGE_BLOCK:
            self._out.append("\n")
            return
        super().handle_endtag(tag)

    def handle_data(self, data: str) -> None:
        if self._plain_skip:
            return
        super().handle_data(data)


def parse_storage(xhtml: str) -> str:
    """The text of a Confluence page body in storage format (``body.storage.value``)."""
    extractor = _StorageExtractor()
    extractor.feed(_CDATA.sub(lambda m: html.escape(m.group(1), quote=False), xhtml))
    return extractor.finish().text
