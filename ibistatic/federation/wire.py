"""The messages of the live resolution system (resolution-system §5, §6.2, §7), without I/O.

Every request is an HTTP GET of a base URL, ``?`` and ``name=value`` pairs (Table 4.1,
:func:`~ibistatic.core.pairlists.encode_query`); every answer a ``text/plain`` pair list
(Table 4.2).  The base URL of the resolver service is ``http://<resolver>/<service
IBI>`` (the seeds' ``http://urlib.net/J8LNKB5R7W/3FUQHC5``); that of an Archive,
``http://<archiveaddress>/<archiveserviceibi>``.

- ``inclusionRequest`` / ``exclusionRequest`` (Table 5.2): the Archive to the resolver,
  when it is turned on and off; answers ``status.archive included status.confirmation
  successful|unsuccessful`` and ``status.archive excluded``.  The seeds give no answer
  for a refused request (a wrong registration key); ibistatic answers
  ``status.archive refused`` and a ``notice {...}`` saying why (:func:`refused`).
- ``inclusionConfirmationRequest``: the resolver to the Archive; answer ``confirmation yes``.
- ``urlRequest`` (Table 6.9): what the resolver captured (Table 6.6) less what it must
  not pass on: never ``parsedibiurl.requireditemstatus`` (a lying Archive must not know
  the original is wanted) nor ``clientinformation.languagepreference`` (privacy).
- ``acknowledgment`` (Table 6.11): the resolver to the Archive that gave the URL;
  answer ``notice {acknowledgment received}``.  An ibistatic extension sends several in
  one ``POST`` (:func:`ack_batches`): the body holds one acknowledgment a line, each the
  query of its GET; answer ``acknowledgment.counted N`` and ``acknowledgment.refused M``
  (:func:`batch_answer`).  The resolver sends batches to Archives whose
  ``archiveplatformversion`` is ibistatic's (:func:`takes_batches`), single
  acknowledgments to any other.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..core.identifiers import parse_ibi
from ..core.pairlists import Pair, encode_query
from ..core.properties import PropertyList, RelationAnswer
from ..core.relations import parse_relation
from ..errors import IbistaticError, UsageError
from ..web.service import ACK_BATCH_BYTES, ACK_BATCH_LINES

__all__ = [
    "DEFAULT_SERVICE_IBI",
    "REGISTRATION_KEY",
    "FORWARDED",
    "Registration",
    "check_registration_key",
    "request_url",
    "registration_pairs",
    "parse_registration",
    "confirmation_pairs",
    "url_request_pairs",
    "acknowledgment_pairs",
    "ACK_BATCH_LINES",
    "ACK_BATCH_BYTES",
    "ack_batches",
    "batch_answer",
    "batch_counts",
    "takes_batches",
    "included",
    "excluded",
    "refused",
    "property_list_of",
    "ip_list",
    "normal_ip",
    "IP_LIST_MAX",
]

#: the resolver service of the seeds (Example 5.2: http://www.urlib.net/J8LNKB5R7W/3FUQHC5)
DEFAULT_SERVICE_IBI = "J8LNKB5R7W/3FUQHC5"

# chave = numero ["-" numero] ; numero = 10*DIGITO   (Table 5.1; also a urlkey)
REGISTRATION_KEY = re.compile(r"[0-9]{10,}(?:-[0-9]{10,})?")
# hostport (RFC 2396 §3.2.2): a host name or IPv4 address and an optional port;
# an IPv6 literal in brackets too
HOSTPORT = re.compile(
    r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*"
    r"|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?"
)
IP_ADDRESS = re.compile(r"[0-9]{1,3}(?:\.[0-9]{1,3}){3}|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*")
# authority of an e-mail address, loosely: local part "@" host
EMAIL = re.compile(r"[^\s@&=?#%]+@[A-Za-z0-9.-]+")
# archiveplatformversion: "sequência ASCII" (Table 5.2), printable, no space
PLATFORM_VERSION = re.compile(r"[\x21-\x7e]+")

#: the pairs of Table 6.6 that a resolver passes on to the Archives ("Repassado: sim")
FORWARDED = (
    "clientinformation.ipaddress",
    "parsedibiurl.filepath",
    "parsedibiurl.ibi",
    "parsedibiurl.verblist",
)


def check_registration_key(text: str, where: str) -> str:
    """`text` if it is a ``chave`` (Table 5.1: ``10*DIGIT ["-" 10*DIGIT]``), else a
    UsageError naming `where`."""
    if not isinstance(text, str) or not REGISTRATION_KEY.fullmatch(text):
        raise UsageError(
            f"{where}: registration key {text!r}: expected 10 or more digits, optionally "
            "'-' and 10 or more digits (1234567890-1234567890)"
        )
    return text


def request_url(base: str, pairs: Iterable[Pair]) -> str:
    """A service request: `base` ``?`` the pairs, escaped as Table 4.1 says."""
    return base + "?" + encode_query(pairs)


@dataclass(frozen=True)
class Registration:
    """The seven parameters of an inclusion or exclusion request (Table 5.2)."""

    address: str  # archiveaddress: where the Archive service answers (hostport)
    service_ibi: str  # archiveserviceibi
    ip: str  # archiveip
    platform_version: str  # archiveplatformversion
    email: str  # archiveadmemailaddress
    key: str  # registrationkey

    def service_base(self) -> str:
        """The base URL of the Archive service: ``http://<archiveaddress>/<service IBI>``."""
        return f"http://{self.address}/{self.service_ibi}"


