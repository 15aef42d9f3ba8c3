"""Plain, accessible HTML for the report pages: escaped text, semantic tables, sections,
figures inline as SVG, and one self-contained document (inline CSS, a little inline
JavaScript that only sorts tables and records where each figure lies; nothing is
fetched over the network, and the page reads the same without JavaScript).

Every function returns a string of HTML; nothing here knows what a netdp result holds
(that is :mod:`netdp.report.sections`).
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: Rows a table shows before it says how many more the source holds.
MAX_ROWS = 200
#: Items of a list of numbers shown in a cell before it is summarised.
MAX_ITEMS = 12


def esc(text: Any) -> str:
    """``text`` as HTML text (quotes escaped too, so it fits in an attribute)."""
    return html.escape(str(text), quote=True)


def number(value: Any) -> str:
    """A cell's text: integers with thousands separators, floats to 4 significant digits
    (scientific beyond 1e5 or below 1e-3), ``None`` as an en dash, lists joined."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}" if abs(value) < 10**15 else str(value)  # seeds stay whole
    if isinstance(value, float):
        if not math.isfinite(value):
            return "∞" if value > 0 else ("−∞" if value < 0 else "NaN")
        if value == 0 or 1e-3 <= abs(value) < 1e5:
            return f"{value:.4g}" if abs(value) < 1 else f"{value:.4f}".rstrip("0").rstrip(".")
        return f"{value:.4g}"
    if isinstance(value, list | tuple):
        if len(value) > MAX_ITEMS:
            return f"{len(value):,} values"
        return ", ".join(number(v) for v in value)
    return str(value)


def is_numeric(value: Any) -> bool:
    """A number a column can be sorted by (``"inf"`` as JSON writes an infinite loss too)."""
    return (isinstance(value, int | float) and not isinstance(value, bool)) or value in (
        "inf", "-inf", "nan")


def cell(value: Any) -> str:
    """A ``<td>``: numbers right-aligned with their exact value in ``data-value``."""
    if is_numeric(value):
        return f'<td class="num" data-value="{esc(value)}">{esc(number(_float(value)))}</td>'
    return f"<td>{esc(number(value))}</td>"


def _float(value: Any) -> Any:
    return float(value) if isinstance(value, str) else value


def table(caption: str, header: Sequence[str], rows: Iterable[Sequence[Any]], *,
          row_header: bool = True, sortable: bool = False, total: int | None = None,
          table_id: str | None = None) -> str:
    """A ``<table>`` with its ``<caption>``, ``<th scope="col">`` headers and, with
    ``row_header``, the first cell of each row a ``<th scope="row">``. ``sortable`` marks it
    for the page's sorting script (a click on a column header). ``total``: how many rows
    the source holds, when ``rows`` is a shown part of them."""
    rows = list(rows)
    shown = rows[:MAX_ROWS]
    total = len(rows) if total is None else total
    note = (f" (the first {len(shown):,} of {total:,} rows)" if total > len(shown) else "")
    attrs = (f' id="{esc(table_id)}"' if table_id else "") + (
        ' class="sortable"' if sortable else "")
    out = [f"<table{attrs}>", f"<caption>{esc(caption)}{esc(note)}</caption>", "<thead><tr>"]
    out += [f'<th scope="col">{esc(h)}</th>' for h in header]
    out.append("</tr></thead><tbody>")
    for row in shown:
        cells = list(row)
        first = (f'<th scope="row">{esc(number(cells[0]))}</th>' if row_header and cells
                 else cell(cells[0]) if cells else "")
        out.append("<tr>" + first + "".join(cell(c) for c in cells[1:]) + "</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def flatten(data: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """``(dotted key, value)`` of a nested mapping's scalars and lists of scalars (lists
    of objects are left to :func:`record_tables`)."""
    out: list[tuple[str, Any]] = []
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out += flatten(value, name + ".")
        elif not is_records(value):
            out.append((name, value))
    return out


def is_records(value: Any) -> bool:
    """A non-empty list whose items are all objects: a table of its own."""
    return isinstance(value, list) and bool(value) and all(isinstance(v, Mapping)
                                                           for v in value)


def mapping_table(caption: str, data: Mapping[str, Any], header: Sequence[str] = (
        "key", "value")) -> str:
    """One row per scalar of ``data`` (nested keys dotted), or ``""`` when it has none."""
    rows = flatten(data)
    return table(caption, header, rows) if rows else ""


def records_table(caption: str, records: Sequence[Mapping[str, Any]],
                  sortable: bool = True) -> str:
    """One row per object, one column per scalar key (the union, in order of appearance);
    nested objects' scalars as dotted columns, lists of objects left out."""
    flat = [dict(flatten(r)) for r in records]
    columns = list(dict.fromkeys(k for r in flat for k in r))
    rows = [[r.get(c) for c in columns] for r in flat]
    return table(caption, columns, rows, row_header=True, sortable=sortable)


