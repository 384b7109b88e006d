"""Deposit: mint a new IBI and create its uniform repository in an Archive, atomically.

One deposit, in order:

1. check everything that can be checked before minting (the subsystem, the files, the
   target, the language, the Dublin Core, the items to link to, an explicit date no more
   than FUTURE_LIMIT seconds ahead of the clock), so bad input never moves the
   distributor's memory;
2. copy the files into ``doc/`` of a workspace, ``<archive>/.ibistatic/incoming/<pid>-<random>/``
   (flocked while the deposit runs; the crawler skips dot-directories, so it is
   invisible), every file fsynced; workspaces of deposits killed midway are removed by
   the next deposit;
3. under the lock of the temporal distributor whose state file is kept with the Archive
   (``<archive>/.ibistatic/distributor/<subsystem>.json``): take the next date, write
   ``item.yaml`` (the IBIp made from the very same date when an IP address is known),
   validate it, write the new memory and rename the finished repository into its place:
   a crawler or a file watcher sees either nothing or the complete repository.  If any
   of this fails, the memory gets its old bytes back: a refused deposit mints nothing;
4. with ``edition_of`` / ``translation_of``, rewrite the linked item's ``item.yaml``
   (temporary file in the workspace, fsync, rename), all of 3 and 4 under an flock on
   ``<archive>/.ibistatic/descriptors.lock`` so that concurrent deposits linking to one
   item never lose each other's update.

The new repository is put in place before the linked descriptor is rewritten: every
moment in between is a valid Archive (a new item not linked yet), never a link to a
repository that does not exist.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import ipaddress
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, MutableMapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from functools import partial
from pathlib import Path
from typing import Any

import yaml

from .archive.crawl import crawl_archive, read_repository
from .archive.descriptors import read_archive_info, read_item
from .archive.roundtrip import rewritten
from .archive.safe_yaml import DescriptorError, read_regular_file
from .core.facts import DC_ELEMENTS
from .core.ibip import as_seconds, check_port, ibip_prefix, make_ibip
from .core.identifiers import Ibi, parse_ibi
from .core.languages import parse_language_tag
from .core.minting import (
    as_granularity,
    iso_date,
    repository_prefix,
    repository_suffix,
    subsystem_name,
)
from .core.model import Item
from .distributor import Reservation, TemporalDistributor, check_not_future
from .errors import IbistaticError, IbiSyntaxError, UsageError

__all__ = [
    "DC_ELEMENTS",
    "DepositError",
    "Deposited",
    "Subsystem",
    "deposit",
    "dublin_core",
    "read_metadata_file",
    "remove_abandoned",
    "resolve_subsystem",
    "state_path",
]

WORKSPACE = ".ibistatic"


class DepositError(IbistaticError):
    """The deposit could not be carried out on disk (not a usage error)."""


@dataclass(frozen=True)
class Subsystem:
    """Who mints: a host name (always, a repository needs a repository name), optionally
    an IP address whose IBIp is recorded too, the port and the distributor's grid."""

    host: str
    ip: str | None
    port: int | None
    granularity: Fraction


@dataclass(frozen=True)
class Deposited:
    """What a deposit made: the new IBI in both forms, where it lives, its date."""

    repository: str
    ibip: str | None
    path: Path
    seconds: Fraction
    timestamp: str
    linked: tuple[Path, ...] = ()  # the item.yaml files rewritten to link to the new item


def state_path(archive: Path, subsystem: Subsystem) -> Path:
    """``<archive>/.ibistatic/distributor/<subsystem>.json``: shared by every deposit."""
    name = subsystem_name(subsystem.host, subsystem.port)
    return Path(archive) / WORKSPACE / "distributor" / f"{name}.json"


# --- the subsystem: options, else archive.yaml ---------------------------------------


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


class _Setting:
    """One setting taken from an option or, failing that, from an archive.yaml key;
    its errors name where the value came from."""

    def __init__(self, descriptor: Path, raw: Mapping, option: str, key: str, value: Any) -> None:
        self.from_option = value is not None
        self.value = value if self.from_option else raw.get(key)
        self.where = option if self.from_option else f"{descriptor}: {key}"

    def fail(self, expected: str) -> UsageError:
        return UsageError(f"{self.where}: found {self.value!r}; expected {expected}")


