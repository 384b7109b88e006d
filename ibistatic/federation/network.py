"""The resolver's side of the network: the Archives it asks, their health, and thanks.

Each question of the resolution process (:func:`~ibistatic.core.resolution.resolution_process`)
is put to the Archives by :mod:`.rounds` (the holder rule, the budget of a resolution):
the included Archives over HTTP (a ``urlRequest`` with the pairs Table 6.6 lets a
resolver pass on), each local index (``--index``) in process.  Any Archive may be
misconfigured, slow or hostile, so a :class:`RemoteArchive`

- reads at most :attr:`ResolverLimits.answer_bytes` of an answer, within its timeout;
- drops an answer that is not a pair list of valid properties, or whose claims do not
  fit its registration (an ``ibi.archiveservice`` other than its own, an ``ibi`` other
  than the one asked): the resolver reads it as no answer, never as a 500;
- holds at most :attr:`ResolverLimits.in_flight` requests at once, and after
  :attr:`ResolverLimits.failures` failures in a row is left alone for a while (then one
  request probes it), so a hung Archive costs the resolver neither sockets nor time;
- receives its acknowledgments in batches, through a queue bounded by bytes
  (:mod:`.ack_queue`), one request per batch (single acknowledgments to an Archive
  that is not ibistatic's, or that refuses a batch as a method it does not know).

HTTP connections are pooled and kept alive (:mod:`.http_client`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from functools import cached_property

from ..core.identifiers import parse_ibi
from ..core.outcome import Resolution
from ..core.pairlists import encode_query, escape_query_value, parse_pairs
from ..core.properties import PropertyList, property_list
from ..core.relations import parse_relation
from ..core.resolution import wanted_relations
from ..errors import IbistaticError
from .ack_queue import AckBatches
from .wire import (
    ack_batches,
    acknowledgment_pairs,
    batch_counts,
    property_list_of,
    request_url,
)

__all__ = [
    "ResolverLimits",
    "SourceInfo",
    "RemoteArchive",
    "LocalArchive",
    "Client",
    "Answered",
    "Thanks",
    "PeerError",
    "acknowledgment",
]

log = logging.getLogger("ibistatic.resolver")


@dataclass(frozen=True)
class ResolverLimits:
    """What one resolution, one Archive and the whole resolver may cost (docs/production.md,
    "The resolver's limits")."""

    timeout: float = 2.0  # seconds an Archive may take to answer one request
    deadline: float = 5.0  # seconds one resolution may take, every round together
    max_requests: int = 64  # urlRequests one resolution may send (then one acknowledgment)
    max_rounds: int = 16  # questions one resolution may ask (IBIs followed, plus one)
    answer_bytes: int = 256 * 1024  # bytes read of one answer's body (Example 7.2: 4 KB)
    in_flight: int = 64  # requests waiting for one Archive at once
    failures: int = 3  # failures in a row after which an Archive is left alone
    rest: float = 5.0  # seconds it is left alone, doubled at each failed probe ...
    rest_max: float = 60.0  # ... up to this
    ack_queue_bytes: int = 4 * 1024 * 1024  # acknowledgments waiting for one Archive
    ack_batch: int = 256  # acknowledgments sent to one Archive in one request ...
    ack_interval: float = 0.25  # ... or this many seconds after the first waited
    ack_senders: int = 8  # single acknowledgments sent to one Archive at once
    cache_bytes: int = 32 * 1024 * 1024  # the answer cache, in bytes


class PeerError(OSError):
    """An Archive's answer that cannot be used: it costs that answer only."""


@dataclass(frozen=True)
class SourceInfo:
    """What the resolution process reads of a source: its name and archiveaddress."""

    name: str
    address: str