_FIELDS = (
    ("archiveaddress", "address", HOSTPORT, "a host name or IP address and an optional :port"),
    ("archiveserviceibi", "service_ibi", None, "a repository name or IBIp"),
    ("archiveip", "ip", IP_ADDRESS, "an IPv4 or IPv6 address"),
    ("archiveprotocol", None, re.compile("HTTP"), "HTTP"),
    ("archiveplatformversion", "platform_version", PLATFORM_VERSION, "printable ASCII"),
    ("archiveadmemailaddress", "email", EMAIL, "an e-mail address"),
    ("registrationkey", "key", REGISTRATION_KEY, "10*DIGIT ['-' 10*DIGIT]"),
)


def registration_pairs(registration: Registration, subject: str) -> list[Pair]:
    """``servicesubject`` (``inclusionRequest`` or ``exclusionRequest``) and the seven
    pairs of Table 5.2, in its order (Example 5.2)."""
    if subject not in ("inclusionRequest", "exclusionRequest"):
        raise UsageError(
            f"servicesubject {subject!r}: expected inclusionRequest or exclusionRequest"
        )
    pairs: list[Pair] = [("servicesubject", subject)]
    for name, attribute, _, _ in _FIELDS:
        pairs.append((name, getattr(registration, attribute) if attribute else "HTTP"))
    return pairs


def parse_registration(query: Mapping[str, str]) -> Registration:
    """The Registration of an inclusion or exclusion request's decoded pairs; a
    UsageError names the first missing or malformed pair and what was expected."""
    values = {}
    for name, attribute, pattern, expected in _FIELDS:
        value = query.get(name)
        if value is None or value == "":
            raise UsageError(f"{name} is missing: expected {expected}")
        if pattern is not None and not pattern.fullmatch(value):
            raise UsageError(f"{name} {value!r}: expected {expected}")
        if pattern is None:
            try:
                value = parse_ibi(value).text
            except IbistaticError:
                raise UsageError(f"{name} {value!r}: expected {expected}") from None
        if attribute:
            values[attribute] = value
    return Registration(**values)


def confirmation_pairs() -> list[Pair]:
    """Example 5.4: only ``servicesubject=inclusionConfirmationRequest``."""
    return [("servicesubject", "inclusionConfirmationRequest")]


def url_request_pairs(captured: Iterable[Pair]) -> list[Pair]:
    """``servicesubject=urlRequest`` and, of the pairs the resolver captured (Table 6.6,
    :func:`~ibistatic.core.urls.parsed_pairs`), only those it passes on (:data:`FORWARDED`)."""
    return [("servicesubject", "urlRequest")] + [
        (name, value) for name, value in captured if name in FORWARDED
    ]