def _host(setting: _Setting, port: int | None) -> str | None:
    if setting.value is None:
        return None
    if not isinstance(setting.value, str) or not setting.value.strip():
        raise setting.fail("a host name such as mtc-m18.sid.inpe.br")
    host = setting.value.strip()
    if _is_ip(host):
        raise setting.fail(
            "a host name, not an IP address (an IP address goes to --ip / deposit-ip)"
        )
    try:
        repository_prefix(host, port)
    except IbiSyntaxError as error:
        raise UsageError(f"{setting.where}: {error}") from None
    return host


def _ip(setting: _Setting, port: int | None) -> str | None:
    if setting.value is None:
        return None
    if not isinstance(setting.value, str) or not _is_ip(setting.value.strip()):
        raise setting.fail("an IPv4 or IPv6 address such as 150.163.34.243")
    ip = setting.value.strip()
    try:
        ibip_prefix(ip, port)
    except UsageError as error:
        raise UsageError(f"{setting.where}: {error}") from None
    return ip


def _port(setting: _Setting) -> int | None:
    if setting.value is None:
        return None
    try:
        return check_port(setting.value, 80)
    except UsageError:
        raise setting.fail("an integer port from 1 to 65535") from None


def _granularity(setting: _Setting) -> Fraction:
    value = setting.value
    if value is None:
        return Fraction(1)
    if isinstance(value, float):  # YAML reads 0.1 as a float: take its shortest decimal text
        value = Decimal(repr(value))
    try:
        return as_granularity(value)
    except UsageError:
        raise setting.fail("60, 1, 0.1, 0.01, ... seconds") from None


def resolve_subsystem(
    archive: Path,
    raw: Mapping,
    *,
    host: str | None = None,
    ip: str | None = None,
    port: int | None = None,
    granularity: Fraction | Decimal | str | int | None = None,
) -> Subsystem:
    """The subsystem that mints: each of host, IP, port, granularity from its argument,
    else from archive.yaml's ``deposit-host``, ``deposit-ip``, ``deposit-port``,
    ``deposit-granularity`` (default 1 second)."""
    descriptor = Path(archive) / "archive.yaml"
    setting = partial(_Setting, descriptor, raw)
    port_value = _port(setting("--port", "deposit-port", port))
    host_value = _host(setting("--host", "deposit-host", host), port_value)
    ip_setting = setting("--ip", "deposit-ip", ip)
    ip_value = _ip(ip_setting, port_value)
    grid = _granularity(setting("--granularity", "deposit-granularity", granularity))
    if host_value is None and ip_value is not None:
        raise UsageError(
            f"{ip_setting.where} {ip_value} alone cannot name a uniform repository: give --host NAME too, "
            f"or set deposit-host in {descriptor} (the IBIp is then recorded as the item's ibip)"
        )
    if host_value is None:
        raise UsageError(
            f"no subsystem to mint for: give --host NAME (and --ip ADDR for an IBIp too), "
            f"or set deposit-host (and deposit-ip) in {descriptor}"
        )
    return Subsystem(host_value, ip_value, port_value, grid)


# --- checking the input --------------------------------------------------------------


def _read_archive(archive: Path) -> Mapping:
    """archive.yaml as a mapping; an Archive whose descriptor has errors publishes
    nothing, so depositing into it is refused."""
    descriptor = archive / "archive.yaml"
    if not archive.is_dir():
        raise UsageError(f"--archive {archive}: no such directory")
    try:
        raw = yaml.safe_load(descriptor.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"--archive {archive}: no archive.yaml there (not an Archive)") from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise UsageError(f"{descriptor}: cannot be read: {error}") from None
    info, problems = read_archive_info(archive.name, raw)
    if info is None:
        errors = "; ".join(str(p) for p in problems if p.severity == "error")
        raise UsageError(f"{descriptor} has errors, so the Archive publishes nothing: {errors}")
    return raw


def _doc_names(files: Sequence[Path]) -> list[str]:
    """The names the files get inside doc/ (their base names), checked."""
    if not files:
        raise UsageError("no FILE to deposit: give at least one file")
    names: dict[str, Path] = {}
    for file in files:
        path = Path(file)
        if not path.is_file():
            raise UsageError(f"FILE {str(file)!r}: not a regular file")
        if path.name.startswith("."):
            raise UsageError(
                f"FILE {str(file)!r}: a name starting with '.' is hidden from the crawler"
            )
        if path.name in names:
            raise UsageError(
                f"FILE {str(file)!r}: its name {path.name!r} is already taken by {str(names[path.name])!r}"
            )
        names[path.name] = path
    return list(names)