class Client:
    """Pooled keep-alive HTTP GETs with a per-request timeout."""

    def __init__(
        self, timeout: float = 2.0, limit: int = ResolverLimits.answer_bytes, via: str = ""
    ) -> None:
        from .http_client import HttpClient

        self.timeout = timeout
        self._http = HttpClient(timeout, limit, via=via)

    async def start(self) -> None:
        pass  # connections are made when first needed

    async def close(self) -> None:
        await self._http.close()

    async def get(self, url: str, timeout: float | None = None) -> tuple[int, str]:
        """(status, text) of a GET of `url`; raises OSError (a timeout too)."""
        status, data = await self._http.get(url, timeout)
        return status, data.decode("latin-1")

    async def post(self, url: str, body: bytes) -> tuple[int, str]:
        """(status, text) of a POST of `body` (text/plain) to `url`; raises OSError."""
        status, data = await self._http.request("POST", url, body)
        return status, data.decode("latin-1")


class Health:
    """An Archive's recent answers: after `failures` in a row it rests (is not asked),
    then one request probes it; each failed probe doubles the rest."""

    def __init__(self, limits: ResolverLimits) -> None:
        self.limits = limits
        self.failures = 0
        self.until = 0.0
        self.rest = limits.rest
        self.probing = False

    @property
    def resting(self) -> bool:
        return self.failures >= self.limits.failures and time.monotonic() < self.until

    def usable(self) -> bool:
        """Whether to ask it now (taking the probe when its rest is over)."""
        if self.failures < self.limits.failures:
            return True
        if self.probing or time.monotonic() < self.until:
            return False
        self.probing = True
        return True

    def answered(self) -> None:
        self.failures, self.rest, self.probing = 0, self.limits.rest, False

    def failed(self) -> None:
        self.failures += 1
        self.probing = False
        if self.failures >= self.limits.failures:
            self.until = time.monotonic() + self.rest
            self.rest = min(2 * self.rest, self.limits.rest_max)

    def dropped(self) -> None:
        """A request given up for another reason (the resolution had decided)."""
        self.probing = False


class Throttle:
    """At most one log line per subject every `seconds`: a hostile Archive cannot flood
    the log (one line per request), and its first misdeed is still reported."""

    def __init__(self, seconds: float = 10.0, size: int = 4096) -> None:
        self.seconds, self.size = seconds, size
        self._last: dict[object, float] = {}

    def __call__(self, subject) -> bool:
        now = time.monotonic()
        if now - self._last.get(subject, -self.seconds) < self.seconds:
            return False
        if len(self._last) >= self.size:
            self._last.clear()
        self._last[subject] = now
        return True


throttle = Throttle()


