"""The resolver's registrations: who may join (the keys file) and who is included (the state).

The keys file is what the registration e-mails of §5.1 leave at the resolver: a YAML list
of ``{archive-service-ibi, registration-key}``.  The state is the list of included
Archives, with the address each advertised, and every Archive's *rank*: the order in
which it first joined.  An Archive that leaves and comes back (a restart) keeps its rank,
so nothing depends on who rejoined first.  It is written atomically on every change, so
registrations survive a restart; an Archive may come back from another address (§5.2).
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from dataclasses import asdict, dataclass
from pathlib import Path

from ..core.identifiers import parse_ibi
from ..errors import ConfigError, IbistaticError
from .wire import REGISTRATION_KEY, Registration

__all__ = ["load_keys", "Included", "Registry"]


def load_keys(path: Path | str) -> dict[str, str]:
    """{archive service IBI key: registration key} from the keys file at `path`; a
    ConfigError names the file, the entry and what was expected."""
    from ..archive.safe_yaml import DescriptorError, parse_descriptor, read_regular_file

    path = Path(path)
    try:
        data = parse_descriptor(read_regular_file(path))
    except OSError as error:
        raise ConfigError(f"--keys {path}: cannot read: {error.strerror}") from None
    except DescriptorError as error:
        expected = f"; expected {error.expected}" if error.expected else ""
        raise ConfigError(f"--keys {path}: {error.found}{expected}") from None
    if not isinstance(data, list):
        raise ConfigError(
            f"--keys {path}: expected a list of {{archive-service-ibi, registration-key}}"
        )
    keys: dict[str, str] = {}
    for number, entry in enumerate(data, 1):
        where = f"--keys {path}: entry {number}"
        service, key = _entry(entry, where)
        if service in keys:
            raise ConfigError(f"{where}: archive-service-ibi {service!r} is listed twice")
        keys[service] = key
    return keys


def _entry(entry, where: str) -> tuple[str, str]:
    if not isinstance(entry, dict) or set(entry) != {"archive-service-ibi", "registration-key"}:
        raise ConfigError(
            f"{where}: expected exactly the keys archive-service-ibi and registration-key"
        )
    service, key = entry["archive-service-ibi"], entry["registration-key"]
    try:
        service = parse_ibi(str(service)).key
    except IbistaticError:
        raise ConfigError(
            f"{where}: archive-service-ibi {service!r}: expected a repository name or IBIp"
        ) from None
    if isinstance(key, int):
        key = str(key)  # YAML reads 1234567890 as a number
    if not isinstance(key, str) or not REGISTRATION_KEY.fullmatch(key):
        raise ConfigError(
            f"{where}: registration-key {key!r}: expected 10 or more digits, optionally '-' and "
            "10 or more digits (quote it: '1234567890')"
        )
    return service, key


@dataclass(frozen=True)
class Included:
    """An included Archive: its service IBI (as it wrote it) and where it answers."""

    service_ibi: str
    address: str
    ip: str
    email: str
    platform_version: str

    @property
    def base(self) -> str:
        return f"http://{self.address}/{self.service_ibi}"


class Registry:
    """The keys and the included Archives, persisted in `state` (JSON) when given."""

    def __init__(self, keys: dict[str, str], state: Path | str | None = None) -> None:
        self.keys = keys
        self.state = Path(state) if state is not None else None
        self._lock = threading.Lock()
        #: service IBI keys in the order they first joined (leaving keeps the place)
        self.ranks: list[str] = []
        self.included: dict[str, Included] = self._load()

    def check(self, registration: Registration) -> str | None:
        """None when the registration key is the one registered for the service IBI,
        else the reason to refuse it."""
        service = parse_ibi(registration.service_ibi).key
        expected = self.keys.get(service)
        if expected is None:
            return f"archive service {registration.service_ibi} is not registered at this resolver"
        if registration.key != expected:
            return f"wrong registration key for archive service {registration.service_ibi}"
        return None

    def include(self, registration: Registration) -> None:
        """Include (again) the Archive; a returning one keeps its place in the order."""
        entry = Included(
            registration.service_ibi,
            registration.address,
            registration.ip,
            registration.email,
            registration.platform_version,
        )
        key = parse_ibi(registration.service_ibi).key
        with self._lock:
            self.included[key] = entry
            if key not in self.ranks:
                self.ranks.append(key)
            self._save()

    def exclude(self, registration: Registration) -> None:
        with self._lock:
            self.included.pop(parse_ibi(registration.service_ibi).key, None)
            self._save()

    def archives(self) -> list[Included]:
        """The included Archives by rank (the order they first joined)."""
        return [self.included[key] for key in self.ranks if key in self.included]

    def _load(self) -> dict[str, Included]:
        if self.state is None or not self.state.exists():
            return {}
        try:
            data = json.loads(self.state.read_text(encoding="utf-8"))
            entries = [Included(**entry) for entry in data["included"]]
            ranks = [parse_ibi(text).key for text in data.get("ranks", [])]
        except (OSError, ValueError, KeyError, TypeError, IbistaticError) as error:
            raise ConfigError(
                f"--state {self.state}: not a resolver state file ({error})"
            ) from None
        # only Archives whose service IBI is still in the keys file come back; a state
        # written before ranks were kept ranks them in inclusion order
        included = {
            key: entry
            for entry in entries
            if (key := parse_ibi(entry.service_ibi).key) in self.keys
        }
        for key in ranks + list(included):
            if key in self.keys and key not in self.ranks:
                self.ranks.append(key)
        return included

    def _save(self) -> None:
        if self.state is None:
            return
        data = {
            "included": [asdict(entry) for entry in self.included.values()],
            "ranks": list(self.ranks),
        }
        directory = self.state.parent
        descriptor, temporary = tempfile.mkstemp(prefix=".state-", dir=directory)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=1)
        os.replace(temporary, self.state)