def _target(names: list[str], target: str | None) -> str:
    if target is None:
        if len(names) == 1:
            return names[0]
        raise UsageError(
            f"--target is needed with {len(names)} files: name the default file, one of "
            + ", ".join(names)
        )
    if target not in names:
        raise UsageError(f"--target {target!r} is not one of the files: " + ", ".join(names))
    return target


def _language(option: str, text: str | None) -> str | None:
    if text is None:
        return None
    try:
        return str(parse_language_tag(text))
    except IbiSyntaxError as error:
        raise UsageError(f"{option}: {error}") from None


def _dc_value(element: str, value: Any) -> str:
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise UsageError(
        f"Dublin Core {element}: found {value!r}; expected text (quote it in YAML) or a list of texts"
    )


def dublin_core(metadata: Mapping[str, Any] | None) -> dict[str, str | list[str]]:
    """The ``dublin-core`` mapping of item.yaml: element -> text or list of texts."""
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise UsageError(
            f"metadata: found {type(metadata).__name__}; expected a mapping of Dublin Core element to text"
        )
    out: dict[str, str | list[str]] = {}
    for element, value in metadata.items():
        if element not in DC_ELEMENTS:
            raise UsageError(
                f"Dublin Core element {element!r} unknown; expected one of "
                + ", ".join(DC_ELEMENTS)
            )
        if isinstance(value, list):
            if not value:
                raise UsageError(
                    f"Dublin Core {element}: an empty list; expected at least one text"
                )
            out[element] = [_dc_value(element, v) for v in value]
        else:
            out[element] = _dc_value(element, value)
    return out


class _TextTimestampLoader(yaml.SafeLoader):
    """SafeLoader that keeps timestamps as the text written, so rewriting a descriptor
    does not turn ``2009-07-21T13:23:45Z`` into ``2009-07-21 13:23:45+00:00``."""


_TextTimestampLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def read_metadata_file(path: Path | str) -> dict[str, Any]:
    """The mapping of a ``--metadata`` YAML file (dates kept as the text written)."""
    try:
        raw = yaml.load(Path(path).read_text(encoding="utf-8"), Loader=_TextTimestampLoader)
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"--metadata {path}: cannot be read: {error}") from None
    except yaml.YAMLError as error:
        raise UsageError(f"--metadata {path}: malformed YAML: {error}") from None
    if not isinstance(raw, dict):
        raise UsageError(
            f"--metadata {path}: expected a YAML mapping of Dublin Core element to text"
        )
    return raw


# --- linked items (next-edition, translations) ---------------------------------------


@dataclass(frozen=True)
class _Linked:
    """An item of this Archive that the new item is linked to."""

    option: str
    given: str  # the IBI as the user wrote it
    relative: str  # its repository path inside the Archive
    item: Item


def _find(archive: Path, option: str, text: str) -> _Linked:
    """The item of this Archive that ``text`` (either IBI form) names, validated."""
    try:
        ibi: Ibi = parse_ibi(text)
    except IbiSyntaxError as error:
        raise UsageError(f"{option}: {error}") from None
    relative = None
    if ibi.form == "repository" and (archive.joinpath(*ibi.parts) / "item.yaml").is_file():
        relative = "/".join(ibi.parts)
    else:  # an IBIp, or a name written in another case than on disk: ask the crawler
        found = next((i for i in crawl_archive(archive).items if ibi.key in i.keys()), None)
        relative = found.repository.text if found is not None else None
    if relative is None:
        raise UsageError(f"{option} {text}: no valid item of {archive} has this IBI")
    return _Linked(option, text, relative, _read_linked(archive, option, text, relative))


def _read_linked(archive: Path, option: str, text: str, relative: str) -> Item:
    item, problems = read_repository(archive, archive.name, relative)
    if item is None:
        errors = "; ".join(str(p) for p in problems if p.severity == "error")
        raise UsageError(f"{option} {text}: its item.yaml has errors: {errors}")
    if item.state == "Copy":
        raise UsageError(
            f"{option} {text}: {relative} is a Copy here; link it in the Archive that holds the original"
        )
    return item


def _check_edition(linked: _Linked, item: Item) -> None:
    if item.next_edition is not None:
        raise UsageError(
            f"--edition-of {linked.given}: {linked.relative} already has a next edition, {item.next_edition.text}"
        )