def acknowledgment_pairs(
    client_ip: str,
    content_type: str,
    ibi_forms: tuple[str, ...] | None,
    state: str,
    url: str,
    persistent_url: str,
    urlkey: str,
) -> list[Pair]:
    """``servicesubject=acknowledgment`` and the pairs of Table 6.11, in its order
    (Example 6.9); ``ibi`` (optional) as its forms, ``rep X ibip Y``."""
    pairs: list[Pair] = [
        ("servicesubject", "acknowledgment"),
        ("clientinformation.ipaddress", client_ip),
        ("contenttype", content_type),
    ]
    if ibi_forms:
        pairs.append(("ibi", ibi_forms))
    pairs += [("state", state), ("url", url), ("url.persistent", persistent_url)]
    pairs.append(("urlkey", urlkey))
    return pairs


def ack_batches(lines: list[str]) -> list[bytes]:
    """The bodies of the batches that send `lines` (acknowledgments as queries, ASCII):
    one line each, in order, each body within the Archive's limits."""
    bodies, batch, size = [], [], 0
    for line in lines:
        if batch and (len(batch) == ACK_BATCH_LINES or size + len(line) + 1 > ACK_BATCH_BYTES):
            bodies.append("\n".join(batch).encode("ascii"))
            batch, size = [], 0
        batch.append(line)
        size += len(line) + 1
    if batch:
        bodies.append("\n".join(batch).encode("ascii"))
    return bodies


def batch_answer(counted: int, refused: int) -> list[Pair]:
    """An Archive's answer to a batch of acknowledgments."""
    return [("acknowledgment.counted", str(counted)), ("acknowledgment.refused", str(refused))]


def batch_counts(text: str) -> tuple[int, int] | None:
    """(counted, refused) of an answer to a batch, or None when it is not one."""
    from ..core.pairlists import parse_pairs

    try:
        pairs = dict(parse_pairs(text))
        return int(pairs["acknowledgment.counted"]), int(pairs["acknowledgment.refused"])
    except (IbistaticError, KeyError, ValueError, TypeError):
        return None


def takes_batches(platform_version: str) -> bool:
    """Whether an Archive announcing `platform_version` (Table 5.2's
    archiveplatformversion) is sent batches of acknowledgments: ibistatic's are."""
    return platform_version.startswith("ibistatic-")


def included(confirmed: bool) -> list[Pair]:
    """The status message (5) of Figure 5.1 after an inclusion."""
    outcome = "successful" if confirmed else "unsuccessful"
    return [("status.archive", "included"), ("status.confirmation", outcome)]


def excluded() -> list[Pair]:
    """The status message (8) of Figure 5.1 after an exclusion."""
    return [("status.archive", "excluded")]


def refused(reason: str) -> list[Pair]:
    """ibistatic's answer to a request it refuses (the seeds give none): the status and
    the reason as a ``{...}`` list of words."""
    return [("status.archive", "refused"), ("notice", tuple(reason.split()))]


#: the most addresses kept in clientinformation.ipaddress: the client and its proxies
IP_LIST_MAX = 8


def ip_list(text: str, limit: int = IP_LIST_MAX) -> tuple[str, ...] | None:
    """The addresses of a ``lista-de-IP`` (Table 6.10: ``IP *(SP IP)``, IPv4 or IPv6; the
    client first, then its successive proxies), or None when `text` is not one or names
    more than `limit` addresses."""
    words = text.split(" ")
    if not 0 < len(words) <= limit:
        return None
    try:
        return tuple(normal_ip(word) for word in words)
    except ValueError:
        return None


def normal_ip(text: str) -> str:
    """`text` as one IP address is written (an IPv4-mapped IPv6 address as the IPv4
    one); ValueError when it is none."""
    import ipaddress

    address = ipaddress.ip_address(text)
    mapped = getattr(address, "ipv4_mapped", None)
    return str(mapped or address)


_PROPERTY_NAMES = ("ibi", "url", "contenttype", "state", "timestamp")
_ATTRIBUTE = {"contenttype": "content_type"}
#: the domains of Table 7.5's properties that the resolver reads (Algorithm 2)
_DOMAINS = {"state": ("Original", "Copy", "Deleted"), "contenttype": ("Data", "Metadata")}
_IDENTITY = ("ibi.archiveservice", "ibi.platformsoftware", "ibi.nextedition")
#: a urlkey is sent back as it came: any word (Table 5.1 writes digits) of bounded length
_URLKEY = re.compile(r"[\x21-\x7e]{1,100}")


