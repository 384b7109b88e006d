"""Cloudflare Pages: a ``_redirects`` within Cloudflare's rules and an advanced-mode
``_worker.js`` that answers every persistent URL with a real redirect.

Cloudflare's ``_redirects`` takes only relative or ``https://`` destinations, the
statuses 301, 302, 303, 307 and 308, at most 2,000 static rules of at most 1,000
characters each, and a rejected rule still uses up a slot: so the file holds only rules
it accepts, the most valued first (the bare persistent URL of each item, then its ``!``,
then the other modifiers).  ``_worker.js`` is resolve.js (the resolver of ``404.html``)
with the facts it reads and a small handler (``site_src/cloudflare-worker.js``): it
resolves each persistent URL over the index read through ``env.ASSETS`` and passes
every other request to the static assets.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from ..assets import facts_script
from ..hostfiles import _EDITED, HostRule, browser_path, redirect_rules
from ..pages import SITE_SRC
from ..signposting import record_path
from .limits import TreeLimits

__all__ = ["WORKER", "TREE_LIMITS", "redirects_lines", "rule_warnings", "worker_script"]

WORKER = "_worker.js"
STATIC_RULES = 2000
LINE_CHARACTERS = 1000
STATUSES = (301, 302, 303, 307, 308)
TREE_LIMITS = TreeLimits(
    "cloudflare-pages",
    files=20000,
    file_bytes=25 * 1024 * 1024,
    source="Cloudflare Pages: 20,000 files on the free plan, 100,000 on paid plans; 25 MiB a file",
)
# What the IBI itself never holds: a path with one of them carries a modifier.
MODIFIER_CHARACTERS = frozenset("!:+(")


def _accepted(rule: HostRule, base: str) -> str | None:
    """The rule's line, when Cloudflare's parser accepts it; else None."""
    if rule.url is None or rule.status not in STATUSES:
        return None
    if not (rule.url.startswith("https://") or rule.url.startswith("/")):
        return None
    line = f"{browser_path(base + rule.path)} {rule.url} {rule.status}"
    return line if len(line) <= LINE_CHARACTERS else None


def _value(rule: HostRule) -> int:
    """0 for a bare persistent URL, 1 for its ``!`` (the newest edition), 2 for others."""
    modifier = set(rule.path) & MODIFIER_CHARACTERS
    if not modifier:
        return 0
    return 1 if rule.path.endswith("!") and modifier == {"!"} else 2


def _chosen(rules: list[HostRule], base: str) -> tuple[list[str], int]:
    """The lines of the rules Cloudflare accepts, the most valued first, at most
    STATIC_RULES of them; and how many it would accept in all."""
    accepted = [(rule, _accepted(rule, base)) for rule in rules]
    lines = [(_value(rule), line) for rule, line in accepted if line is not None]
    lines.sort(key=lambda pair: pair[0])  # stable: the paths' order within a value
    return [line for _, line in lines[:STATIC_RULES]], len(lines)


def redirects_lines(rules: list[HostRule], base: str) -> Iterator[str]:
    yield f"# Redirect rules for Cloudflare Pages, {_EDITED}."
    yield "# The most used persistent URLs that Cloudflare accepts; _worker.js answers every other."
    yield from _chosen(rules, base)[0]


def rule_warnings(rules: list[HostRule]) -> list[str]:
    """What _redirects leaves to _worker.js (not an error: the worker answers it)."""
    redirects = redirect_rules(rules)
    lines, accepted = _chosen(rules, "/")
    left = len(redirects) - len(lines)
    if not left:
        return []
    reasons = []
    if accepted > STATIC_RULES:
        reasons.append(f"Cloudflare applies at most {STATIC_RULES:,} static rules")
    if accepted < len(redirects):
        reasons.append(
            f"{len(redirects) - accepted:,} go to http:// URLs or are longer than "
            f"{LINE_CHARACTERS:,} characters, which Cloudflare rejects"
        )
    return [
        f"cloudflare-pages: _redirects holds {len(lines):,} of {len(redirects):,} redirects "
        f"({'; '.join(reasons)}); _worker.js answers the other {left:,}, one Workers "
        "request each (docs/hosting.md)"
    ]


def worker_script(base: str) -> str:
    """``_worker.js``: facts.js, resolve.js and the handler, in one module."""
    resolver = (SITE_SRC / "assets" / "resolve.js").read_text(encoding="utf-8")
    # facts.js sets globalThis.ibistaticFacts above it; its require() (for node) would
    # send Cloudflare's bundler (esbuild) looking for a file the worker does not have
    resolver = resolver.replace('require("./facts.js")', "null")
    handler = (SITE_SRC / "cloudflare-worker.js").read_text(encoding="utf-8")
    handler = handler.replace("__IBISTATIC_BASE__", json.dumps(base))
    # the record page's path, for ARK's ?info (web/app.py ArchiveApp._inflected)
    handler = handler.replace("__IBISTATIC_RECORD_PATH__", json.dumps(record_path("{key}")))
    return (
        f"// _worker.js for Cloudflare Pages, {_EDITED}.\n{facts_script()}\n{resolver}\n{handler}"
    )