def _check_translation(linked: _Linked, item: Item, language: str) -> None:
    if item.language == language:
        raise UsageError(
            f"--translation-of {linked.given}: {linked.relative} is itself in {language}"
        )
    existing = dict(item.translations).get(language)
    if existing is not None:
        raise UsageError(
            f"--translation-of {linked.given}: {linked.relative} already has a translation in "
            f"{language}, {existing.text}"
        )


# --- the deposit ---------------------------------------------------------------------


def deposit(
    archive: Path | str,
    files: Sequence[Path | str],
    *,
    target: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    language: str | None = None,
    edition_of: str | None = None,
    translation_of: str | None = None,
    host: str | None = None,
    ip: str | None = None,
    port: int | None = None,
    granularity: Fraction | Decimal | str | int | None = None,
    now: Fraction | Decimal | str | int | None = None,
) -> Deposited:
    """Mint a new IBI and create its uniform repository in ``archive`` (module docstring).

    ``now`` is the current date in POSIX seconds (then the distributor never waits);
    None reads the clock.
    """
    archive = Path(archive)
    request = _checked(
        archive,
        files,
        target=target,
        metadata=metadata,
        language=language,
        edition_of=edition_of,
        translation_of=translation_of,
        subsystem=resolve_subsystem(
            archive, _read_archive(archive), host=host, ip=ip, port=port, granularity=granularity
        ),
    )
    if now is not None:
        now = check_not_future(as_seconds(now, "now"), "now")
        if request.subsystem.ip is not None:
            make_ibip(request.subsystem.ip, request.subsystem.port, now)  # a date the IBIp can code
    linking = request.edition is not None or request.original is not None
    with _workspace(archive) as workspace:
        built = _copy_files(workspace / "repository", request.paths, request.names)
        with _descriptors_locked(archive) if linking else nullcontext():
            done, reservation = _mint_and_place(request, built, now)
            if linking:
                _link(request, done.repository, workspace)
    if now is None:
        reservation.wait()  # the label is handed out once its date has come (Algorithm 4)
    return done


def _checked(
    archive: Path, files, *, target, metadata, language, edition_of, translation_of, subsystem
) -> _Request:
    """Everything a deposit can check before minting, as a _Request."""
    paths = [Path(f) for f in files]
    names = _doc_names(paths)
    fields: dict[str, Any] = {"target": _target(names, target)}
    language = _language("--language", language)
    if translation_of is not None and language is None:
        raise UsageError(
            f"--translation-of {translation_of} needs --language: the language of the translation"
        )
    fields["language"] = language
    edition = _find(archive, "--edition-of", edition_of) if edition_of is not None else None
    original = (
        _find(archive, "--translation-of", translation_of) if translation_of is not None else None
    )
    if edition is not None:
        _check_edition(edition, edition.item)
    if original is not None:
        _check_translation(original, original.item, language)
        if original.item.language is not None:
            fields["translations"] = {original.item.language: original.relative}
    fields["dublin-core"] = dublin_core(metadata) or None
    return _Request(archive, subsystem, fields, paths, names, edition, original, language)


@dataclass(frozen=True)
class _Request:
    """A deposit checked and ready to mint."""

    archive: Path
    subsystem: Subsystem
    fields: dict[str, Any]  # item.yaml keys other than state, ibip, timestamp
    paths: list[Path]
    names: list[str]
    edition: _Linked | None
    original: _Linked | None
    language: str | None


