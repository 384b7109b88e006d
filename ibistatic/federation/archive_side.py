"""What ``ibistatic serve`` adds to be an Archive of a resolver network (§5.2, §6.2).

- its Archive service (:class:`CountingService`) issues unguessable, expiring urlkeys,
  each bound to the address that asked, and counts an acknowledgment only when it comes
  from a resolver it joined (``--join``'s host) or names (``--ack-from``) with a key
  issued to that resolver, appending it to ``--ack-log``; it takes them one by one (a
  GET, Table 6.11) or in batches (a POST, one a line: :meth:`CountingService.batch`);
- with ``--join``, once it listens it sends ``inclusionRequest`` (advertising the
  address it listens on, or ``--advertise``), and on SIGTERM/SIGINT ``exclusionRequest``
  before it exits.  The inclusion runs in a thread: the resolver calls back
  (``inclusionConfirmationRequest``) while the Archive waits for its answer.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from collections.abc import Mapping
from http import HTTPStatus
from urllib.parse import urlsplit

from ..core.pairlists import decode_query, wire_text
from ..errors import IbistaticError, UsageError
from ..web.service import service_answer, service_view
from .acks import (
    DEFAULT_KEY_SECONDS,
    REQUIRED,
    AckLog,
    ResolverKeys,
    UrlKeys,
    ack_record,
    record_time,
)
from .joining import Membership, check_advertise, check_resolver_url, local_ip_towards
from .wire import (
    ACK_BATCH_BYTES,
    ACK_BATCH_LINES,
    EMAIL,
    IP_ADDRESS,
    Registration,
    batch_answer,
    check_registration_key,
    ip_list,
    normal_ip,
)

__all__ = [
    "add_join_options",
    "ArchiveService",
    "ArchiveSide",
    "CountingService",
    "resolver_addresses",
]

#: the most addresses an Archive reads in clientinformation.ipaddress (Table 6.10 sets none)
ARCHIVE_IP_LIST_MAX = 32

_ANY = ("0.0.0.0", "::", "")


def add_join_options(parser) -> None:
    """The options of ``serve`` for the resolver network."""
    group = parser.add_argument_group("joining a resolver (resolution-system §5)")
    group.add_argument(
        "--join",
        metavar="URL",
        help="the resolver service's base URL (http://<resolver>/J8LNKB5R7W/3FUQHC5): send "
        "inclusionRequest once listening, exclusionRequest on SIGTERM/SIGINT",
    )
    group.add_argument(
        "--registration-key", metavar="KEY", help="the key registered at the resolver"
    )
    group.add_argument(
        "--advertise",
        metavar="HOST:PORT",
        help="the address the resolver reaches this Archive at (default: where it listens)",
    )
    group.add_argument(
        "--admin-email",
        metavar="EMAIL",
        help="archiveadmemailaddress (default: webmaster@<the Archive's address>)",
    )
    group.add_argument(
        "--ack-log",
        metavar="FILE",
        help="append each accepted acknowledgment as a JSON line (see ibistatic acks)",
    )
    group.add_argument(
        "--ack-from",
        action="append",
        default=[],
        metavar="IP",
        help="count acknowledgments from this resolver address too (repeatable; --join's "
        "host is counted from without it)",
    )
    group.add_argument(
        "--urlkey-seconds",
        type=float,
        default=DEFAULT_KEY_SECONDS,
        metavar="S",
        help=f"how long a urlkey can be acknowledged (default: {DEFAULT_KEY_SECONDS:.0f})",
    )


class ArchiveSide:
    """The service and the start/stop hooks of a served site, from ``serve``'s options."""

    def __init__(self, args, views, *, filtered: bool = True) -> None:
        if args.urlkey_seconds <= 0:
            raise UsageError(f"--urlkey-seconds {args.urlkey_seconds}: expected a positive number")
        self.membership = self._membership(args, views) if args.join else None
        if self.membership is None and (args.registration_key or args.advertise):
            raise UsageError("--registration-key and --advertise need --join")
        self.advertise = check_advertise(args.advertise) if args.advertise else None
        resolvers = resolver_addresses(args.join, args.ack_from)
        self.log = AckLog(args.ack_log)
        keys = ResolverKeys(args.urlkey_seconds)
        self.service = CountingService(keys, self.log, filtered, resolvers)
        self._joining: threading.Thread | None = None

    @staticmethod
    def _membership(args, views) -> Membership:
        resolver = check_resolver_url(args.join)
        if not args.registration_key:
            raise UsageError("--join needs --registration-key (the key registered at the resolver)")
        key = check_registration_key(args.registration_key, "--registration-key")
        if len(views) != 1:
            names = ", ".join(view.info.name for view in views)
            raise UsageError(
                f"--join: the site holds {len(views)} Archives ({names}); a site of one Archive "
                "joins a resolver (its archive service IBI is what the resolver registers)"
            )
        info = views[0].info
        email = args.admin_email or f"webmaster@{info.address.split(':')[0]}"
        if not EMAIL.fullmatch(email):
            raise UsageError(f"--admin-email {email!r}: expected an e-mail address")
        from .. import __version__

        registration = Registration(
            "", info.service_ibi.text, "", f"ibistatic-{__version__}", email, key
        )
        return Membership(resolver, registration)

    def on_started(self, host: str, port: int) -> None:
        """Runs once the server listens: send the inclusion request (in a thread)."""
        if self.membership is None:
            return
        advertised = self.advertise or self._listening(host, port)
        name = advertised.rsplit(":", 1)[0].strip("[]")
        ip = name if IP_ADDRESS.fullmatch(name) else local_ip_towards(self.membership.resolver)
        registration = self.membership.registration
        self.membership.registration = Registration(
            advertised, registration.service_ibi, ip, *_rest(registration)
        )
        self._joining = threading.Thread(target=self._say, args=(self.membership.join,))
        self._joining.start()

    def on_stopping(self) -> None:
        """Runs on SIGTERM/SIGINT, before the server stops: the exclusion request."""
        if self.membership is not None:
            if self._joining is not None:
                self._joining.join()
            self._say(self.membership.leave)
        self.log.close()

    def _listening(self, host: str, port: int) -> str:
        if host in _ANY:
            host = local_ip_towards(self.membership.resolver)
        return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"

    def _say(self, send) -> None:
        _, message = send()
        print(
            f"ibistatic serve: --join {self.membership.resolver}: {message}",
            file=sys.stderr,
            flush=True,
        )