class RemoteArchive:
    """An included Archive, asked over HTTP at its service's base URL."""

    def __init__(
        self,
        name: str,
        base: str,
        client: Client,
        limits: ResolverLimits = ResolverLimits(),
        service_key: str | None = None,
        batches: bool = True,
    ) -> None:
        self.info = SourceInfo(name, name)
        self.base, self.client, self.limits = base, client, limits
        self.holder_id = service_key or _service_key(name)
        self.health = Health(limits)
        self.in_flight = 0
        self.announced = batches  # whether its join said it takes batches (Table 5.2)
        self.batches = batches  # whether it is sent batches now (False after a 405)
        self.acks = AckBatches(
            self._deliver,
            size=limits.ack_queue_bytes,
            batch=limits.ack_batch,
            interval=limits.ack_interval,
            name=name,
        )

    def usable(self) -> bool:
        return self.health.usable()

    async def ask(self, pairs, steps) -> PropertyList | None:
        """Its answer (None: the empty answer); PeerError when there is none to use."""
        if self.in_flight >= self.limits.in_flight:
            raise PeerError(f"{self.in_flight} requests are already waiting for it")
        self.in_flight += 1
        try:
            answer = await self._answer(pairs)
        except asyncio.CancelledError:
            self.health.dropped()
            raise
        finally:
            self.in_flight -= 1
        if answer is not None:
            self._check_fit(answer, dict(pairs).get("parsedibiurl.ibi", ""))
        return answer

    async def _answer(self, pairs) -> PropertyList | None:
        try:
            status, text = await self.client.get(request_url(self.base, pairs))
            if status != 200:
                raise OSError(f"HTTP {status}")
        except OSError as error:
            self.health.failed()
            raise PeerError(str(error) or "no answer") from None
        self.health.answered()  # it answers: whatever it says, it is not down
        try:
            return property_list_of(parse_pairs(text))
        except IbistaticError as error:
            raise PeerError("not a property list: " + str(error).splitlines()[0]) from None

    def _check_fit(self, answer: PropertyList, asked: str) -> None:
        """An Archive speaks for itself and about the IBI asked, or not at all."""
        services = {parse_ibi(form).key for form in answer.services[1::2]}
        if services and self.holder_id not in services:
            raise PeerError(f"its answer names another archive service ({answer.services[1]})")
        forms = answer.ibi
        if forms and asked and parse_ibi(asked).key not in {parse_ibi(f).key for f in forms[1::2]}:
            raise PeerError(f"asked about {asked}, it answered about {forms[1]}")

    def answering(self, answer: PropertyList) -> "Reply":
        return Reply(self, SourceInfo(self.info.name, answer.archiveaddress or self.info.name))

    def acknowledge(self, thanks: "Thanks", client_ip: str, persistent_url: str) -> bool:
        """Queue the acknowledgment of one redirect (never waited for); False when it is
        dropped (the Archive rests, or its queue is full)."""
        if self.health.resting:
            self.acks.lost(1, "the Archive rests")
            return False
        return self.acks.offer(thanks.query(client_ip, persistent_url))

    async def _deliver(self, lines: list[str]) -> None:
        """Send queued acknowledgments: in batches, or one by one to an Archive that
        takes no batches."""
        for body in ack_batches(lines):
            if not (self.batches and await self._post(body)):
                await self._send_singly(body.decode("ascii").split("\n"))

    async def _post(self, body: bytes) -> bool:
        """POST one batch; False when the Archive does not take batches (it knows no
        POST: an older ibistatic), which it is then not sent again."""
        count = body.count(b"\n") + 1
        try:
            status, text = await self.client.post(
                self.base + "?servicesubject=acknowledgment", body
            )
        except OSError as error:  # it may have counted them: never sent twice
            self.health.failed()
            self.acks.lost(count, f"not delivered: {error}")
            return True
        self.health.answered()
        if status in (405, 501):
            self.batches = False
            log.warning("Archive %s takes no batch of acknowledgments: sent singly", self.info.name)
            return False
        counts = batch_counts(text) if status == 200 else None
        if counts is None or counts[1]:
            if throttle((self.holder_id, "ack refused")):
                refused = f"{counts[1]} of {count}" if counts else f"HTTP {status}: {text[:200]}"
                log.warning("Archive %s refused acknowledgments: %s", self.info.name, refused)
        return True

    async def _send_singly(self, lines: list[str]) -> None:
        step = self.limits.ack_senders
        for start in range(0, len(lines), step):
            await asyncio.gather(*(self._send_one(line) for line in lines[start : start + step]))

    async def _send_one(self, line: str) -> None:
        try:
            status, text = await self.client.get(self.base + "?" + line)
        except OSError as error:
            self.health.failed()
            self.acks.lost(1, f"not delivered: {error}")
            return
        self.health.answered()
        if status != 200 and throttle((self.holder_id, "ack refused")):
            log.warning("Archive %s refused an acknowledgment: %s", self.info.name, text[:200])

    async def close(self) -> None:
        await self.acks.close(self.limits.timeout)


def _service_key(name: str) -> str:
    try:
        return parse_ibi(name).key
    except IbistaticError:
        return name


@dataclass(frozen=True)
class Reply:
    """A source as one of its answers describes it (its archiveaddress), without
    changing the source that other resolutions share."""

    source: object
    info: SourceInfo


