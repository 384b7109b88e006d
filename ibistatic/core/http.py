"""The HTTP answer to a persistent URL: one rule for ``ibistatic serve`` and for every
host file (nginx, Apache, Netlify and Cloudflare ``_redirects``).

The standard says only that the resolver returns the URL "to the browser, for
redirection" (resolution-system §8); it names no status.  The rule here follows what
the persistent URL *asks for*, not what the item is:

- the thing the IBI identifies, an edition or a translation of it (no ``:`` in the
  modifier): ``302 Found``, even when that item is itself a metadata record (its
  content type ``Metadata``): the URL names that record, and the answer is it;
- metadata *about* the identified item (a ``:`` step, ``.metadata``): ``303 See
  Other``, the status of "a description of the resource, not the resource" (RFC 9110
  §15.4.4; the W3C's "Cool URIs for the Semantic Web" §4.3);
- the alerts: ``404`` not-found and unavailable, ``410`` deleted, ``409`` conflict,
  no-original and loop (the answer depends on a state of the Archives that an
  investigation must settle; no redirect is safe).

An answer that depends on the request's ``Accept-Language`` (a ``+`` without a
language) carries ``Vary: Accept-Language``; host files cannot match that header and
leave such URLs to the pages.  No header value carries a control character, a space or
a non-ASCII character: they are written ``%XX`` (UTF-8), as a browser sends them, so
that a CR/LF in a target can never split a header or a rule line.
"""

from __future__ import annotations

import re
from typing import NamedTuple, Protocol
from urllib.parse import quote

from .relations import METADATA, TRANSLATION, Relation

__all__ = [
    "HttpAnswer",
    "http_answer",
    "header_value",
    "ALERT_STATUS",
    "FOUND",
    "SEE_OTHER",
    "NOT_FOUND",
    "CONFLICT",
    "GONE",
]

FOUND, SEE_OTHER, NOT_FOUND, CONFLICT, GONE = 302, 303, 404, 409, 410

#: the status of each alert of the resolution (core.outcome.ALERTS)
ALERT_STATUS = {
    "not-found": NOT_FOUND,
    "unavailable": NOT_FOUND,
    "deleted": GONE,
    "conflict": CONFLICT,
    "no-original": CONFLICT,
    "loop": CONFLICT,
}

_VARY_LANGUAGE = (("Vary", "Accept-Language"),)
# What no header value (nor a whitespace-separated rule file) may carry raw.
_UNSAFE_IN_HEADER = re.compile(r"[\x00-\x20\x7f-\U0010ffff]")


class Outcome(Protocol):
    """What the rule reads of a resolution: a Resolution, or a published URL."""

    url: str | None
    alert: str | None


class HttpAnswer(NamedTuple):
    """Status, ``Location`` (None for an alert) and the other headers of an answer.
    (A tuple: a large site's host files make hundreds of thousands of them.)"""

    status: int
    location: str | None
    headers: tuple[tuple[str, str], ...] = ()

    def header(self, name: str) -> str | None:
        """The value of header `name` (ASCII case ignored), or None."""
        wanted = name.lower()
        for key, value in self.headers:
            if key.lower() == wanted:
                return value
        return None


def header_value(text: str) -> str:
    """`text` fit for a header value: every control character, space and non-ASCII
    character written ``%XX`` (UTF-8 bytes), the rest unchanged (a URL's own ``%XX``
    escapes included)."""
    if not _UNSAFE_IN_HEADER.search(text):
        return text
    return _UNSAFE_IN_HEADER.sub(lambda match: quote(match.group(), safe=""), text)


def describes(asked: Relation) -> bool:
    """Whether the relation asked for is metadata about the item (a ``:`` step)."""
    return any(step.kind == METADATA for step in asked)


def depends_on_languages(asked: Relation) -> bool:
    """Whether the answer depends on Accept-Language (a ``+`` without a language)."""
    return any(step.kind == TRANSLATION and step.param is None for step in asked)


def http_answer(outcome: Outcome, asked: Relation) -> HttpAnswer:
    """The HTTP answer to a persistent URL that asked for the relation `asked` (its
    modifier's steps) and resolved to `outcome`: a redirect (302, or 303 for metadata
    about the item) to ``outcome.url``, or the status of ``outcome.alert``."""
    vary = _VARY_LANGUAGE if depends_on_languages(asked) else ()
    if outcome.url is None:
        if outcome.alert not in ALERT_STATUS:
            raise ValueError(f"an outcome with neither a URL nor a known alert: {outcome.alert!r}")
        return HttpAnswer(ALERT_STATUS[outcome.alert], None, vary)
    location = header_value(outcome.url)
    status = SEE_OTHER if describes(asked) else FOUND
    return HttpAnswer(status, location, (("Location", location),) + vary)
