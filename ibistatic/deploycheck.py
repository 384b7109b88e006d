"""A deployment check: what a live deployment must answer for each persistent URL form.

The pure part of ``ibistatic check-deployment`` (docs/cli/check-deployment.md): the
persistent URL forms worth asking, derived from a built index (every precomputed form,
the other modifier compositions, other case spellings and escapes, ``/ibi/`` forms, file
paths, ``?ibiurl.`` queries, ``+`` with ``Accept-Language``, deleted and unknown IBIs),
the answer each must get (status and ``Location``, by ``ibistatic resolve``'s logic and
:func:`~ibistatic.core.http.http_answer`, the rule every host follows), and the report.
Asking the deployment (HTTP, no redirect followed) is ``commands/check_deployment.py``'s.
"""

from __future__ import annotations

import html
import random
import re
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import NamedTuple
from urllib.parse import quote, unquote

from .core.facts import FORMATS, URL_PATH_SAFE
from .core.http import http_answer
from .core.relations import compositions, modifier_text
from .errors import IbistaticError
from .index.sharding import canonical_key

__all__ = [
    "FORM_KINDS",
    "UrlForm",
    "Answer",
    "Checked",
    "url_forms",
    "sample_forms",
    "expected_answer",
    "report_lines",
    "Served",
    "STATIC_HOSTS",
    "IN_BROWSER",
    "static_problem",
]

#: host profiles that answer from files and rules, not a resolver: a persistent URL
#: without a rule gets its page (200) or 404.html (404), and the browser resolves it
STATIC_HOSTS = ("github-pages", "netlify", "s3")
#: a static host's right answer that the browser's resolver completes (a page whose
#: script resolves the form, or 404.html), not one checked here to the letter
IN_BROWSER = "left to the browser"

#: The kinds of form, in the order a sample takes them (each kind is represented).
FORM_KINDS = (
    "precomputed",  # a page the build emitted (bare, !, :, :(oai_dc), !:(oai_dc) by default)
    "modifier",  # another modifier composition (Table 6.2 with the item's languages)
    "case",  # another case spelling of the IBI, or of a file path's %XX escapes
    "ibi-prefix",  # http://urlib.net/ibi/<IBI> as INPE prints it, on this site
    "file",  # <IBI>/<file path> (and a file the item does not have)
    "query",  # ?ibiurl.* pairs (Table 6.3), and a query the resolver ignores
    "language",  # a '+' without a language, asked with an Accept-Language
    "deleted",  # an item whose state is Deleted
    "unknown",  # well-formed IBIs no Archive holds
)

#: Query strings asked of every item: the resolver's pairs and one it ignores.
QUERIES = (
    "ibiurl.verblist=GetFileList",
    "ibiurl.requireditemstatus=Original",
    "utm_source=check-deployment",
)
#: Languages asked with Accept-Language besides the item's own (one it lacks).
OTHER_LANGUAGE = "de"
MISSING_FILE = "no-such-file.txt"


class UrlForm(NamedTuple):
    """One request: `target` follows the site's path, percent-encoded as a client sends
    it (with its query); `accept_language` is sent when not None."""

    kind: str
    target: str
    accept_language: str | None = None


class Answer(NamedTuple):
    """What matters of an HTTP answer: the status and the Location (None without one)."""

    status: int
    location: str | None


class Served(NamedTuple):
    """A static host's answer: the Answer's fields and the body (its pages are judged
    by what they are)."""

    status: int
    location: str | None
    body: bytes


class Checked(NamedTuple):
    """A form, the answer it must get and the answer it got (or why none came); judged
    as a static host answers (:func:`static_problem`) when `static` is that judgement."""

    form: UrlForm
    expected: Answer
    got: Answer | Served | str
    #: a static host's answer judged: "" right, IN_BROWSER right and left to the
    #: browser's resolver, else why it is wrong; None: judged as a server
    static: str | None = None

    @property
    def matches(self) -> bool:
        if self.static is not None:
            return self.static in ("", IN_BROWSER)
        return not isinstance(self.got, str) and self.got[:2] == self.expected[:2]

    @property
    def in_browser(self) -> bool:
        return self.static == IN_BROWSER


def encoded(path: str) -> str:
    """`path` as a client sends it: UTF-8 %XX for all but the RFC 3986 path characters."""
    return quote(path, safe=URL_PATH_SAFE)