def record_tables(title: str, data: Mapping[str, Any], prefix: str = "") -> list[str]:
    """A table per list of objects anywhere in ``data`` (``title: key``)."""
    out = []
    for key, value in data.items():
        if is_records(value):
            out.append(records_table(f"{title}: {prefix}{key}", value))
            for i, item in enumerate(value[:3]):  # nested tables of the first items only
                out += record_tables(title, item, f"{prefix}{key}[{i}].")
        elif isinstance(value, Mapping):
            out += record_tables(title, value, f"{prefix}{key}.")
    return out


def generic(title: str, data: Any) -> str:
    """Any JSON value as tables: an object's scalars as one key/value table, each list of
    objects as a table of its own, a bare list or scalar as a paragraph."""
    if isinstance(data, Mapping):
        return "\n".join(t for t in [mapping_table(title, data),
                                     *record_tables(title, data)] if t)
    if is_records(data):
        return records_table(title, data)
    return f"<p>{esc(title)}: {esc(number(data))}</p>"


def paragraph(text: str) -> str:
    """A ``<p>`` of plain text."""
    return f"<p>{esc(text)}</p>"


def code_block(text: str, label: str) -> str:
    """Preformatted text (a command, a spec) with an accessible name."""
    return f'<pre aria-label="{esc(label)}"><code>{esc(text)}</code></pre>'


@dataclass(frozen=True)
class Section:
    """One ``<section>`` of a page: its id (the anchor), heading and body HTML."""

    id: str
    title: str
    body: str

    def html(self) -> str:
        """The ``<section>``, labelled by its ``<h2>``."""
        return (f'<section id="{esc(self.id)}" aria-labelledby="{esc(self.id)}-h">\n'
                f'<h2 id="{esc(self.id)}-h">{esc(self.title)}</h2>\n{self.body}\n</section>')


_ID = re.compile(r'\bid="([^"]+)"')
_REF = re.compile(r'(href="#|url\(#)([^")]+)')
_PROLOG = re.compile(r"^.*?(?=<svg\b)", re.S)
_METADATA = re.compile(r"<metadata>.*?</metadata>\s*", re.S)


def inline_svg(svg: str, key: str, alt: str) -> str:
    """An SVG document (as matplotlib writes it) ready to sit inside the page: the XML
    prolog, DOCTYPE and metadata dropped, every id prefixed by ``key`` (several figures
    share one document), ``role="img"`` with ``alt`` as its accessible name and title."""
    svg = _METADATA.sub("", _PROLOG.sub("", svg, count=1))
    svg = _ID.sub(lambda m: f'id="{key}-{m.group(1)}"', svg)
    svg = _REF.sub(lambda m: f"{m.group(1)}{key}-{m.group(2)}", svg)
    svg = svg.replace("<svg ", f'<svg role="img" aria-labelledby="{key}-title" ', 1)
    head = svg.index(">", svg.index("<svg")) + 1
    return svg[:head] + f'<title id="{key}-title">{esc(alt)}</title>' + svg[head:]


def figure(svg: str, key: str, alt: str, caption: str) -> str:
    """A ``<figure>`` with the SVG inline (see :func:`inline_svg`) and its caption;
    ``data-figure`` names it for the page's script and for tests."""
    return (f'<figure id="{esc(key)}" data-figure="{esc(key)}">\n{inline_svg(svg, key, alt)}'
            f"\n<figcaption>{esc(caption)}</figcaption>\n</figure>")


