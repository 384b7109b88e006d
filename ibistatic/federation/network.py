"""The resolver's side of the network: ask every Archive at once, follow, acknowledge.

Each question of the resolution process (:func:`~ibistatic.core.resolution.resolution_process`)
goes to every source at once: the included Archives over HTTP (a ``urlRequest`` with
the pairs Table 6.6 lets a resolver pass on), each local index (``--index``) in process.
An Archive that is down, refuses, answers something that is not a pair list, or does not
answer within the timeout is read as the empty answer, so it costs at most the timeout.
HTTP connections are pooled and kept alive (:mod:`.http_client`).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, replace

from ..core.outcome import Resolution
from ..core.pairlists import parse_pairs
from ..core.properties import PropertyList, property_list
from ..core.relations import parse_relation
from ..core.resolution import resolution_process, wanted_relations
from ..core.urls import PersistentUrl, parsed_pairs
from ..errors import IbistaticError
from .wire import acknowledgment_pairs, property_list_of, request_url, url_request_pairs

__all__ = ["SourceInfo", "RemoteArchive", "LocalArchive", "Client", "Answered", "resolve_over"]

log = logging.getLogger("ibistatic.resolver")
#: the most bytes read of one Archive answer (Example 7.2's whole list is 4 KB)
MAX_ANSWER_BYTES = 1 << 20


@dataclass(frozen=True)
class SourceInfo:
    """What the resolution process reads of a source: its name and archiveaddress."""

    name: str
    address: str


class Client:
    """Pooled keep-alive HTTP GETs with a per-request timeout."""

    def __init__(self, timeout: float = 2.0) -> None:
        from .http_client import HttpClient

        self.timeout = timeout
        self._http = HttpClient(timeout, MAX_ANSWER_BYTES)

    async def start(self) -> None:
        pass  # connections are made when first needed

    async def close(self) -> None:
        await self._http.close()

    async def get(self, url: str) -> tuple[int, str]:
        """(status, text) of a GET of `url`; raises OSError (a timeout too)."""
        status, data = await self._http.get(url)
        return status, data.decode("latin-1")


class RemoteArchive:
    """An included Archive, asked over HTTP at its service's base URL."""

    def __init__(self, name: str, base: str, client: Client) -> None:
        self.info = SourceInfo(name, name)
        self.base, self.client = base, client

    async def ask(self, pairs, steps) -> PropertyList | None:
        url = request_url(self.base, pairs)
        try:
            status, text = await self.client.get(url)
            if status != 200:
                raise OSError(f"HTTP {status}")
            answer = property_list_of(parse_pairs(text))
        except (OSError, IbistaticError) as error:
            log.warning("Archive %s: no answer (%s)", self.info.name, error or "timeout")
            return None
        if answer is not None:
            self.info = SourceInfo(self.info.name, answer.archiveaddress or self.info.name)
        return answer

    async def acknowledge(self, pairs) -> None:
        try:
            status, text = await self.client.get(request_url(self.base, pairs))
            if status != 200:
                log.warning("Archive %s refused an acknowledgment: %s", self.info.name, text)
        except OSError as error:
            log.warning("Archive %s: acknowledgment not delivered (%s)", self.info.name, error)


class LocalArchive:
    """An Archive of a local index (``--index``): answered in process, no network."""

    def __init__(self, view) -> None:
        self.view = view
        self.info = SourceInfo(view.info.name, view.info.address)

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
class Answered:
    """A resolution and, when an Archive on the network gave its URL, what to send that
    Archive's acknowledgment with."""

    resolution: Resolution
    source: object | None = None
    answer: PropertyList | None = None


async def resolve_over(
    sources, parsed: PersistentUrl, client_ip: str, accept_language: str | None, languages
) -> Answered:
    """The resolution process over `sources` (asked at once, read in their order)."""
    process = resolution_process(parsed.ibi, parsed.verbs, parsed.required_status, languages)
    question = next(process)
    while True:
        key, step_verbs, steps = question
        asked = replace(parsed, ibi=_ibi(key), verbs=step_verbs)
        pairs = url_request_pairs(parsed_pairs(asked, client_ip, accept_language))
        replies = await asyncio.gather(*(source.ask(pairs, steps) for source in sources))
        answers = [(s, a) for s, a in zip(sources, replies) if a is not None]
        try:
            question = process.send(answers)
        except StopIteration as done:
            result = replace(done.value, asked=parsed.verbs.steps)
            return _answered(result, answers)


def _ibi(key: str):
    from ..core.identifiers import parse_ibi

    return parse_ibi(key)


def _answered(result: Resolution, answers) -> Answered:
    if result.url is None:
        return Answered(result)
    for source, answer in answers:
        if source.info.name == result.archive and hasattr(source, "acknowledge"):
            return Answered(result, source, answer)
    return Answered(result)


def acknowledgment(answered: Answered, client_ip: str, persistent_url: str):
    """The pairs of Table 6.11 for `answered`, or None when there is no one to thank
    (an alert, a local index, an answer without urlkey)."""
    result, answer = answered.resolution, answered.answer
    if answered.source is None or answer is None or not answer.urlkey:
        return None
    known = answer.answer(parse_relation(result.relation))
    forms = known.ibi if known is not None else None
    return acknowledgment_pairs(
        client_ip,
        result.content_type or "Data",
        forms,
        result.state or "Original",
        result.url,
        persistent_url,
        answer.urlkey,
    )
