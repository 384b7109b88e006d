"""nginx and Apache server configurations for the host rules of :mod:`.hostfiles`: the
nginx ``map`` include and ``server`` snippet, the Apache ``RewriteMap`` files and snippet
(docs/hosting.md). The rules, their case folding and the path spellings each host
compares are :mod:`.hostfiles`'; this module only writes them in each server's syntax."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from ..core.http import FOUND
from .hostfiles import (
    _EDITED,
    IBIURL_QUERY,
    NGINX_SPECIAL,
    HostRule,
    _case_folded,
    _text,
    apache_key,
)

__all__ = [
    "apache_conf_text",
    "apache_map_text",
    "apache_status_text",
    "nginx_map_text",
    "nginx_server_text",
    "nginx_string",
]


def nginx_string(text: str, variables: bool = True) -> str:
    """`text` as an nginx double-quoted string: ``\\`` and ``"`` escaped; ``$`` written
    ``${ibistatic_dollar}`` where nginx would read a variable (map values, paths), kept
    where it reads none (map keys: `variables` False)."""
    if NGINX_SPECIAL.search(text):
        text = text.replace("\\", "\\\\").replace('"', '\\"')
        if variables:
            text = text.replace("$", "${ibistatic_dollar}")
    return f'"{text}"'


def _hash_sizes(keys: Iterable[str], count: int) -> tuple[int, int]:
    """``map_hash_max_size`` and ``map_hash_bucket_size`` that fit the longest key with
    room for eight per bucket at half load (nginx refuses to start otherwise)."""
    longest = max((len(key.encode("utf-8")) for key in keys), default=0)
    element = 8 + (longest + 2 + 7) // 8 * 8
    bucket = 64
    while bucket < 8 * element + 8:
        bucket *= 2
    size = 2048
    while size < 2 * count:
        size *= 2
    return size, bucket


def nginx_map_text(rules: list[HostRule], base: str = "/") -> str:
    """The http-level include: the data maps (``$ibistatic_target``: path → URL;
    ``$ibistatic_status``: 303 or 410) and the maps that pick the answer."""
    return _text(_nginx_map_lines(_case_folded(rules), base))


def _nginx_map_lines(rules: list[HostRule], base: str) -> Iterator[str]:
    redirects = sum(1 for rule in rules if rule.url is not None)
    statuses = sum(1 for rule in rules if rule.status != FOUND)
    size, bucket = _hash_sizes((base + rule.path for rule in rules), max(redirects, statuses))
    yield from [
        f"# nginx maps for the persistent URLs of this site, {_EDITED}.",
        "# Include inside http { } before any other map, then include nginx-server.conf",
        "# inside the server { }. Keys are nginx's $uri: decoded; nginx ignores their case.",
        f"map_hash_max_size {size};",
        f"map_hash_bucket_size {bucket};",
        "",
        "# nginx has no escape for '$' in a string; a geo value is never read as a variable.",
        'geo $ibistatic_dollar { default "$"; }',
        "",
        "map $uri $ibistatic_target {",
    ]
    for rule in rules:
        if rule.url is not None:
            yield f"    {nginx_string(base + rule.path, False)} {nginx_string(rule.url)};"
    yield from [
        "}",
        "",
        "# 303 See Other for metadata, 410 Gone for a deleted item; 302 when absent.",
        "map $uri $ibistatic_status {",
    ]
    for rule in rules:
        if rule.status != FOUND:
            yield f"    {nginx_string(base + rule.path, False)} {rule.status};"
    yield from [
        "}",
        "",
        "# ibiurl.* query pairs change the answer: the page resolves those requests.",
        "map $args $ibistatic_query {",
        f'    "~{IBIURL_QUERY}" 1;',
        "    default 0;",
        "}",
        'map "$ibistatic_query:$ibistatic_status" $ibistatic_302 {',
        '    "0:" $ibistatic_target;',
        '    default "";',
        "}",
        'map "$ibistatic_query:$ibistatic_status" $ibistatic_303 {',
        '    "0:303" $ibistatic_target;',
        '    default "";',
        "}",
        'map "$ibistatic_query:$ibistatic_status" $ibistatic_410 {',
        '    "0:410" 1;',
        '    default "";',
        "}",
    ]


def _document_root(site_dir: Path, base: str) -> str:
    """The root under which `base` + a path is the site's file: the site itself for
    ``/``, else the folder above it when the site sits at ``<root><base>``."""
    root = str(site_dir).rstrip("/")
    if base != "/" and root.endswith(base.rstrip("/")):
        return root[: len(root) - len(base.rstrip("/"))] or "/"
    return root


def nginx_server_text(site_dir: Path, base: str = "/") -> str:
    """The server-level include: real redirects from the maps, 410 with the alert page,
    the pages otherwise, and 404.html (status 404) for everything without a page."""
    root = nginx_string(_document_root(site_dir, base))
    return (
        "\n".join(
            [
                f"# nginx server snippet for this site, {_EDITED}.",
                "# Include inside server { } after including nginx-map.conf inside http { }.",
                f"# Files are served from {site_dir} (as the build's `output:`); edit the root",
                "# lines, or rebuild with `output:` there, when the site is deployed elsewhere.",
                f"error_page 404 {nginx_string(base + '404.html')};",
                "# a deleted item answers 410 Gone with its alert page; a named location, because",
                "# the map values are cached and would answer 410 again after a redirect",
                "error_page 410 @ibistatic_gone;",
                "location @ibistatic_gone {",
                f"    root {root};",
                "    try_files $uri/index.html =410;",
                "}",
                f"location ^~ {nginx_string(base + '_ibistatic/', False)} {{ return 404; }}",
                f"location = {nginx_string(base + '_redirects', False)} {{ return 404; }}",
                f"location {nginx_string(base, False)} {{",
                f"    root {root};",
                "    # only `return` inside `if`: the one use of `if` that is safe in a location",
                "    if ($ibistatic_303) { return 303 $ibistatic_303; }",
                "    if ($ibistatic_302) { return 302 $ibistatic_302; }",
                "    if ($ibistatic_410) { return 410; }",
                "    try_files $uri $uri/index.html =404;",
                "}",
            ]
        )
        + "\n"
    )


def apache_map_text(rules: list[HostRule]) -> str:
    """The RewriteMap of redirects: ``key url`` per line; a URL with a query is split into
    ``key base`` and ``key? query``, because Apache (2.4.60+) refuses a '?' that a map
    lookup brings into a substitution, while a literal '?' in the rule is fine."""
    return _text(_apache_map_lines(_case_folded(rules)))


def _apache_map_lines(rules: list[HostRule]) -> Iterator[str]:
    yield f"# Apache RewriteMap (txt) of the persistent URLs that redirect, {_EDITED}."
    for rule in rules:
        if rule.url is None:
            continue
        key = apache_key(rule.path)
        url, question, query = rule.url.partition("?")
        yield f"{key} {url}"
        if question and query:
            yield f"{key}? {query}"


def apache_status_text(rules: list[HostRule]) -> str:
    """The RewriteMap of statuses other than 302: ``key 303`` (metadata), ``key 410``."""
    return _text(_apache_status_lines(_case_folded(rules)))


def _apache_status_lines(rules: list[HostRule]) -> Iterator[str]:
    yield f"# Apache RewriteMap (txt): 303 for metadata, 410 for deleted items, {_EDITED}."
    for rule in rules:
        if rule.status != FOUND:
            yield f"{apache_key(rule.path)} {rule.status}"


def _apache_value(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def apache_conf_text(site_dir: Path, base: str = "/") -> str:
    """The Apache snippet, to include in the <VirtualHost> whose DocumentRoot (or Alias
    for `base`) is the site."""
    return "\n".join([*_apache_maps(site_dir), *_apache_rules(base)]) + "\n"


def _apache_maps(site_dir: Path) -> list[str]:
    """The snippet's head: where the site is, and the rewrite maps of its host files."""
    return [
        f"# Apache snippet for this site, {_EDITED}.",
        "# Include it inside the <VirtualHost> that serves the site (RewriteMap is not",
        "# allowed in .htaccess); needs mod_rewrite, Apache 2.4.13 or later.",
        "# Define IBISTATIC_SITE before the Include when the site is deployed elsewhere.",
        "<IfDefine !IBISTATIC_SITE>",
        f"    Define IBISTATIC_SITE {_apache_value(str(site_dir).rstrip('/'))}",
        "</IfDefine>",
        "RewriteEngine On",
        "# Keys are the decoded path ($1) escaped again by int:escape, then folded to",
        "# lower case: one spelling whatever the client escaped (%21 or !) or its case.",
        "RewriteMap ibiescape int:escape",
        "RewriteMap ibilower int:tolower",
        'RewriteMap ibi "txt:${IBISTATIC_SITE}/_ibistatic/apache-rewritemap.txt"',
        'RewriteMap ibistatus "txt:${IBISTATIC_SITE}/_ibistatic/apache-status.txt"',
        "# For large sites build hashed maps once per build, then use dbm: instead of txt:",
        "#   httxt2dbm -i apache-rewritemap.txt -o apache-rewritemap.dbm",
        "#   httxt2dbm -i apache-status.txt -o apache-status.dbm",
        '#   RewriteMap ibi "dbm:${IBISTATIC_SITE}/_ibistatic/apache-rewritemap.dbm"',
        '#   RewriteMap ibistatus "dbm:${IBISTATIC_SITE}/_ibistatic/apache-status.dbm"',
        "<IfModule dir_module>",
        "    DirectoryIndex index.html",
        "</IfModule>",
    ]