def _rest(registration: Registration) -> tuple[str, str, str]:
    return registration.platform_version, registration.email, registration.key


def resolver_addresses(join: str | None, ack_from) -> frozenset[str]:
    """The addresses acknowledgments are counted from: those of --join's host (looked up
    now) and each --ack-from."""
    addresses = set()
    for text in ack_from:
        try:
            addresses.add(normal_ip(text))
        except ValueError:
            raise UsageError(f"--ack-from {text!r}: expected an IP address") from None
    if join:
        parts = urlsplit(join)
        try:
            found = socket.getaddrinfo(parts.hostname, parts.port or 80, proto=socket.IPPROTO_TCP)
        except OSError as error:
            print(
                f"ibistatic serve: --join: cannot look up {parts.hostname} ({error}); "
                "acknowledgments are counted only from --ack-from",
                file=sys.stderr,
            )
            found = []
        addresses.update(normal_ip(entry[4][0].split("%")[0]) for entry in found)
    return frozenset(addresses)


class ArchiveService:
    """The Archive service of a served site, with access counting from anyone.

    Call it as ``service(views, target, client)``: the answer of
    :func:`~ibistatic.web.service.service_answer` with urlkeys from `keys` (a
    :class:`~.acks.UrlKeys`: unguessable, expiring, spent by the one acknowledgment they
    serve) and each acknowledgment of a key it issued counted in `log` (an
    :class:`~.acks.AckLog`); one with any other key gets ``400`` (the seeds define no
    refusal).
    """

    def __init__(self, keys=None, log=None, filtered: bool = True) -> None:
        self.keys = keys if keys is not None else UrlKeys()
        self.log = log if log is not None else AckLog()
        self.filtered = filtered

    def __call__(self, views, target: str, client: str | None = None):
        return service_answer(views, target, self.keys, self.filtered, self.acknowledge, client)

    def acknowledge(self, query: Mapping[str, str], client: str | None) -> str | None:
        """None when the acknowledgment's urlkey was issued here, unexpired and unspent
        (then it is counted), else why it is refused."""
        key = query.get("urlkey", "")
        try:
            record = ack_record(query, client, time.time())
        except IbistaticError as error:
            return str(error)
        if not self.keys.spend(key):
            return f"urlkey {key!r} was not issued by this Archive, has expired or was used"
        self.log.add(record)
        return None