def property_list_of(pairs: Iterable[Pair]) -> PropertyList | None:
    """An Archive's urlRequest answer (MONTARLISTADEURL's pairs) as a PropertyList; None
    for the empty answer.  Raises UsageError naming the first pair that is not a
    property, is given twice, or has a value outside its domain: an IBI value is a
    formas-de-ibi (Table 7.4) of valid IBIs, a URL one a browser may be sent to."""
    identity: dict = {"archiveaddress": "", "services": (), "platform": ()}
    relations: dict = {}
    nextedition = urlkey = None
    seen: set[str] = set()
    for name, value in pairs:
        if name in seen:
            raise UsageError(f"pair {name!r}: given twice (the answer contradicts itself)")
        seen.add(name)
        if name == "archiveaddress":
            identity["archiveaddress"] = _word(name, value)
        elif name in _IDENTITY:
            forms = _ibi_forms(name, value, empty=name != "ibi.nextedition")
            if name == "ibi.nextedition":
                nextedition = forms
            else:
                identity["services" if name == "ibi.archiveservice" else "platform"] = forms
        elif name == "urlkey":
            urlkey = _word(name, value)
            if not _URLKEY.fullmatch(urlkey):
                raise UsageError(f"pair 'urlkey': {urlkey[:60]!r}...: longer than 100 characters")
        else:
            head, _, rest = name.partition(".")
            if head not in _PROPERTY_NAMES:
                raise UsageError(f"pair {name!r}: not a property of MONTARLISTADEURL")
            relation = _relation(name, "." + rest if rest else "")
            known = relations.setdefault(relation, {})
            known[_ATTRIBUTE.get(head, head)] = _property_value(name, head, value)
    if not seen:
        return None
    typed = {
        relation: RelationAnswer(
            ibi=_forms(fields.get("ibi")),
            url=fields.get("url"),
            state=fields.get("state"),
            timestamp=fields.get("timestamp"),
            content_type=fields.get("content_type"),
        )
        for relation, fields in relations.items()
    }
    return PropertyList(**identity, relations=typed, nextedition=nextedition, urlkey=urlkey)


def _check_url(name: str, url: str) -> None:
    """A URL an Archive gives is where browsers will be sent: an absolute http(s) URL
    with nothing a browser would reinterpret (never ``javascript:``, never ``//host``)."""
    from urllib.parse import urlsplit

    from ..core.properties import unsafe_url

    problem = unsafe_url(url)
    if problem is None and urlsplit(url).scheme.lower() not in ("http", "https"):
        problem = "no http: or https: scheme"
    if problem is not None:
        raise UsageError(f"pair {name!r}: {url[:100]!r} is no URL to redirect to ({problem})")


def _property_value(name: str, head: str, value):
    """A relation's property value, checked against its domain."""
    if head == "ibi":
        return _ibi_forms(name, value)
    word = _word(name, value)
    if head == "url":
        _check_url(name, word)
    domain = _DOMAINS.get(head)
    if domain is not None and word not in domain:
        raise UsageError(f"pair {name!r}: {word[:60]!r}: expected one of {', '.join(domain)}")
    return word


def _ibi_forms(name: str, value, empty: bool = False) -> tuple[str, ...]:
    """``formas-de-ibi`` (Table 7.4): ``rep <repository>``, ``ibip <IBIp>`` or both, each
    a valid IBI (the resolver asks for them next); ``{}`` where `empty` allows it."""
    forms = value if isinstance(value, tuple) else (value,)
    if not forms and empty:
        return forms
    labels = forms[0::2]
    if len(forms) not in (2, 4) or labels not in (("rep",), ("ibip",), ("rep", "ibip")):
        raise UsageError(f"pair {name!r}: expected {{rep <repository>}}, {{ibip <IBIp>}} or both")
    for text in forms[1::2]:
        try:
            parse_ibi(text)
        except IbistaticError:
            raise UsageError(f"pair {name!r}: {text[:60]!r} is not an IBI") from None
    return forms


def _word(name: str, value) -> str:
    if isinstance(value, tuple):
        raise UsageError(f"pair {name!r}: expected a word, not a {{list}}")
    return value


def _forms(value) -> tuple[str, ...] | None:
    if value is None:
        return None
    return value if isinstance(value, tuple) else (value,)


def _relation(name: str, text: str):
    try:
        return parse_relation(text)
    except IbistaticError:
        raise UsageError(f"pair {name!r}: {text!r} is not a relation (Table 7.5)") from None