def _mint_and_place(
    request: _Request, built: Path, now: Fraction | None
) -> tuple[Deposited, Reservation]:
    """Under the distributor's lock: take the next date, write item.yaml, move the
    repository into place, and only then let the new memory stand.  Whatever fails
    before that leaves the memory as it was (see TemporalDistributor.reserved)."""
    archive, subsystem = request.archive, request.subsystem
    prefix = repository_prefix(subsystem.host, subsystem.port)
    distributor = TemporalDistributor(
        state_path(archive, subsystem), subsystem.granularity, subsystem=prefix
    )
    with distributor.reserved(now) as reservation:
        date = reservation.date
        repository = f"{prefix}/{repository_suffix(date)}"
        ibip = make_ibip(subsystem.ip, subsystem.port, date) if subsystem.ip is not None else None
        timestamp = iso_date(date)
        head = {"state": "Original", "ibip": ibip, "timestamp": timestamp}
        descriptor = {
            key: value for key, value in {**head, **request.fields}.items() if value is not None
        }
        final = archive.joinpath(*repository.split("/"))
        try:
            _write_descriptor(built, descriptor)
            _self_check(archive, repository, built, descriptor, tuple(sorted(request.names)))
            for link in (request.edition, request.original):
                if link is not None:  # another deposit may have linked it since the first check
                    _recheck(archive, link, request.language)
            final.parent.mkdir(parents=True, exist_ok=True)
            if os.path.lexists(final):
                raise _exists(final)
            reservation.commit()
            _move(built, final)
            _fsync_directory(final.parent)
        except OSError as error:
            raise DepositError(f"cannot deposit {repository} into {archive}: {error}") from None
    linked = tuple(
        archive.joinpath(*link.relative.split("/"), "item.yaml")
        for link in (request.edition, request.original)
        if link
    )
    return Deposited(repository, ibip, final, date, timestamp, linked), reservation


# --- the workspace: a hidden folder inside the Archive, one per deposit --------------------

#: A workspace whose lock can be taken and that is older than this (seconds) was left by
#: a process that died; younger ones may be still being locked by their maker.
ABANDONED_AFTER = 60


