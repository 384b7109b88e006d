"""Persistent URLs (resolution-system-pt.txt §6.1, Tables 6.1, 6.3 and 6.6).

::

    URL-persistente = base IBI [mdf] [path-absolute] ["?" pergunta]
    IBI      = repositorio | IBIp
    mdf      = ([u [t]] | [t [u]]) [m [t]]             ; !+:
    pergunta = [par *("&" par)] ; par = nome "=" valor

The standard's base is ``http://urlib.net/``; in ibistatic it is the publisher's own
(``scheme://host[:port]/`` and any base path).  Two query pairs are the resolver's
business (Table 6.3): ``ibiurl.requireditemstatus=Original`` and
``ibiurl.verblist=<verb list>``; other pairs are kept but not interpreted.

The URLs INPE and urlib.net print put a word between the resolver and the IBI
(``http://urlib.net/ibi/8JMKD3MGP3W34T/47AF772``, ``http://<archive>/rep/<IBI>``, see
:data:`SHAPES`), and citations write ``ibi:<IBI>``; an Archive's own file address is
``http://<archive>/col/<IBI>/doc/<file>``.  Each names the IBI after it (and the file),
so each is read as that IBI: an institution that moves its links keeps every printed
citation working.  When text is no persistent URL, :func:`hint` says what it probably
is (a DOI; an IBI followed by a catalog's series code, ``...07.20.15.45-NTC``).

:func:`build_persistent_url` writes the one canonical spelling of a request, and
:func:`parsed_pairs` gives what the resolver extracts from it (Table 6.6).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from ..errors import IbiSyntaxError, UsageError
from .facts import (
    ARCHIVE_FILES,
    DOC_FOLDER,
    ORIGINAL,
    PATH_CHARACTER_CLASS,
    REQUIRED_STATUS,
    VERB_LIST,
)
from .facts import URL_SHAPES as SHAPES
from .identifiers import Ibi, match_ibi, parse_ibi
from .pairlists import Pair, QueryPair, decode_percent, encode_query, match_query
from .relations import (
    Relation,
    VerbList,
    check_relation,
    match_modifier,
    modifier_text,
    parse_verb_list,
    verb_list_text,
)

__all__ = [
    "PersistentUrl",
    "parse_persistent_url",
    "build_persistent_url",
    "parsed_pairs",
    "hint",
    "SHAPES",
    "REQUIRED_STATUS",
    "VERB_LIST",
    "ORIGINAL",
    "base_path",
]

WHAT = "persistent URL"
# A DOI as written bare, with "doi:" or as a doi.org link (https://www.doi.org/the-identifier/resources/handbook/2_numbering).
DOI = re.compile(
    r"(?:doi:\s*|https?://(?:dx\.)?doi\.org/)?(?P<doi>10\.[0-9]{4,9}/\S+)", re.IGNORECASE
)
# A catalog's series code after an IBI: -NTC, -TDI, -RPQ, -PUD...
SERIES_CODE = re.compile(r"-[A-Za-z]{2,5}(?![A-Za-z0-9])")

# scheme "://" authority (RFC 3986 §3.1, §3.2): where a base URL ends.
SCHEME_AUTHORITY = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/?#\s]*")
PATH_CHARACTERS = re.compile(PATH_CHARACTER_CLASS + "*")
# Where the hints of an error look for an IBI: after a "/" (a word before the IBI), or
# after ":", "<" or a space (a citation), where a letter or digit follows.
_AFTER_SLASH = re.compile(r"/(?=[A-Za-z0-9])")
_AFTER_MARK = re.compile(r"[:< ](?=[A-Za-z0-9])")
#: how many places the hints of an error try an IBI at.  Each failed try costs time
#: linear in the whole text (its error carries the text), so trying every ``/`` or ``:``
#: of a long text made one bad URL quadratic; a fixed number keeps every error linear.
MAX_IBI_TRIES = 4


def base_path(site_url: str) -> str:
    """The path of a publisher's base (its site URL), ending in ``/``: ``/`` or ``/ibi/``,
    where its pages, assets, index and host rules sit."""
    path = urlsplit(site_url).path or "/"
    return path if path.endswith("/") else path + "/"


@dataclass(frozen=True)
class PersistentUrl:
    """A parsed persistent URL.

    ``verbs`` is ``parsedibiurl.verblist`` of Table 6.6: the modifier's verbs, then those
    of ``ibiurl.verblist`` not among them; ``filepath`` is the decoded path after the
    IBI and modifier, without its leading ``/``; ``query`` holds every query pair.
    """

    base: str
    ibi: Ibi
    modifier: Relation
    verbs: VerbList
    filepath: str = ""
    required_status: str = ""
    query: tuple[tuple[str, str], ...] = ()
    #: the word before the IBI (one of :data:`SHAPES`, or ``"col/"``), ``""`` if none
    shape: str = ""

    @property
    def relation(self) -> Relation:
        """The relation the URL asks for (modifier and verb list together)."""
        return self.verbs.steps

    def canonical(self) -> str:
        """This request in the one spelling :func:`build_persistent_url` writes (query
        pairs that are not the resolver's business are left out)."""
        return build_persistent_url(
            self.base, self.ibi, self.verbs, self.filepath, self.required_status
        )


def parse_persistent_url(url: str, base: str | None = None) -> PersistentUrl:
    """``URL-persistente = base IBI [mdf] [path-absolute] ["?" pergunta]`` (Table 6.1).

    With *base*, a URL with a scheme must start with it (scheme and host compared
    without case); without, any ``scheme://host[:port]/`` is the base.  Text with no
    scheme is a bare IBI with its modifier, path and query (what users type into the
    resolver's command line); its base is ``""``.
    """
    try:
        return _parse(url, base)
    except IbiSyntaxError as error:
        if error.hint:
            raise
        # What failed once is not tried again: without a base, the whole URL; the IBI
        # where it was looked for.
        text = _hint(url, base is not None, error.ibi_start)
        raise IbiSyntaxError(url, error.position, error.expected, error.what, text) from None


def _parse(url: str, base: str | None) -> PersistentUrl:
    url = url.split("#", 1)[0]  # a fragment is the client's (RFC 3986 §3.5): never sent
    base_text, position = _base(url, base)
    shape, position = _shape(url, position)
    ibi, position = _ibi(url, position)
    modifier: Relation
    if shape == ARCHIVE_FILES:
        modifier, position = (), _doc_folder(url, position)
    else:
        modifier, position = match_modifier(url, position, WHAT, ("/", "?"))
    filepath, position = _path_absolute(url, position)
    pairs = match_query(url, position + 1, WHAT) if position < len(url) else []
    required_status = _required_status(url, pairs)
    verbs = _verb_list(url, pairs, modifier)
    query = tuple((pair.name, pair.value) for pair in pairs)
    return PersistentUrl(base_text, ibi, modifier, verbs, filepath, required_status, query, shape)


def _shape(url: str, start: int) -> tuple[str, int]:
    """The word of :data:`SHAPES` (or ``col/``) at *start*, and the index after it."""
    for shape in SHAPES + (ARCHIVE_FILES,):
        if url.startswith(shape, start):
            return shape, start + len(shape)
    return "", start


def _doc_folder(url: str, start: int) -> int:
    """``/doc`` after the IBI of ``col/<IBI>/doc/<file>``; the index of the ``/`` that
    begins the file path."""
    if not url.startswith(DOC_FOLDER + "/", start):
        matched = next(
            i
            for i in range(len(DOC_FOLDER) + 1)
            if not url.startswith((DOC_FOLDER + "/")[: i + 1], start)
        )
        raise IbiSyntaxError(
            url, start + matched, "'/doc/' (an Archive's files are col/<IBI>/doc/<file>)", WHAT
        )
    return start + len(DOC_FOLDER)


def _base(url: str, base: str | None) -> tuple[str, int]:
    """The base of *url* and the index after it."""
    scheme = SCHEME_AUTHORITY.match(url)
    if scheme is None:
        return "", 0
    if base is None:
        if not url.startswith("/", scheme.end()):
            raise IbiSyntaxError(url, scheme.end(), "'/'", WHAT)
        return url[: scheme.end() + 1], scheme.end() + 1
    base = _with_slash(base)
    host_end = SCHEME_AUTHORITY.match(base)
    fold = host_end.end() if host_end else 0
    for index, expected in enumerate(base):
        found = url[index : index + 1]
        if found != expected and not (index < fold and found.lower() == expected.lower()):
            raise IbiSyntaxError(url, index, f"the base URL {base!r}", WHAT)
    return base, len(base)


def _with_slash(base: str) -> str:
    return base if base.endswith("/") else base + "/"


def _ibi(url: str, start: int) -> tuple[Ibi, int]:
    """``IBI = repositorio | IBIp``, named as part of the persistent URL in errors.

    When the IBI begins after a word that is no shape (``/foo/8JMKD3MGP7W/3FB2RJE``),
    the caret goes to that word and the hint says where the IBI begins."""
    try:
        return match_ibi(url, start)
    except IbiSyntaxError as error:
        later = _later_ibi(url, start)
        if later is None:
            failure = IbiSyntaxError(url, error.position, error.expected, WHAT)
            failure.ibi_start = start  # where the hints need not try again
            raise failure from None
        shapes = ", ".join(SHAPES + (ARCHIVE_FILES,))
        raise IbiSyntaxError(
            url,
            start,
            f"an IBI, or one of the words {shapes} before it",
            WHAT,
            f"an IBI begins at character {later[0] + 1}: {later[1].text}",
        ) from None


def _later_ibi(url: str, start: int) -> tuple[int, Ibi] | None:
    """The first IBI that begins after a ``/`` of the path after *start* (among the first
    :data:`MAX_IBI_TRIES` places where one may begin)."""
    end = url.find("?", start)
    places = (
        found.end() for found in _AFTER_SLASH.finditer(url, start, len(url) if end < 0 else end)
    )
    for place in itertools.islice(places, MAX_IBI_TRIES):
        try:
            return place, match_ibi(url, place)[0]
        except IbiSyntaxError:
            continue
    return None


def _path_absolute(url: str, start: int) -> tuple[str, int]:
    """``[path-absolute]`` (RFC 3986) up to ``?`` or the end: the decoded file path
    without its leading ``/``, and the index after the path."""
    if not url.startswith("/", start):
        return "", start
    found = PATH_CHARACTERS.match(url, start)  # "*": it always matches
    end = found.end() if found else start
    if end < len(url) and url[end] != "?":
        expected = "a path character or '?' (spaces and non-ASCII are written %hh)"
        raise IbiSyntaxError(url, end, expected, WHAT)
    path, positions = decode_percent(url, start + 1, end, WHAT)
    _check_file_path(url, path, positions)
    return path, end


def _check_file_path(url: str, path: str, positions: tuple[int, ...]) -> None:
    """A file of an item: no ``.`` or ``..`` segment (no way out of the item), no
    control character."""
    offset = 0
    for segment in path.split("/"):
        if segment in (".", ".."):
            raise IbiSyntaxError(url, positions[offset], "a file name (not '.' or '..')", WHAT)
        offset += len(segment) + 1
    for index, char in enumerate(path):
        if ord(char) < 0x20 or ord(char) == 0x7F:
            raise IbiSyntaxError(url, positions[index], "a file name character", WHAT)


def hint(text: str) -> str:
    """What *text*, which is no IBI or persistent URL, probably is; ``""`` if nothing
    comes to mind.  Only called on the way to an error; its time is still linear in the
    length of *text* (a server calls it on what any client sends)."""
    return _hint(text, True, None)


def _hint(text: str, reparse: bool, tried: int | None) -> str:
    doi = DOI.fullmatch(text.strip())
    if doi is not None:
        return f"{doi['doi']} is a DOI, not an IBI: it resolves at https://doi.org/{doi['doi']}"
    found = []
    starts = (start for start in _ibi_starts(text) if start != tried)
    for start in itertools.islice(starts, MAX_IBI_TRIES):
        try:
            ibi, end = match_ibi(text, start)
        except IbiSyntaxError:
            continue
        series = SERIES_CODE.match(text, end)
        if series is not None:
            return (
                f"{series.group()!r} is a catalog's series code, not part of the IBI: "
                f"the IBI is {ibi.text}"
            )
        found.append(ibi.text)
    if found and found[0] != text.strip():
        return f"the IBI in it is {found[0]}"
    if not reparse:
        return ""
    try:
        named = _parse(text, None).ibi.text
    except IbiSyntaxError:
        return ""
    return f"this is a persistent URL; the IBI it names is {named}" if named != text.strip() else ""


def _ibi_starts(text: str) -> Iterator[int]:
    """Where an IBI may begin: the start and after each ``:``, ``<`` or space before any
    query (as in ``IBI: <8JMKD3MGP3W34T/47AF772>``), where a letter or digit follows
    (every IBI begins with one)."""
    yield 0
    end = text.find("?")
    for found in _AFTER_MARK.finditer(text, 0, len(text) if end < 0 else end):
        yield found.end()


def _pair(pairs: list[QueryPair], url: str, name: str) -> QueryPair | None:
    """The pair called *name*; it may appear once."""
    found = [pair for pair in pairs if pair.name == name]
    if len(found) > 1:
        raise IbiSyntaxError(url, found[1].start, f"one {name} pair only", WHAT)
    return found[0] if found else None


def _required_status(url: str, pairs: list[QueryPair]) -> str:
    """``ibiurl.requireditemstatus = "Original"`` (Table 6.3)."""
    pair = _pair(pairs, url, REQUIRED_STATUS)
    if pair is None:
        return ""
    if pair.value != ORIGINAL:
        position = _first_difference(pair.value, ORIGINAL)
        raise IbiSyntaxError(url, pair.value_positions[position], repr(ORIGINAL), WHAT)
    return ORIGINAL


def _first_difference(text: str, expected: str) -> int:
    for index, char in enumerate(text):
        if index >= len(expected) or char != expected[index]:
            return index
    return len(text)


def _verb_list(url: str, pairs: list[QueryPair], modifier: Relation) -> VerbList:
    """``parsedibiurl.verblist``: the union without repetition of the modifier's verbs
    and those of ``ibiurl.verblist`` (Table 6.6)."""
    pair = _pair(pairs, url, VERB_LIST)
    if pair is None:
        return VerbList(modifier)
    try:
        return parse_verb_list(pair.value, after=modifier)
    except IbiSyntaxError as error:
        position = pair.value_positions[error.position]
        raise IbiSyntaxError(url, position, error.expected, WHAT) from None


def build_persistent_url(
    base: str,
    ibi: str | Ibi,
    verbs: VerbList | Relation = (),
    filepath: str = "",
    required_status: str = "",
) -> str:
    """The one canonical spelling of a persistent URL.

    The IBI in its canonical case; the relation as a modifier (``!:(oai_dc)``, never
    as ``ibiurl.verblist``); the file path percent-encoded as UTF-8 (RFC 3986: all but
    unreserved characters and ``/``); then ``ibiurl.requireditemstatus=Original`` and
    ``ibiurl.verblist=GetFileList`` when asked for.  *base* ``""`` gives a bare IBI.
    """
    parsed = parse_ibi(ibi) if isinstance(ibi, str) else ibi
    if isinstance(verbs, VerbList):
        relation, file_list = verbs.steps, verbs.file_list
    else:
        relation, file_list = verbs, False
    check_relation(relation)
    query: list[tuple[str, str]] = []
    if required_status:
        if required_status != ORIGINAL:
            raise UsageError(f"required_status must be '' or {ORIGINAL!r}, not {required_status!r}")
        query.append((REQUIRED_STATUS, ORIGINAL))
    if file_list:
        query.append((VERB_LIST, verb_list_text(VerbList((), True))))
    url = (_with_slash(base) if base else "") + parsed.key + modifier_text(relation)
    url += _encoded_path(filepath)
    return url + ("?" + encode_query(query) if query else "")


def _encoded_path(filepath: str) -> str:
    """``path-absolute`` for a file path (a leading ``/`` is allowed and dropped)."""
    path = filepath[1:] if filepath.startswith("/") else filepath
    if not path:
        return ""
    if any(segment in (".", "..") for segment in path.split("/")):
        raise UsageError(f"file path {filepath!r}: '.' and '..' segments are not allowed")
    return "/" + quote(path, safe="/")


def parsed_pairs(
    url: PersistentUrl, client_ip: str | None = None, language_preference: str | None = None
) -> list[Pair]:
    """What the resolver captures from a request (Table 6.6), as pairs, in that table's
    order: ``clientinformation.ipaddress`` (a list when proxies are named),
    ``clientinformation.languagepreference``, ``parsedibiurl.filepath`` (as a
    path-absolute, ``/reference.bib``), ``parsedibiurl.ibi``,
    ``parsedibiurl.requireditemstatus`` and ``parsedibiurl.verblist``; absent values
    are left out."""
    pairs: list[Pair] = []
    if client_ip:
        pairs.append(("clientinformation.ipaddress", _one_or_list(client_ip.split())))
    if language_preference:
        pairs.append(("clientinformation.languagepreference", language_preference))
    if url.filepath:
        pairs.append(("parsedibiurl.filepath", "/" + url.filepath))
    pairs.append(("parsedibiurl.ibi", url.ibi.text))
    if url.required_status:
        pairs.append(("parsedibiurl.requireditemstatus", url.required_status))
    verbs = verb_list_text(url.verbs).split()
    if verbs:
        pairs.append(("parsedibiurl.verblist", _one_or_list(verbs)))
    return pairs


def _one_or_list(words: list[str]) -> str | tuple[str, ...]:
    # A pair value is a word, or a {list} of two or more words (Table 4.2).
    return words[0] if len(words) == 1 else tuple(words)
