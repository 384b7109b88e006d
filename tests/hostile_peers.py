"""Hostile Archives on loopback for the resolver's tests and benchmark: real HTTP servers
(asyncio, in a thread of their own), each answering as its behaviour says: claiming every
IBI, hanging, dripping, streaming a gigabyte (one 64 KiB buffer sent again and again:
nothing that large is ever allocated), garbage, contradictions, endless chains, loops."""

from __future__ import annotations

import asyncio
import itertools
import threading
import urllib.error
import urllib.request
from collections.abc import Callable
from urllib.parse import unquote, urlsplit

from federation_helpers import SERVICE
from ibistatic.core.pairlists import decode_query
from ibistatic.federation.wire import Registration, registration_pairs, request_url

CHUNK = b"a" * 65536
GIGABYTE = 1 << 30


class Peer:
    """An Archive-to-be at 127.0.0.1:`port` whose service IBI is `service`; `behaviour`
    (peer, query) -> an async action(writer) answers each request."""

    def __init__(self, service: str, behaviour: Callable) -> None:
        self.service, self.behaviour = service, behaviour
        self.asked: list[dict] = []  # the decoded queries, in order
        self.sent = 0  # body bytes written, all requests together
        self.connections = 0
        self._ready = threading.Event()
        self._loop = asyncio.new_event_loop()
        threading.Thread(target=self._run, daemon=True).start()
        self._ready.wait(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._server = self._loop.run_until_complete(
            asyncio.start_server(self._handle, "127.0.0.1", 0, limit=1 << 16)
        )
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()

    async def _handle(self, reader, writer) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                target = head.split(b" ", 2)[1].decode("latin-1")
                query = dict(decode_query(urlsplit(target).query))
                self.asked.append(query)
                await self.behaviour(self, query)(writer)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            pass
        except Exception:  # a peer that breaks stops answering, as a real one would
            pass
        finally:
            writer.close()

    def urlrequests(self) -> list[dict]:
        return [q for q in self.asked if q.get("servicesubject") == "urlRequest"]

    def close(self) -> None:
        self._loop.call_soon_threadsafe(self._server.close)


# --- actions


def reply(text: str, status: int = 200):
    async def action(writer) -> None:
        body = text.encode("latin-1")
        writer.write(b"HTTP/1.1 %d X\r\nContent-Length: %d\r\n\r\n%s" % (status, len(body), body))
        await writer.drain()

    return action


def raw(data: bytes):
    async def action(writer) -> None:
        writer.write(data)
        await writer.drain()
        raise ConnectionResetError  # and hang up

    return action


def hang():
    async def action(writer) -> None:
        await asyncio.sleep(3600)

    return action


def stream(peer: Peer, total: int = GIGABYTE):
    """A 200 with Content-Length `total`, sent a chunk at a time until the client goes."""

    async def action(writer) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % total)
        left = total
        while left > 0:
            writer.write(CHUNK)
            peer.sent += len(CHUNK)
            left -= len(CHUNK)
            await writer.drain()

    return action


def drip(peer: Peer, interval: float = 0.05):
    """A head, then one byte of the body every `interval` seconds, for ever."""

    async def action(writer) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
        while True:
            writer.write(b"a")
            peer.sent += 1
            await writer.drain()
            await asyncio.sleep(interval)

    return action


# --- answers


def forms(ibi: str) -> str:
    return f"{{ibip {ibi}}}" if ibi.count("/") == 1 else f"{{rep {ibi}}}"


def claim(peer: Peer, ibi: str, url: str | None = None, extra: str = "") -> str:
    """A property list that claims `ibi` as an original held by `peer`."""
    url = url or f"http://evil.example.org/{unquote(ibi)}"
    return (
        f"archiveaddress evil.example.org\r\nibi {forms(ibi)}\r\n"
        f"ibi.archiveservice {{rep {peer.service}}}\r\nibi.platformsoftware {{}}\r\n"
        f"state Original\r\ncontenttype Data\r\ntimestamp 2020-01-01T00:00:00Z\r\n"
        f"url {url}\r\nurl.lastedition {url}\r\nurlkey 1234567890-1234567890" + extra
    )


def slowly(answer: Callable[[Peer, dict], object], seconds: float):
    """`answer`, given after `seconds`."""

    def later(peer: Peer, query: dict):
        text = answer(peer, query)

        async def action(writer) -> None:
            await asyncio.sleep(seconds)
            await reply(text)(writer)

        return action

    return later