STYLE = """
body{font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#111;
background:#fff;margin:0 auto;max-width:72rem;padding:1rem 1.5rem}
h1{font-size:1.6rem;margin:.5rem 0}h2{font-size:1.3rem;border-bottom:2px solid #0072B2;
padding-bottom:.2rem;margin-top:2rem}
nav ul{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.3rem 1.2rem}
a{color:#0057a0}
table{border-collapse:collapse;margin:1rem 0;font-size:.9rem}
caption{text-align:left;font-weight:600;padding:.3rem 0;caption-side:top;white-space:nowrap}
th,td{border:1px solid #bbb;padding:.2rem .5rem;vertical-align:top}
thead th{background:#eef3f8}tbody th{text-align:left;font-weight:500;background:#fafafa}
td.num{text-align:right;font-variant-numeric:tabular-nums}
table.sortable thead th{cursor:pointer}
pre{background:#f5f5f5;border:1px solid #ddd;padding:.6rem;overflow-x:auto;font-size:.85rem}
figure{margin:1.5rem 0}figure svg{max-width:100%;height:auto;display:block}
figcaption{font-size:.9rem;color:#333;margin-top:.3rem}
.note{color:#444;font-style:italic}
.answer{border:2px solid #0072B2;border-radius:.4rem;background:#f3f8fc;padding:.2rem 1rem}
.answer-main{font-size:1.2rem}
footer{margin-top:3rem;font-size:.85rem;color:#444;border-top:1px solid #ddd}
"""

#: Sorting by a click on a column header (numbers by value), and each figure's and the
#: answer's box in ``data-box`` (page pixels: left, top, width, height) and the page's
#: height on <body>.
SCRIPT = """
(function(){
function val(c){var v=c.getAttribute('data-value');if(v===null)return c.textContent;
var f=parseFloat(v);return isNaN(f)?(v==='inf'?Infinity:v):f;}
document.querySelectorAll('table.sortable').forEach(function(t){
t.querySelectorAll('thead th').forEach(function(h,i){
h.tabIndex=0;h.title='sort by this column';
function sort(){var b=t.tBodies[0],rows=Array.prototype.slice.call(b.rows);
var up=h.getAttribute('aria-sort')!=='ascending';
t.querySelectorAll('thead th').forEach(function(o){o.removeAttribute('aria-sort');});
h.setAttribute('aria-sort',up?'ascending':'descending');
rows.sort(function(a,c){var x=val(a.cells[i]),y=val(c.cells[i]);
var r=(typeof x==='number'&&typeof y==='number')?x-y:String(x).localeCompare(String(y));
return up?r:-r;});rows.forEach(function(r){b.appendChild(r);});}
h.addEventListener('click',sort);
h.addEventListener('keydown',function(e){if(e.key==='Enter'||e.key===' '){
e.preventDefault();sort();}});});});
function boxes(){document.querySelectorAll('figure[data-figure],div.answer').forEach(
function(f){var s=f.querySelector('svg')||f,r=s.getBoundingClientRect();
f.setAttribute('data-box',[r.left+window.scrollX,r.top+window.scrollY,r.width,r.height]
.map(Math.round).join(','));});
document.body.setAttribute('data-height',Math.ceil(
document.documentElement.scrollHeight));}
boxes();window.addEventListener('load',boxes);
})();
"""


def document(title: str, subtitle: str, sections: Sequence[Section], footer: str) -> str:
    """The whole page: ``<head>`` with inline CSS, a header with the table of contents,
    the sections in ``<main>``, the footer and the inline script."""
    toc = "".join(f'<li><a href="#{esc(s.id)}">{esc(s.title)}</a></li>' for s in sections)
    body = "\n".join(s.html() for s in sections)
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{esc(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
            f"<header>\n<h1>{esc(title)}</h1>\n<p>{esc(subtitle)}</p>\n"
            f'<nav aria-label="Sections"><ul>{toc}</ul></nav>\n</header>\n'
            f"<main>\n{body}\n</main>\n<footer><p>{esc(footer)}</p></footer>\n"
            f"<script>{SCRIPT}</script>\n</body>\n</html>\n")
