"""The Signposting ``Link`` headers of the nginx and Apache virtual hosts
(:mod:`.serverconfs`): the pages that carry links (:mod:`.pagelinks`), each with the
value its own ``<link>`` elements say, keyed by the path the server sees.

A page is asked as its file (``/record/<key>/index.html``) or as its folder
(``/record/<key>/``): Apache's keys are what ``%{REQUEST_URI}`` holds then (percent-
decoded); nginx's are shorter (:func:`nginx_links`), since nginx refuses a map key
longer than a hash bucket holds: a page whose key is longer is left out and counted in
the file's head (the same limit, and the same remedy, as the rules).  nginx matches map
keys ignoring case: two pages whose keys differ only in case and whose values differ
are both left out (never a wrong header).  An Apache map holds one word of at most about 1,000
bytes per key: values have no space (:func:`~.signposting.link_header`) and are cut into
chunks of whole links; a page whose path has a space is left out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple

__all__ = [
    "page_uris",
    "NginxLinks",
    "nginx_links",
    "nginx_link_maps",
    "ApacheLinks",
    "apache_links",
    "apache_link_directives",
]

ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
#: what no key or value of a map may hold: a space or a control character
_UNFIT = re.compile(r"[\s\x00-\x1f\x7f]")
_PAGE = "index.html"
#: a page in a folder of its own: the pages that carry links all are
_FOLDER_PAGE = re.compile(r"([^/]+)/(.+)/index\.html")
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


class NginxLinks(NamedTuple):
    """The Link part of an nginx virtual host: the top folders of the pages (a page's
    key starts with its folder's number), (key, value) sorted, and the pages left out."""

    folders: list[str]
    entries: list[tuple[str, str]]
    left_out: int


def nginx_links(links: Iterable[tuple[str, str]], limit: int) -> NginxLinks:
    """A page ``<folder>/<item>/index.html`` is keyed ``<folder number>/<item>`` (folded
    to lower case): the short key an INPE repository key fits into nginx's default hash
    bucket with (46 bytes), where ``/record/<key>/index.html`` would not.  A page whose
    key is longer than `limit` bytes, or that shares its key with another page, is left
    out (never a wrong header)."""
    links = list(links)
    pages = [(_FOLDER_PAGE.fullmatch(path), value) for path, value in links]
    folders = sorted({match[1] for match, _ in pages if match})
    codes = {folder: str(number) for number, folder in enumerate(folders)}
    found: dict[str, str | None] = {}
    keys = []
    for match, value in pages:
        key = f"{codes[match[1]]}/{match[2]}".translate(ASCII_LOWER) if match else ""
        if not key or _UNFIT.search(key) or len(key.encode()) > limit:
            key = ""
        elif found.setdefault(key, value) != value:
            found[key] = None  # two pages, one key (case): neither
        keys.append(key)
    entries = sorted((key, value) for key, value in found.items() if value is not None)
    return NginxLinks(folders, entries, sum(1 for key in keys if not found.get(key)))


def nginx_link_maps(links: NginxLinks, base: str, prefix: str, quote) -> list[str]:
    """Two maps: ``$uri`` of a page (asked as its file, or as its folder, which the
    vhost's ``try_files $uri $uri/index.html`` makes ``<folder>//index.html``) -> its key,
    by one regular expression per folder; its key -> the ``Link`` value (none: nginx
    sends no header).  `quote` is serverconfs.nginx_string."""
    lines = [
        "",
        "# Signposting: the Link header of the pages that carry links (docs/site.md)",
        f"map $uri ${prefix}_page {{",
    ]
    for code, folder in enumerate(links.folders):
        pattern = "~^" + re.escape(base + folder + "/") + r"(.+?)/+index\.html$"
        lines.append(f'    {quote(pattern, False)} "{code}/$1";')
    return [
        *lines,
        "}",
        f"map ${prefix}_page ${prefix}_link {{",
        *(f"    {quote(key, False)} {quote(value)};" for key, value in links.entries),
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
        if n > 1:  # a page with no first chunk has no other: one lookup for most requests
            lines.append(f"    RewriteCond %{{ENV:{variable}1}} .")
        lines += [
            f"    RewriteCond ${{{name}:link{n}:%{{REQUEST_URI}}}} (.+)",
            f"    RewriteRule ^ - [E={variable}{n}:%1]",
        ]
    lines.append("    <IfModule headers_module>")
    for n in range(1, chunks + 1):
        verb = "set" if n == 1 else "append"
        lines.append(f'        Header {verb} Link "%{{{variable}{n}}}e" env={variable}{n}')
    return [*lines, "    </IfModule>"]
