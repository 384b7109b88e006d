"""Netlify: a ``_redirects`` whose rules are never shadowed by the pages.

Netlify serves a file that exists at a rule's path instead of applying the rule unless
the rule is forced (``302!``), and every persistent URL the site lists has its page: so
every rule here is forced.  A deleted item's URLs answer 410 Gone with ``404.html`` as
the body (its script shows the alert), also forced.  Netlify advises fewer than 10,000
rules; past that the build warns (the pages still answer in browsers).

A rule matches its path whatever the query, and Netlify passes the query on to the
target: a URL with the resolver's query pairs (``?ibiurl.verblist=GetFileList``) would
redirect where the bare URL does, query appended.  Two rules first send every such URL
to what is at its path (its page, or ``404.html``), whose script resolves the query.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...core.facts import REQUIRED_STATUS, VERB_LIST
from ...core.http import GONE
from ..hostfiles import _EDITED, HostRule, browser_path

__all__ = ["ADVISED_RULES", "redirects_lines", "rule_warnings"]

ADVISED_RULES = 10000
#: the body of a 410: its script explains the alert of the URL asked
NOT_FOUND_PAGE = "404.html"
#: the query pairs the resolver reads (Table 6.3): left to the page at the path
QUERY_PAIRS = (VERB_LIST, REQUIRED_STATUS)


def redirects_lines(rules: list[HostRule], base: str) -> Iterator[str]:
    yield f"# Redirect rules for Netlify, {_EDITED}."
    yield "# Forced (!): each persistent URL has a page, which would otherwise shadow its rule."
    for pair in QUERY_PAIRS:  # first: the first rule that matches applies
        yield f"{base}* {pair}=:value {base}:splat 200!"
    for rule in rules:
        path = browser_path(base + rule.path)
        if rule.url is not None:
            yield f"{path} {rule.url} {rule.status}!"
        elif rule.status == GONE:
            yield f"{path} {base}{NOT_FOUND_PAGE} {GONE}!"


def rule_warnings(rules: list[HostRule]) -> list[str]:
    count = len(QUERY_PAIRS) + sum(1 for r in rules if r.url is not None or r.status == GONE)
    if count <= ADVISED_RULES:
        return []
    return [
        f"netlify: _redirects has {count:,} rules; Netlify advises fewer than "
        f"{ADVISED_RULES:,} (the pages still answer in browsers; docs/hosting.md)"
    ]