@contextmanager
def _workspace(archive: Path) -> Iterator[Path]:
    """``<archive>/.ibistatic/incoming/<pid>-<random>/``, flocked while this deposit
    runs and removed after it; those of deposits killed midway are removed first."""
    incoming = archive / WORKSPACE / "incoming"
    try:
        incoming.mkdir(parents=True, exist_ok=True)
        remove_abandoned(incoming)
        workspace = Path(tempfile.mkdtemp(prefix=f"{os.getpid()}-", dir=incoming))
        fd = os.open(workspace, os.O_RDONLY)
    except OSError as error:
        raise DepositError(f"cannot deposit into {archive}: {error}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield workspace
    finally:
        shutil.rmtree(workspace, ignore_errors=True)
        os.close(fd)


def remove_abandoned(incoming: Path) -> list[Path]:
    """Remove the workspaces under `incoming` whose deposit died (their flock is free
    and they are older than ABANDONED_AFTER, or their process is gone); returns them."""
    removed = []
    try:
        entries = sorted(incoming.iterdir())
    except OSError:  # none yet, or not ours to read
        return removed
    for entry in entries:
        try:
            fd = os.open(entry, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            continue  # gone meanwhile, or not ours to judge
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue  # a live deposit holds it
        try:
            if _abandoned(entry):
                shutil.rmtree(entry, ignore_errors=True)
                removed.append(entry)
        finally:
            os.close(fd)
    return removed


def _abandoned(entry: Path) -> bool:
    pid_text = entry.name.partition("-")[0]
    try:
        if time.time() - entry.lstat().st_mtime > ABANDONED_AFTER:
            return True
    except OSError:
        return False
    if not pid_text.isdigit():
        return False
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


def _copy_files(directory: Path, paths: list[Path], names: list[str]) -> Path:
    """``doc/`` with the files (each fsynced), before any IBI is minted: copying is the
    long part and needs no lock."""
    doc = directory / "doc"
    try:
        doc.mkdir(parents=True)  # plain mkdir: the umask's mode, not mkdtemp's 0700
        for source, name in zip(paths, names):
            with open(source, "rb") as reader, open(doc / name, "xb") as writer:
                shutil.copyfileobj(reader, writer, 1 << 20)
                writer.flush()
                os.fsync(writer.fileno())
        _fsync_directory(doc)
    except OSError as error:
        raise DepositError(
            f"cannot copy the files to deposit into {directory.parent}: {error}"
        ) from None
    return directory


def _write_descriptor(directory: Path, descriptor: Mapping) -> None:
    text = yaml.safe_dump(descriptor, allow_unicode=True, sort_keys=False)
    with open(directory / "item.yaml", "x", encoding="utf-8") as writer:
        writer.write(text)
        writer.flush()
        os.fsync(writer.fileno())
    _fsync_directory(directory)


def _self_check(
    archive: Path, repository: str, directory: Path, descriptor: Mapping, names: tuple[str, ...]
) -> None:
    """The descriptor just written must validate with no problem at all."""
    raw = yaml.safe_load((directory / "item.yaml").read_text(encoding="utf-8"))
    _, problems = read_item(archive.name, repository, raw, names, descriptor["timestamp"])
    if problems:
        raise DepositError(
            f"the item.yaml made for {repository} does not validate: "
            + "; ".join(map(str, problems))
        )


def _recheck(archive: Path, link: _Linked, language: str | None) -> None:
    item = _read_linked(archive, link.option, link.given, link.relative)
    if link.option == "--edition-of":
        _check_edition(link, item)
    else:
        _check_translation(link, item, language)


def _link(request: _Request, repository: str, workspace: Path) -> None:
    """Rewrite the linked items' item.yaml to name the new repository (under the
    descriptors lock, taken before the new item was checked and placed)."""
    archive = request.archive
    try:
        if request.edition is not None:
            _rewrite(
                archive,
                request.edition.relative,
                lambda raw: raw.__setitem__("next-edition", repository),
                workspace,
            )
        if request.original is not None:
            change = partial(_add_translation, language=request.language, repository=repository)
            _rewrite(archive, request.original.relative, change, workspace)
    except OSError as error:
        raise DepositError(f"{repository} was deposited, but linking it failed: {error}") from None
    except DescriptorError as error:  # changed by hand since it was checked: left as it is
        raise DepositError(
            f"{repository} was deposited, but linking it failed: {error.found}"
        ) from None


def _add_translation(raw: MutableMapping, language: str, repository: str) -> None:
    translations = raw.get("translations")
    if isinstance(translations, MutableMapping):
        translations[language] = repository  # in place: its layout and comments are kept
    else:
        raw["translations"] = {language: repository}


def _rewrite(
    archive: Path, relative: str, change: Callable[[MutableMapping], None], workspace: Path
) -> None:
    """Rewrite one item.yaml atomically: read, change, temporary file, fsync, rename.
    Only the changed key is new: comments, key order, flow style and quoting are kept
    (archive.roundtrip).  The temporary file is made in the deposit's workspace (same
    file system), so a deposit killed here leaves nothing in the repository."""
    descriptor = archive.joinpath(*relative.split("/"), "item.yaml")
    text = rewritten(read_regular_file(descriptor), change)  # checked as any descriptor
    fd, temporary = tempfile.mkstemp(dir=workspace, prefix="item.yaml.", suffix=".tmp")
    try:
        os.fchmod(fd, stat.S_IMODE(descriptor.stat().st_mode))  # mkstemp makes 0600
        with os.fdopen(fd, "w", encoding="utf-8") as writer:
            writer.write(text)
            writer.flush()
            os.fsync(writer.fileno())
        os.replace(temporary, descriptor)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    _fsync_directory(descriptor.parent)


@contextmanager
def _descriptors_locked(archive: Path) -> Iterator[None]:
    """An exclusive flock on ``<archive>/.ibistatic/descriptors.lock`` (never deleted,
    so every process locks the same inode)."""
    lock = archive / WORKSPACE / "descriptors.lock"
    fd = os.open(lock, os.O_RDONLY | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


# --- renaming without replacing ------------------------------------------------------

_AT_FDCWD = -100
_RENAME_NOREPLACE = 1
_renameat2 = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)


def _move(source: Path, destination: Path) -> None:
    """Rename the finished repository into place, never over an existing path.

    ``os.rename`` would silently replace an empty directory, so Linux's
    ``renameat2(RENAME_NOREPLACE)`` is used where the C library and the file system
    have it; elsewhere an existence check comes first (the distributor's unique labels
    leave only a hand-made directory to collide with).
    """
    if _renameat2 is not None:
        result = _renameat2(
            _AT_FDCWD, os.fsencode(source), _AT_FDCWD, os.fsencode(destination), _RENAME_NOREPLACE
        )
        if result == 0:
            return
        code = ctypes.get_errno()
        if code == errno.EEXIST:
            raise _exists(destination)
        if code not in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP):
            raise DepositError(
                f"cannot move the new repository to {destination}: {os.strerror(code)}"
            )
    if os.path.lexists(destination):
        raise _exists(destination)
    os.rename(source, destination)


def _exists(destination: Path) -> DepositError:
    return DepositError(
        f"{destination} already exists; it was left untouched and nothing was deposited "
        "(was it made by hand, or by another distributor for this subsystem?)"
    )


def _fsync_directory(directory: Path) -> None:
    """Make renames and new entries in ``directory`` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