def archive(answer: Callable[[Peer, dict], object]):
    """A behaviour: confirm inclusions, answer urlRequests with `answer(peer, query)` (a
    text, or an action), acknowledge the rest."""

    def behaviour(peer: Peer, query: dict):
        subject = query.get("servicesubject")
        if subject == "inclusionConfirmationRequest":
            return reply("confirmation yes")
        if subject == "urlRequest":
            answered = answer(peer, query)
            return reply(answered) if isinstance(answered, str) else answered
        return reply("notice {acknowledgment received}")

    return behaviour


def claims_everything(peer: Peer, query: dict) -> str:
    return claim(peer, query["parsedibiurl.ibi"])


def endless_chain(prefix: str):
    """Each IBI's next edition is a new one: x/0 -> x/1 -> x/2 ... (never an end)."""
    counter = itertools.count()

    def answer(peer: Peer, query: dict) -> str:
        ibi = query["parsedibiurl.ibi"]
        if not ibi.lower().startswith(prefix):
            return ""  # it holds its own chain only
        following = f"{prefix}/2020/01.01.00.{next(counter) % 60:02d}.{next(counter) % 60:02d}"
        return _edition(peer, ibi, following)

    return answer


def loop_between(first: str, second: str):
    def answer(peer: Peer, query: dict) -> str:
        ibi = query["parsedibiurl.ibi"].lower()
        if ibi not in (first, second):
            return ""
        return _edition(peer, ibi, second if ibi == first else first)

    return answer


def _edition(peer: Peer, ibi: str, following: str) -> str:
    return (
        f"archiveaddress evil.example.org\r\nibi {forms(ibi)}\r\n"
        f"ibi.archiveservice {{rep {peer.service}}}\r\nibi.platformsoftware {{}}\r\n"
        f"ibi.nextedition {forms(following)}\r\nstate Original"
    )


#: answers no resolver may take, each a different way
GARBAGE = [
    "\x00\x01\x02 not a pair list {{{",
    "archiveaddress evil.example.org\r\nibi.nextedition {garbage}\r\nstate Original",
    "archiveaddress evil.example.org\r\nibi.nextedition not/an/ibi\r\nstate Original",
    "archiveaddress a\r\nstate Original\r\nstate Copy",  # contradicts itself
    "archiveaddress a\r\nstate Maybe",
    "archiveaddress a\r\nurl javascript:alert(1)",
    "archiveaddress a\r\ncolour blue",
    "x" * 100000,
]


def garbage(peer: Peer, query: dict):
    """Each urlRequest gets the next of GARBAGE, raw non-HTTP bytes, or an HTTP 500."""
    number = len(peer.urlrequests())
    choice = number % (len(GARBAGE) + 2)
    if choice == len(GARBAGE):
        return raw(b"SSH-2.0-OpenSSH_9.9\r\n\xff\xfe garbage")
    if choice == len(GARBAGE) + 1:
        return reply("internal error", 500)
    return GARBAGE[choice]


def impersonator(victim_service: str):
    """Claims every IBI in the name of another Archive's service."""

    def answer(peer: Peer, query: dict) -> str:
        return claim(peer, query["parsedibiurl.ibi"]).replace(peer.service, victim_service)

    return answer


def off_topic(peer: Peer, query: dict) -> str:
    """Answers about another IBI than the one asked."""
    return claim(peer, "evil.example.org/other/2020/01.01.00.00")


# --- joining


def join(resolver_port: int, peer: Peer, key: str, subject: str = "inclusionRequest") -> str:
    """Send `peer`'s inclusion (or exclusion) request; the resolver's answer text."""
    return join_as(resolver_port, f"127.0.0.1:{peer.port}", peer.service, key, subject)


def join_as(
    resolver_port: int, address: str, service: str, key: str, subject: str = "inclusionRequest"
) -> str:
    """An inclusion (or exclusion) request of `service` at `address`; the answer text."""
    registration = Registration(
        address, service, "127.0.0.1", "hostile-1", "x@evil.example.org", key
    )
    url = request_url(
        f"http://127.0.0.1:{resolver_port}/{SERVICE}", registration_pairs(registration, subject)
    )
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.read().decode("ascii")
    except urllib.error.HTTPError as error:
        return error.read().decode("ascii")
