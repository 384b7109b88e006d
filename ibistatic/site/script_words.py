"""The words the site's scripts write, in the page's language (docs/site.md,
"Languages"): what ``assets/resolve.js`` writes on ``404.html`` and ``assets/search.js``
on the search page.  They reach the scripts in the pages' JSON config blocks; every
word is one of :mod:`.i18n`'s."""

from __future__ import annotations

from .i18n import ALERTS, STEPS, TEXTS

__all__ = ["browser_words", "search_words"]

#: the words of TEXTS that resolve.js writes on 404.html (its labels), by its names
_RESOLVER_LABELS = (
    "ibi",
    "form",
    "asked_for",
    "file",
    "verb",
    "required_status",
    "tried",
    "archive",
    "request",
    "where",
    "expected",
    "hint",
)
#: the words of TEXTS that search.js writes on the search page
_SEARCH_WORDS = ("searching", "matches_one", "matches", "no_match", "search_failed", "deleted")


def browser_words(ui: str) -> dict:
    """What assets/resolve.js writes on 404.html, in `ui`: each alert's title and
    explanation (as the alert pages show them), its labels, the IBI forms and the steps
    of a modifier.  The resolver's own one-line messages stay English (core/facts.py)."""
    texts = TEXTS[ui]
    return {
        "lang": ui,
        "titles": {alert: both[ui][0] for alert, both in ALERTS.items()},
        "explanations": {alert: both[ui][1] for alert, both in ALERTS.items()},
        "labels": {name: texts[name] for name in _RESOLVER_LABELS},
        "forms": {"ibip": texts["ibip"], "repository": texts["ibi_repository"]},
        "steps": STEPS[ui],
    }


def search_words(ui: str) -> dict:
    """What assets/search.js writes on the search page, in `ui` ("{n}": a count, "{q}":
    the query)."""
    return {name: TEXTS[ui][name] for name in _SEARCH_WORDS}