def url_forms(index, items: int | None = None, seed: int = 0) -> list[UrlForm]:
    """Every form worth asking of a deployment of `index`, each once, in a stable order;
    with `items`, those of that many items at most (chosen with `seed`), so that a
    sample of a large site does not make every form of every item first."""
    held: dict[str, dict] = {}
    for _key, records in index.entries():
        if records:
            record = records[0]
            held.setdefault(canonical_key(record["repository"]), record)
    keys = sorted(held)
    if items is not None and items < len(keys):
        deleted = [key for key in keys if held[key].get("state") == "Deleted"][:2]
        keys = sorted(set(random.Random(seed).sample(keys, items)) | set(deleted))
    forms: dict[tuple[str, str | None], UrlForm] = {}
    for item_key in keys:
        for form in item_forms(held[item_key], index.answers):
            forms.setdefault((form.target, form.accept_language), form)
    for form in unknown_forms(held.values()):
        forms.setdefault((form.target, form.accept_language), form)
    return list(forms.values())


def spellings(record: dict) -> list[str]:
    """The IBI forms of an item as its Archive writes them."""
    return [record["repository"]] + ([record["ibip"]] if record.get("ibip") else [])


def languages(record: dict) -> list[str]:
    tags = {tag for tag, _ in record.get("translations") or []}
    if record.get("language"):
        tags.add(record["language"])
    return sorted(tags)


def item_forms(record: dict, answers) -> Iterator[UrlForm]:
    """The forms of one item; `answers(key)` gives the precomputed modifiers of a key."""
    deleted = record.get("state") == "Deleted"
    for ibi in spellings(record):
        if deleted:
            yield UrlForm("deleted", encoded(ibi))
        precomputed = sorted(answers(canonical_key(ibi)))
        for modifier in precomputed:
            yield UrlForm("precomputed", encoded(ibi + modifier))
        for relation in compositions(languages(record), FORMATS):
            yield UrlForm("modifier", encoded(ibi + modifier_text(relation)))
        yield from _spelled_forms(ibi)
        yield from _file_forms(ibi, record.get("files") or [])
        for query in QUERIES:
            yield UrlForm("query", encoded(ibi) + "?" + query)
        for tag in [*languages(record), OTHER_LANGUAGE]:
            yield UrlForm("language", encoded(ibi + "+"), tag)
            yield UrlForm("language", encoded(ibi + ":+"), tag)


def _spelled_forms(ibi: str) -> Iterator[UrlForm]:
    """Other case spellings and escapes of the same URLs, and the ``/ibi/`` forms."""
    yield UrlForm("case", encoded(ibi.swapcase()))
    yield UrlForm("case", encoded(ibi.swapcase() + "!:(oai_dc)"))
    yield UrlForm("ibi-prefix", "ibi/" + encoded(ibi))
    yield UrlForm("ibi-prefix", "ibi/" + encoded(ibi + "!:(oai_dc)"))


def _file_forms(ibi: str, files: Sequence[str]) -> Iterator[UrlForm]:
    for name in [*files, MISSING_FILE]:
        path = encoded(f"{ibi}/{name}")
        yield UrlForm("file", path)
        if "%" in path:  # the same URL with lower-case hex escapes (RFC 3986 §6.2.2.1)
            yield UrlForm("case", re.sub("%[0-9A-F]{2}", lambda hexa: hexa.group().lower(), path))


def unknown_forms(records: Iterable[dict]) -> Iterator[UrlForm]:
    """Well-formed IBIs like the held ones that no Archive holds: an IBIp with a prefix
    in use and a suffix that is not, a repository of the year 1901 in a prefix in use."""
    held = {canonical_key(ibi) for record in records for ibi in spellings(record)}
    prefixes = sorted({ibi.split("/")[0] for ibi in held if ibi.count("/") == 1})
    repositories = sorted({"/".join(ibi.split("/")[:2]) for ibi in held if ibi.count("/") >= 3})
    candidates = [f"{prefix}/2222222" for prefix in prefixes[:2]]
    candidates += [f"{prefix}/1901/01.01.00.00" for prefix in repositories[:2]]
    candidates = candidates or ["8JMKD3MGP8W/2222222"]
    for ibi in candidates:
        if canonical_key(ibi) not in held:
            yield UrlForm("unknown", encoded(ibi))
            yield UrlForm("unknown", encoded(ibi + "!:(oai_dc)"))


