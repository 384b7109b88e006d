"""The Archive side of §5.2: turned on, an Archive asks a resolver to include it; turned
off, to exclude it (``ibistatic serve --join``).

The requests block (urllib, a short timeout) and run outside the server's event loop:
the resolver confirms an inclusion by calling the Archive back while the Archive waits
for the answer.  Whatever the resolver answers, or if it cannot be reached, the Archive
keeps serving; :func:`outcome_message` says what happened in one line.
"""

from __future__ import annotations

import socket
import urllib.error
import urllib.request
from dataclasses import dataclass
from urllib.parse import urlsplit

from ..core.pairlists import parse_pairs
from ..errors import IbistaticError, UsageError
from .wire import HOSTPORT, Registration, registration_pairs, request_url

__all__ = ["Membership", "outcome_message", "local_ip_towards", "check_resolver_url"]

#: seconds to wait for a resolver's answer (an inclusion waits for its confirmation too)
REQUEST_TIMEOUT = 10.0


def check_resolver_url(url: str) -> str:
    """`url` when it is an http:// base URL of a resolver service, else a UsageError."""
    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.netloc or parts.query or not parts.path.strip("/"):
        raise UsageError(
            f"--join {url!r}: expected the resolver service's base URL, "
            "http://<resolver>/<service IBI> (e.g. http://urlib.net/J8LNKB5R7W/3FUQHC5)"
        )
    return url.rstrip("/")


def check_advertise(text: str) -> str:
    if not HOSTPORT.fullmatch(text):
        raise UsageError(
            f"--advertise {text!r}: expected HOST:PORT (e.g. archive.example.org:8080)"
        )
    return text


def local_ip_towards(url: str) -> str:
    """The address this machine uses to reach `url`'s host (what the resolver will see)."""
    parts = urlsplit(url)
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect((parts.hostname or "127.0.0.1", parts.port or 80))
            return probe.getsockname()[0]
    except OSError:
        return "127.0.0.1"


def outcome_message(subject: str, status: int | None, text: str) -> tuple[bool, str]:
    """(whether it went as asked, a one-line message) for the resolver's answer to an
    inclusion or exclusion request; `status` None when the resolver was not reached."""
    if status is None:
        return False, f"resolver unreachable ({text}); this Archive keeps serving"
    try:
        pairs = dict(parse_pairs(text))
    except IbistaticError:
        pairs = {}
    archive = pairs.get("status.archive")
    if status == 200 and subject == "inclusionRequest" and archive == "included":
        if pairs.get("status.confirmation") == "successful":
            return True, "included by the resolver (confirmation successful)"
        return False, (
            "included by the resolver, but its confirmation request did not reach this "
            "Archive (status.confirmation unsuccessful): check --advertise"
        )
    if status == 200 and subject == "exclusionRequest" and archive == "excluded":
        return True, "excluded by the resolver"
    notice = pairs.get("notice")
    reason = " ".join(notice) if isinstance(notice, tuple) else notice or text.strip()[:200]
    return False, f"the resolver refused ({status}): {reason}"


@dataclass
class Membership:
    """An Archive's registration at one resolver service."""

    resolver: str  # the resolver service's base URL
    registration: Registration
    timeout: float = REQUEST_TIMEOUT

    def join(self) -> tuple[bool, str]:
        return self._send("inclusionRequest")

    def leave(self) -> tuple[bool, str]:
        return self._send("exclusionRequest")

    def _send(self, subject: str) -> tuple[bool, str]:
        url = request_url(self.resolver, registration_pairs(self.registration, subject))
        try:
            with urllib.request.urlopen(url, timeout=self.timeout) as response:
                status, data = response.status, response.read(65536)
        except urllib.error.HTTPError as error:
            status, data = error.code, error.read(65536)
        except (OSError, ValueError) as error:
            reason = getattr(error, "reason", None) or error
            return outcome_message(subject, None, str(reason))
        return outcome_message(subject, status, data.decode("latin-1"))
