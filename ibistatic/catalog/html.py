"""The catalog's Markdown as HTML, without Python-Markdown (docs/catalog.md).

The item pages are most of a catalog and are all written by :mod:`.pages`, in a small
part of Markdown: ``#``/``##`` headings, paragraphs, pipe tables, ``-`` and ``1.``
lists, links written ``[text](<destination>)``, ``**bold**`` and ``<br>``; every value
from a descriptor already escaped as character references.  Reading that subset here
takes a few percent of what a full Markdown conversion takes, which is most of an
mkdocs build of the catalog.  tests/test_catalog.py checks that the two agree on every
page of the sample.  Pure: *link* turns a destination into the ``href`` written.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable

from markdown.extensions.toc import slugify, unique

__all__ = ["to_html", "Heading"]

LINK = re.compile(r"\[([^\]]*)\]\(<([^>]*)>\)")
BOLD = re.compile(r"\*\*(.+?)\*\*")
ORDERED = re.compile(r"[0-9]+\. ")
CELL_SEPARATOR = re.compile(r" \| ")

Heading = tuple[int, str, str]  # (level, id, text as HTML)


def _inline(text: str, link: Callable[[str], str]) -> str:
    def anchor(match: re.Match) -> str:
        href = html.escape(link(html.unescape(match.group(2))), quote=True)
        return f'<a href="{href}">{match.group(1)}</a>'

    if "](<" in text:
        text = LINK.sub(anchor, text)
    return BOLD.sub(r"<strong>\1</strong>", text) if "**" in text else text


def _table(lines: list[str], link) -> list[str]:
    rows = [CELL_SEPARATOR.split(line.strip()[2:-2]) for line in lines]
    head = "".join(f"<th>{_inline(cell, link)}</th>" for cell in rows[0])
    out = ["<table>", "<thead>", f"<tr>{head}</tr>", "</thead>", "<tbody>"]
    for row in rows[2:]:
        out.append("<tr>" + "".join(f"<td>{_inline(cell, link)}</td>" for cell in row) + "</tr>")
    return out + ["</tbody>", "</table>"]


def _blocks(markdown: str) -> list[list[str]]:
    """The blocks of *markdown*: runs of lines between blank lines, a heading alone."""
    blocks: list[list[str]] = []
    current: list[str] = []
    for line in markdown.splitlines():
        if not line.strip() or line.startswith("#"):
            if current:
                blocks.append(current)
            current = []
            if line.startswith("#"):
                blocks.append([line])
            continue
        current.append(line)
    if current:
        blocks.append(current)
    return blocks


def to_html(markdown: str, link: Callable[[str], str]) -> tuple[str, list[Heading]]:
    """The HTML of a catalog page's *markdown*, and its headings (for the table of
    contents) with the ids mkdocs' ``toc`` extension would give them."""
    out: list[str] = []
    headings: list[Heading] = []
    ids: set[str] = set()
    for block in _blocks(markdown):
        first = block[0]
        if first.startswith("#"):
            level = len(first) - len(first.lstrip("#"))
            text = first[level:].strip()
            ident = unique(slugify(html.unescape(text), "-"), ids)
            headings.append((level, ident, text))
            out.append(f'<h{level} id="{ident}">{_inline(text, link)}</h{level}>')
        elif first.startswith("| "):
            out += _table(block, link)
        elif first.startswith("- ") or ORDERED.match(first):
            tag = "ul" if first.startswith("- ") else "ol"
            items = [line.split(" ", 1)[1] for line in block]
            out += [f"<{tag}>"] + [f"<li>{_inline(i, link)}</li>" for i in items] + [f"</{tag}>"]
        else:
            out.append("<p>" + _inline("\n".join(block), link) + "</p>")
    return "\n".join(out), headings
