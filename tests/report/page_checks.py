"""Reading a report page back with the standard library's HTML parser: its sections,
tables, figures, ids and every URL it would load (shared by the page and browser tests)."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

#: Attributes that make a browser load something.
URL_ATTRS = ("src", "href", "xlink:href", "action", "poster", "srcset")


@dataclass
class Table:
    caption: str = ""
    col_headers: list[str] = field(default_factory=list)
    row_headers: int = 0
    rows: int = 0
    scopes: list[str | None] = field(default_factory=list)


@dataclass
class Figure:
    key: str
    attrs: dict[str, str | None]
    svgs: int = 0
    svg_role: str | None = None
    svg_title: str = ""
    caption: str = ""


class Page(HTMLParser):
    """Everything the tests look at, collected in one pass."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.sections: list[str] = []
        self.tables: list[Table] = []
        self.figures: list[Figure] = []
        self.svgs = 0
        self.ids: list[str] = []
        self.urls: list[str] = []
        self.scripts_with_src = 0
        self.links = 0
        self.body: dict[str, str | None] = {}
        self.answer: dict[str, str | None] = {}  # the answer box's attributes
        self.headings: list[str] = []
        self._in: list[str] = []
        self._table: Table | None = None
        self._figure: Figure | None = None
        self.text_parts: list[str] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self._in.append(tag)
        if "id" in a and a["id"]:
            self.ids.append(a["id"])
        for name in URL_ATTRS:
            if a.get(name):
                self.urls.append(str(a[name]))
        style = a.get("style") or ""
        if "url(" in style:
            self.urls.append(style)
        if tag == "body":
            self.body = a
        elif tag == "div" and a.get("class") == "answer":
            self.answer = a
        elif tag == "section":
            self.sections.append(str(a.get("id")))
        elif tag == "script" and a.get("src"):
            self.scripts_with_src += 1
        elif tag == "link":
            self.links += 1
        elif tag == "table":
            self._table = Table()
            self.tables.append(self._table)
        elif tag == "th" and self._table is not None:
            self._table.scopes.append(a.get("scope"))
            if a.get("scope") == "row":
                self._table.row_headers += 1
        elif tag == "tr" and self._table is not None and "tbody" in self._in:
            self._table.rows += 1
        elif tag == "figure":
            self._figure = Figure(str(a.get("data-figure")), a)
            self.figures.append(self._figure)
        elif tag == "svg":
            self.svgs += 1
            if self._figure is not None:
                self._figure.svgs += 1
                self._figure.svg_role = a.get("role")

    def handle_endtag(self, tag: str) -> None:
        while self._in:
            if self._in.pop() == tag:
                break
        if tag == "table":
            self._table = None
        elif tag == "figure":
            self._figure = None

    def handle_data(self, data: str) -> None:
        if not self._in:
            return
        tag = self._in[-1]
        if tag in ("script", "style"):
            return
        self.text_parts.append(data)
        if tag == "caption" and self._table is not None:
            self._table.caption += data
        elif tag == "th" and self._table is not None and "thead" in self._in:
            self._table.col_headers.append(data.strip())
        elif tag == "title" and self._figure is not None:
            self._figure.svg_title += data
        elif tag == "figcaption" and self._figure is not None:
            self._figure.caption += data
        elif tag in ("h1", "h2", "h3"):
            self.headings.append(data.strip())

    @property
    def text(self) -> str:
        return " ".join(" ".join(self.text_parts).split())

    def table(self, caption_start: str) -> Table:
        """The table whose caption starts with ``caption_start``."""
        found = [t for t in self.tables if t.caption.startswith(caption_start)]
        assert found, (caption_start, [t.caption for t in self.tables])
        return found[0]


def remote(urls: list[str]) -> list[str]:
    """The URLs a browser would fetch from elsewhere: anything but an in-page ``#anchor``
    or an inline ``data:`` URI."""
    return [u for u in urls if not (u.startswith("#") or u.startswith("data:")
                                    or u.startswith("url(#"))]


def check_accessible(page: Page) -> None:
    """Every table has a caption and scoped headers, every figure one inline SVG with
    ``role="img"``, a text alternative and a caption; no id appears twice."""
    for t in page.tables:
        assert t.caption.strip(), t
        assert t.scopes and all(s in ("col", "row") for s in t.scopes), t
        assert t.col_headers, t
    for f in page.figures:
        assert f.svgs == 1 and f.svg_role == "img", f.key
        assert len(f.svg_title.strip()) > 40, f.key  # a sentence, not a name
        assert f.caption.strip(), f.key
    duplicated = {i for i in page.ids if page.ids.count(i) > 1}
    assert not duplicated, sorted(duplicated)[:10]