class LocalArchive:
    """An Archive of a local index (``--index``): answered in process, no network."""

    def __init__(self, view) -> None:
        self.view = view
        self.info = SourceInfo(view.info.name, view.info.address)
        self.holder_id = "local:" + view.info.name

    async def ask(self, pairs, steps) -> PropertyList | None:
        from ..core.identifiers import ibi_key
        from ..core.relations import parse_verb_list

        query = dict(pairs)
        verbs = query.get("parsedibiurl.verblist")
        if verbs:
            verbs = parse_verb_list(" ".join(verbs) if isinstance(verbs, tuple) else verbs)
        filepath = query.get("parsedibiurl.filepath", "").removeprefix("/")
        return property_list(
            self.view,
            ibi_key(query["parsedibiurl.ibi"]),
            filepath=filepath,
            verbs=verbs,
            relations=wanted_relations(self.view, steps),
            urlkey=str,
        )


@dataclass(frozen=True)
class Thanks:
    """What an acknowledgment of one redirect says, but for the client's address and
    the persistent URL it asked (a cached redirect is thanked with the same key)."""

    source: object
    content_type: str
    forms: tuple[str, ...] | None
    state: str
    url: str
    urlkey: str

    def query(self, client_ip: str, persistent_url: str) -> str:
        """The acknowledgment as a query (Table 4.1's escapes)."""
        template = self._template
        if not template:
            return encode_query(self.pairs(client_ip, persistent_url))
        head, middle, tail = template
        ip, url = escape_query_value(client_ip), escape_query_value(persistent_url)
        return f"{head}{ip}{middle}{url}{tail}"  # one string made, not four

    @cached_property
    def _template(self) -> tuple[str, ...]:
        """The query cut where the client's address and the persistent URL go: what
        every redirect served from one answer shares is escaped once.  () when the
        answer's own values hold the mark of the cut (then each query is made whole)."""
        parts = tuple(encode_query(self.pairs("\x00", "\x00")).split("%00"))
        return parts if len(parts) == 3 else ()

    def pairs(self, client_ip: str, persistent_url: str) -> list:
        return acknowledgment_pairs(
            client_ip,
            self.content_type,
            self.forms,
            self.state,
            self.url,
            persistent_url,
            self.urlkey,
        )


@dataclass(frozen=True)
class Answered:
    """A resolution and, when an Archive on the network gave its URL, what to send that
    Archive's acknowledgment with; `complete` when every Archive asked answered (an
    outcome worth caching)."""

    resolution: Resolution
    source: object | None = None
    answer: PropertyList | None = None
    complete: bool = True


def answered_by(result: Resolution, replies, complete: bool) -> Answered:
    """The Answered for `result`, given the (reply, answer) pairs of its last round."""
    if result.url is None:
        return Answered(result, complete=complete)
    for reply, answer in replies:
        source = getattr(reply, "source", reply)
        if reply.info.name == result.archive and hasattr(source, "acknowledge"):
            return Answered(result, source, answer, complete)
    return Answered(result, complete=complete)


def acknowledgment(answered: Answered, client_ip: str, persistent_url: str):
    """The pairs of Table 6.11 for `answered`, or None when there is no one to thank
    (an alert, a local index, an answer without urlkey)."""
    thanks = thanks_for(answered)
    return thanks.pairs(client_ip, persistent_url) if thanks is not None else None


def thanks_for(answered: Answered) -> Thanks | None:
    """What to acknowledge `answered` with, or None (nothing to thank for)."""
    result, answer = answered.resolution, answered.answer
    if answered.source is None or answer is None or not answer.urlkey:
        return None
    known = answer.answer(parse_relation(result.relation))
    forms = known.ibi if known is not None else None
    return Thanks(
        answered.source,
        result.content_type or "Data",
        forms,
        result.state or "Original",
        result.url,
        answer.urlkey,
    )


def unavailable(chain: list[str], message: str, asked) -> Resolution:
    """The alert ``unavailable`` with its reason (a holder that did not answer, a limit)."""
    from ..core.outcome import kept_chain

    return Resolution(None, "unavailable", chain=kept_chain(chain), message=message, asked=asked)