class CountingService(ArchiveService):
    """The Archive service of ``serve``: urlkeys bound to the address that asks
    (:class:`~.acks.ResolverKeys`), acknowledgments counted from `resolvers` only."""

    def __init__(self, keys: ResolverKeys, log: AckLog, filtered: bool, resolvers) -> None:
        super().__init__(keys, log, filtered)
        self.resolvers = frozenset(resolvers)

    def __call__(self, views, target: str, client: str | None = None):
        requester = _normal(client)
        answer = service_answer(
            views, target, lambda: self.keys.issue(requester), self.filtered,
            self.acknowledge, client,
        )  # fmt: skip
        if answer is not None and answer[0] == HTTPStatus.OK:
            problem = _address_problem(target)
            if problem is not None:
                return HTTPStatus.BAD_REQUEST, f"bad service request: {problem}\r\n"
        return answer

    def acknowledge(self, query, client: str | None) -> str | None:
        """None when a resolver of this Archive sent it with a key issued to it (then it is
        counted), else why it is refused."""
        sender = _normal(client)
        batch = _Batch(self.keys, client, sender)  # a batch of one
        refused = self._sender_problem(sender) or batch.refusal(query)
        if refused is not None:
            return refused
        batch.add(query)
        self.log.add_lines(batch.lines, batch.counts)
        return None

    def batch(self, views, target: str, body: bytes, client: str | None):
        """(status, text) for a POST of acknowledgments to `target` (one a line, each the
        query of its GET: docs/protocol.md), else None (not this service's).  Each line
        is counted as its GET would be; the answer says how many were."""
        parts = urlsplit(target)
        if parts.query != "servicesubject=acknowledgment" or not service_view(views, parts.path):
            return None
        sender = _normal(client)
        problem = self._sender_problem(sender) or _batch_problem(body)
        if problem is not None:
            return HTTPStatus.BAD_REQUEST, f"bad service request: {problem}\r\n"
        batch = _Batch(self.keys, client, sender)
        for line in body.decode("ascii").split("\n"):
            batch.read(line.rstrip("\r"))
        self.log.add_lines(batch.lines, batch.counts)
        return HTTPStatus.OK, wire_text(batch_answer(len(batch.lines), batch.refused))

    def _sender_problem(self, sender: str) -> str | None:
        if sender in self.resolvers:
            return None
        named = ", ".join(sorted(self.resolvers)) or "none: see --join, --ack-from"
        return f"acknowledgments are counted from this Archive's resolvers ({named}), not {sender}"


