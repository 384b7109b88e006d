"""The Signposting ``Link`` headers of the nginx and Apache virtual hosts
(:mod:`.serverconfs`): the pages that carry links (:mod:`.pagelinks`), each with the
value its own ``<link>`` elements say, keyed by the path the server sees.

A page is asked as its file (``/record/<key>/index.html``) or as its folder
(``/record/<key>/``): the keys are what the server's variable holds then, percent-decoded
(Apache's ``%{REQUEST_URI}`` either, nginx's ``$uri`` once it found the file).  nginx matches map
keys ignoring case: two pages whose paths differ only in case and whose values differ
are both left out (never a wrong header); nginx also refuses a key longer than a hash
bucket holds, so those are left out and counted in the file's head (the same limit, and
the same remedy, as the rules).  An Apache map holds one word of at most about 1,000
bytes per key: values have no space (:func:`~.signposting.link_header`) and are cut into
chunks of whole links; a page whose path has a space is left out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple

__all__ = [
    "page_uris",
    "nginx_uris",
    "nginx_link_entries",
    "nginx_link_map",
    "ApacheLinks",
    "apache_links",
    "apache_link_directives",
]

ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
#: what no key or value of a map may hold: a space or a control character
_UNFIT = re.compile(r"[\s\x00-\x1f\x7f]")
_PAGE = "index.html"
#: the longest line of an Apache map: mod_rewrite and httxt2dbm read lines of 1,024 bytes,
#: and an sdbm file (httxt2dbm's default) holds a key and its value in 1,008
APACHE_LINE = 1000
#: chunks of one page's value at most (a RewriteCond and a Header line each)
APACHE_CHUNKS = 32


def page_uris(path: str, base: str) -> list[str]:
    """The URIs (decoded) a server sees for the page at `path` in the site under `base`:
    the file, and its folder with its '/' for a folder's ``index.html``."""
    uris = [base + path]
    if path == _PAGE or path.endswith("/" + _PAGE):
        uris.append(base + path[: -len(_PAGE)])
    return uris


def nginx_uris(path: str, base: str) -> list[str]:
    """The ``$uri`` nginx has when it sends the page at `path`: the file's, and for a
    folder's page asked as the folder, what the vhost's ``try_files $uri
    $uri/index.html`` makes of it (``/record/<key>//index.html``: a folder is no file)."""
    uris = [base + path]
    if path.endswith("/" + _PAGE):
        uris.append(base + path[: -len(_PAGE)] + "/" + _PAGE)
    return uris


def nginx_link_entries(
    links: Iterable[tuple[str, str]], base: str, limit: int
) -> tuple[list[tuple[str, str]], int]:
    """(folded key, value) of each page URI for nginx's map, sorted, and the number of
    page URIs left out (longer than `limit` bytes, or one key of two pages)."""
    found: dict[str, str | None] = {}
    uris = 0
    for path, value in links:
        keys = [uri.translate(ASCII_LOWER) for uri in nginx_uris(path, base)]
        uris += len(keys)
        for key in keys:
            if len(key.encode()) <= limit and not _UNFIT.search(key):
                if found.setdefault(key, value) != value:
                    found[key] = None  # two pages, one key (case): neither
    kept = sorted((key, value) for key, value in found.items() if value is not None)
    return kept, uris - len(kept)


def nginx_link_map(entries: list[tuple[str, str]], prefix: str, quote) -> list[str]:
    """The map from ``$uri`` to the ``Link`` value (empty: nginx sends no header);
    `quote` is serverconfs.nginx_string."""
    return [
        "",
        "# Signposting: the Link header of the pages that carry links (docs/site.md)",
        f"map $uri ${prefix}_link {{",
        *(f"    {quote(key, False)} {quote(value)};" for key, value in entries),
        "}",
    ]


class ApacheLinks(NamedTuple):
    """The Link part of an Apache virtual host: its RewriteMap lines, how many chunk
    keys a page's value uses at most, and the pages left out."""

    lines: list[str]
    chunks: int
    left_out: int


def apache_links(links: Iterable[tuple[str, str]], base: str) -> ApacheLinks:
    """The RewriteMap lines ``link<n>:<URI> <links>`` (exact case: a file system's) of
    each page URI: its value cut between whole links into chunks that fit a map line,
    sent again joined by ``Header append`` (a ', ' between two links is still one list).
    A page whose URI or value does not fit is left out."""
    lines: list[str] = []
    chunks = left_out = 0
    for path, value in links:
        cut = _chunks(value, APACHE_LINE - len((base + path).encode()) - 16)
        if _UNFIT.search(path) or _UNFIT.search(value) or not cut or len(cut) > APACHE_CHUNKS:
            left_out += 1
            continue
        chunks = max(chunks, len(cut))
        for uri in page_uris(path, base):
            lines.extend(f"link{n}:{uri} {chunk}" for n, chunk in enumerate(cut, 1))
    return ApacheLinks(lines, chunks, left_out)


def _chunks(value: str, size: int) -> list[str]:
    """`value` cut before links (at ",<") into pieces of at most `size` characters;
    empty when one link alone is longer."""
    pieces: list[str] = []
    for link in value.replace(",<", "\0<").split("\0"):
        if len(link) > size:
            return []
        if pieces and len(pieces[-1]) + 1 + len(link) <= size:
            pieces[-1] += "," + link
        else:
            pieces.append(link)
    return pieces


def apache_link_directives(name: str, chunks: int) -> list[str]:
    """The vhost's lines that look a page's value up and send it: mod_rewrite sets a
    variable per chunk, mod_headers sends them as one header."""
    if not chunks:
        return []
    variable = f"{name.upper()}_LINK"
    lines = [
        "    # Signposting: the Link header of the pages that carry links (the map's link<n>:",
        "    # keys; `a2enmod headers`, without which no Link header is sent)",
    ]
    for n in range(1, chunks + 1):
        lines += [
            f"    RewriteCond ${{{name}:link{n}:%{{REQUEST_URI}}}} (.+)",
            f"    RewriteRule ^ - [E={variable}{n}:%1]",
        ]
    lines.append("    <IfModule headers_module>")
    for n in range(1, chunks + 1):
        verb = "set" if n == 1 else "append"
        lines.append(f'        Header {verb} Link "%{{{variable}{n}}}e" env={variable}{n}')
    return [*lines, "    </IfModule>"]