def sample_forms(forms: Sequence[UrlForm], count: int | None, seed: int = 0) -> list[UrlForm]:
    """`count` forms spread over the kinds (round robin over FORM_KINDS, each kind in a
    seeded random order), or all of them when `count` is None."""
    if count is None or count >= len(forms):
        return list(forms)
    rng = random.Random(seed)
    groups = []
    for kind in FORM_KINDS:
        group = [form for form in forms if form.kind == kind]
        rng.shuffle(group)
        groups.append(group)
    chosen: list[UrlForm] = []
    while len(chosen) < count:
        for group in groups:
            if group and len(chosen) < count:
                chosen.append(group.pop())
    return chosen


def expected_answer(resolver, form: UrlForm) -> Answer:
    """What a deployment must answer to `form`: ``ibistatic serve``'s answer, by the
    offline resolver over the same index (400 for a request that is no persistent URL)."""
    url = resolver.index.site_url + form.target
    try:
        result = resolver.resolve(url, form.accept_language)
    except IbistaticError:
        return Answer(400, None)
    answer = http_answer(result, result.asked)
    return Answer(answer.status, answer.location)


_CANONICAL = re.compile(rb'<link rel="canonical" href="([^"]*)">')


def static_problem(
    site, not_found: bytes, form: UrlForm, expected: Answer, got: Served | str
) -> str:
    """How a static host serving the built `site` (a folder; `not_found`: its 404.html)
    answered `form`: "" right, IN_BROWSER right with the browser's resolver to complete
    it, else why it is wrong.

    Such a host answers with the build's own mechanisms only: a rule of its host files
    (a redirect, which must be the one ``serve`` gives), the page the build wrote for the
    form (a redirect page must lead where ``serve`` would, unless a query, the browser's
    languages or a file named index.html change the answer: its script resolves those),
    or 404.html, whose script resolves any other form in the browser (the same resolver:
    tests/test_site_browser.py and test_browser_parity.py check it there)."""
    if isinstance(got, str):
        return got
    if got[:2] == expected[:2]:
        return ""
    if 300 <= got.status < 400:
        return "a redirect other than the resolver's"
    if got.status == 404:
        return IN_BROWSER if got.body == not_found else "a 404 without the site's 404.html"
    if got.status != 200:
        return f"status {got.status}"
    path = unquote(form.target.partition("?")[0])
    pages = [Path(site) / path / "index.html"]
    if path.endswith("/index.html"):  # the item's file index.html, or the form's page
        pages.append(Path(site) / path)
    if not any(page.is_file() and got.body == page.read_bytes() for page in pages):
        return "a page other than the build's"
    found = _CANONICAL.search(got.body)
    resolved_here = "?" in form.target or form.accept_language or path.endswith("/index.html")
    if found is None or resolved_here or expected.location is None:
        return IN_BROWSER  # an alert page, or a form its script resolves
    target = html.unescape(found.group(1).decode("utf-8", "replace"))
    return "" if target == expected.location else f"a page leading to {target}"


def _shown(answer: Answer | str) -> str:
    if isinstance(answer, str):
        return answer
    return f"{answer.status} {answer.location}" if answer.location else str(answer.status)


def report_lines(base_url: str, checked: Sequence[Checked]) -> list[str]:
    """The report: one line per difference (URL, expected, got), then per kind how many
    forms were asked and how many differ, then the total."""
    lines = []
    wrong = [item for item in checked if not item.matches]
    for item in wrong:
        language = f" (Accept-Language: {item.form.accept_language})"
        lines += [
            f"DIFFERS {base_url}{item.form.target}"
            + (language if item.form.accept_language else ""),
            f"    expected {_shown(item.expected)}",
            f"    got      {_shown(item.got)}"
            + (f" ({item.static})" if item.static and not isinstance(item.got, str) else ""),
        ]
    static = any(item.static is not None for item in checked)
    browser = f" {'browser':>7}" if static else ""
    lines.append(f"{'kind':<12} {'asked':>6} {'differ':>6}{browser}")
    for kind in FORM_KINDS:
        asked = [item for item in checked if item.form.kind == kind]
        if asked:
            differ = sum(1 for item in asked if not item.matches)
            left = sum(1 for item in asked if item.in_browser)
            lines.append(
                f"{kind:<12} {len(asked):>6} {differ:>6}" + (f" {left:>7}" if static else "")
            )
    verdict = "all match" if not wrong else f"{len(wrong)} differ"
    if static:
        left = sum(1 for item in checked if item.in_browser)
        verdict += f" ({left} left to the browser's resolver, as the host can do no more)"
    lines.append(f"{len(checked)} persistent URL forms asked of {base_url}: {verdict}")
    return lines