class _Batch:
    """Acknowledgments from one resolver, checked and written as the ack log's lines:
    a GET's one, or the lines of a POSTed batch, with what they share worked out once.
    The redirects of one cached answer send lines that differ only in the client's
    address and the persistent URL, so each distinct pair is decoded, each address list
    checked and each value written as JSON once per batch (dicts that the batch's own
    size bounds; ResolverKeys remembers the urlkeys it accepted)."""

    def __init__(self, keys: ResolverKeys, client: str | None, sender: str) -> None:
        self.keys, self.sender = keys, sender
        self.lines: list[str] = []  # the accepted records, as the ack log's JSON lines
        self.counts: dict[str, int] = {}  # accepted per item
        self.refused = 0
        self._pairs: dict[str, tuple] = {}  # a line's "name=value" -> (name, value), () refused
        self._addresses: dict[str, bool] = {}
        self._json: dict[str, str] = {}
        self._resolver = json.dumps(client, ensure_ascii=False)
        self._time = json.dumps(record_time(time.time()))

    def read(self, line: str) -> None:
        """Add the acknowledgment a line of a batch holds (the query of its GET), or
        count it refused."""
        query = self._query(line)
        if (
            query is None
            or query.get("servicesubject") != "acknowledgment"
            or self.refusal(query) is not None
        ):
            self.refused += 1
        else:
            self.add(query)

    def refusal(self, query: dict) -> str | None:
        """Why the acknowledgment is not counted, or None: a pair Table 6.11 requires is
        missing, its address list is no list of IPs, or its urlkey was not issued here to
        the sender (or has expired)."""
        for name in REQUIRED:
            if not query.get(name):
                return f"acknowledgment without {name} (Table 6.11 requires it)"
        addresses = query["clientinformation.ipaddress"]
        fine = self._addresses.get(addresses)
        if fine is None:
            fine = self._addresses[addresses] = ip_list(addresses, ARCHIVE_IP_LIST_MAX) is not None
        if not fine:
            return f"clientinformation.ipaddress {addresses[:100]!r}: {_IP_LIST}"
        key = query["urlkey"]
        if not self.keys.check(key, self.sender):
            return f"urlkey {key[:60]!r} was not issued by this Archive to {self.sender}, or has expired"
        return None

    def add(self, query: dict) -> None:
        """The accepted acknowledgment's record, as a line of the ack log."""
        ibi = query.get("ibi", "")
        values = (
            query["clientinformation.ipaddress"],
            query["contenttype"],
            ibi,
            query.get("state", ""),
            query["url"],
            query["url.persistent"],
        )
        ip, kind, item, state, url, persistent = map(self._as_json, values)
        record = (ip, kind, item, self._resolver, state, self._time, url, persistent)
        self.lines.append(_RECORD % record)
        self.counts[ibi] = self.counts.get(ibi, 0) + 1

    def _query(self, line: str) -> dict | None:
        """dict(decode_query(line)), None where it refuses the line: a query's pairs are
        read one by one (decode_query reads each "&"-separated pair on its own)."""
        query = {}
        for piece in line.split("&") if line else ():
            pair = self._pairs.get(piece)
            if pair is None:
                pair = self._pairs[piece] = _pair(piece)
            if not pair:
                return None
            query[pair[0]] = pair[1]
        return query

    def _as_json(self, value: str) -> str:
        text = self._json.get(value)
        if text is None:
            text = self._json[value] = json.dumps(value, ensure_ascii=False)
        return text


#: an ack record (:func:`~.acks.ack_record`) as AckLog writes it: json.dumps(record,
#: ensure_ascii=False, sort_keys=True), its fields in that order
_RECORD = (
    '{"clientinformation.ipaddress": %s, "contenttype": %s, "ibi": %s, "resolver": %s, '
    '"state": %s, "time": %s, "url": %s, "url.persistent": %s}\n'
)


def _pair(piece: str) -> tuple:
    """The one (name, value) that decode_query reads in `piece`, else ()."""
    try:
        pairs = decode_query(piece)
    except IbistaticError:
        return ()
    return pairs[0] if len(pairs) == 1 else ()


def _batch_problem(body: bytes) -> str | None:
    if len(body) > ACK_BATCH_BYTES or body.count(b"\n") >= ACK_BATCH_LINES:
        return f"a batch holds at most {ACK_BATCH_LINES} acknowledgments, {ACK_BATCH_BYTES} bytes"
    if not body.isascii():
        return "a batch of acknowledgments is ASCII (Table 4.1's escapes)"
    return None


_IP_LIST = "expected IP addresses separated by spaces, the client's first (Table 6.10)"


def _normal(client: str | None) -> str:
    try:
        return normal_ip(client or "")
    except ValueError:
        return client or ""


def _address_problem(target: str) -> str | None:
    """What is wrong with a urlRequest's clientinformation.ipaddress (Table 6.10), if any."""
    if "clientinformation.ipaddress=" not in target or "servicesubject=urlRequest" not in target:
        return None
    query = dict(decode_query(urlsplit(target).query))
    addresses = query.get("clientinformation.ipaddress")
    if addresses is None or query.get("servicesubject") != "urlRequest":
        return None
    if ip_list(addresses, ARCHIVE_IP_LIST_MAX) is None:
        return f"clientinformation.ipaddress {addresses[:100]!r}: {_IP_LIST}"
    return None