def _apache_rules(base: str) -> list[str]:
    """The snippet's rules: 410 for deleted items, 303 and 302 redirects, pages at once."""
    pattern = "^" + re.escape(base) + "(.*)$"
    lookup = "${ibilower:${ibiescape:$1}}"
    no_query = "RewriteCond %{QUERY_STRING} !" + IBIURL_QUERY
    redirect = f"${{ibi:{lookup}}}?${{ibi:{lookup}?}}"
    return [
        f"ErrorDocument 404 {base}404.html",
        "# a deleted item answers 410 Gone with its alert page",
        f"ErrorDocument 410 {base}%{{ENV:IBISTATIC_GONE}}/index.html",
        f"RewriteRule ^{re.escape(base)}(_ibistatic/|_redirects$) - [R=404,L]",
        no_query,
        f"RewriteCond ${{ibistatus:{lookup}}} =410",
        f"RewriteRule {pattern} - [G,E=IBISTATIC_GONE:${{ibiescape:$1}}]",
        no_query,
        f"RewriteCond ${{ibistatus:{lookup}}} =303",
        f"RewriteCond ${{ibi:{lookup}}} .",
        f"RewriteRule {pattern} {redirect} [R=303,L,NE]",
        no_query,
        f"RewriteCond ${{ibi:{lookup}}} .",
        f"RewriteRule {pattern} {redirect} [R=302,L,NE]",
        "# every other page at once, without the 301 to '/' of mod_dir's DirectorySlash",
        'RewriteCond "${IBISTATIC_SITE}/$1/index.html" -f',
        f"RewriteRule ^{re.escape(base)}(.*[^/])$ {base}$1/index.html [L]",
    ]
