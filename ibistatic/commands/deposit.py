"""``ibistatic deposit FILE... --archive DIR [--host NAME] [--ip ADDR] [--port N]
[--granularity R] [--target NAME] [--language TAG] [--metadata FILE.yaml] [--title T]
[--creator C ...] [--dc element=value ...] [--edition-of IBI] [--translation-of IBI]
[--json]``: mint a new IBI and create its uniform repository (docs/cli/deposit.md).

Exit codes: 0 deposited, 1 the distributor state or the Archive cannot be written,
2 bad options or input (the message names the option or the archive.yaml key).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ..core.ibip import as_seconds
from ..deposit import Deposited, deposit, read_metadata_file
from ..distributor import check_not_future
from ..errors import UsageError
from .inspect import json_seconds

__all__ = ["add_parser", "run", "collect_metadata"]


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "deposit",
        help="mint a new IBI and create its uniform repository in an Archive",
        description="Mint a new IBI through the temporal distributor kept with the Archive and "
        "create its uniform repository (item.yaml and doc/) in one atomic step.",
    )
    parser.add_argument(
        "files", nargs="+", metavar="FILE", help="the files of the item, copied into doc/"
    )
    parser.add_argument(
        "--archive",
        metavar="DIR",
        required=True,
        help="the Archive (the directory holding archive.yaml)",
    )
    parser.add_argument(
        "--host",
        metavar="NAME",
        help="host name of the subsystem (default: deposit-host of archive.yaml)",
    )
    parser.add_argument(
        "--ip",
        metavar="ADDR",
        help="IP address of the subsystem: also record an IBIp (default: deposit-ip)",
    )
    parser.add_argument(
        "--port", metavar="N", help="port of the subsystem (default: deposit-port, else 80 / 800)"
    )
    parser.add_argument(
        "--granularity",
        metavar="R",
        help="60, 1, 0.1, 0.01, ... seconds (default: deposit-granularity, else 1)",
    )
    parser.add_argument(
        "--at",
        metavar="SECONDS",
        help="the current date in POSIX seconds (decimal; at most 60 s ahead of the clock); no waiting",
    )
    parser.add_argument(
        "--target", metavar="NAME", help="the default file (needed with several files)"
    )
    parser.add_argument(
        "--language", metavar="TAG", help="language of the content: pt, en, pt-BR, ..."
    )
    parser.add_argument(
        "--metadata",
        metavar="FILE.yaml",
        help="Dublin Core: a YAML mapping of element to text or list of texts",
    )
    parser.add_argument("--title", metavar="T", help="Dublin Core title")
    parser.add_argument(
        "--creator", metavar="C", action="append", help="Dublin Core creator (repeatable)"
    )
    parser.add_argument(
        "--dc",
        metavar="element=value",
        action="append",
        help="any Dublin Core element (repeatable)",
    )
    parser.add_argument(
        "--edition-of",
        metavar="IBI",
        help="the new item is the next edition of this item of the Archive",
    )
    parser.add_argument(
        "--translation-of",
        metavar="IBI",
        help="the new item translates this item of the Archive into --language",
    )
    parser.add_argument("--json", action="store_true", help="print a JSON object")
    parser.set_defaults(func=run)


def _port(text: str | None) -> int | None:
    if text is None:
        return None
    if not text.isascii() or not text.isdigit():
        raise UsageError(f"--port {text!r}: expected an integer from 1 to 65535")
    return int(text)


def collect_metadata(args: argparse.Namespace) -> dict[str, Any] | None:
    """Dublin Core from --metadata, then --title, --creator and --dc, each of which
    replaces the element of that name (several --dc of one element make a list)."""
    elements: dict[str, Any] = read_metadata_file(args.metadata) if args.metadata else {}
    if args.title is not None:
        elements["title"] = args.title
    if args.creator:
        elements["creator"] = args.creator if len(args.creator) > 1 else args.creator[0]
    given: dict[str, list[str]] = {}
    for pair in args.dc or ():
        element, equals, value = pair.partition("=")
        if not equals or not element.strip():
            raise UsageError(f"--dc {pair!r}: expected element=value, e.g. --dc subject=astronomy")
        given.setdefault(element.strip(), []).append(value)
    for element, values in given.items():
        elements[element] = values if len(values) > 1 else values[0]
    return elements or None


def _report(done: Deposited, as_json: bool) -> str:
    if as_json:
        return json.dumps(
            {
                "repository": done.repository,
                "ibip": done.ibip,
                "path": str(done.path),
                "seconds": json_seconds(done.seconds),
                "timestamp": done.timestamp,
                "linked": [str(p) for p in done.linked],
            },
            ensure_ascii=False,
        )
    lines = [("repository", done.repository), ("ibip", done.ibip), ("path", str(done.path))]
    lines += [("linked", str(p)) for p in done.linked]
    return "\n".join(f"{key:<11} {value}" for key, value in lines if value is not None)


def run(args: argparse.Namespace) -> int:
    done = deposit(
        Path(args.archive),
        [Path(f) for f in args.files],
        target=args.target,
        metadata=collect_metadata(args),
        language=args.language,
        edition_of=args.edition_of,
        translation_of=args.translation_of,
        host=args.host,
        ip=args.ip,
        port=_port(args.port),
        granularity=args.granularity,
        now=None if args.at is None else check_not_future(as_seconds(args.at, "--at"), "--at"),
    )
    print(_report(done, args.json))
    return 0
