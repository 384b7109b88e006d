"""``ibistatic inspect IBI [--json]``: name the form of an IBI, check it, show its parts.

For an IBIp it also decodes the IP address, the port and the date (Algorithms 5-7
backwards).  Exit codes: 0 the IBI is valid, 2 it does not parse (the message shows
the offending character).
"""

from __future__ import annotations

import argparse
import json
import math
from fractions import Fraction

from ..core.ibip import decode_ibip
from ..core.identifiers import Ibi, Ibip, parse_ibi
from ..core.minting import iso_date, suffix_seconds
from ..core.urls import hint
from ..errors import IbiSyntaxError

__all__ = ["add_parser", "run", "describe"]


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "inspect",
        help="check an IBI and show its parts",
        description="Name the form of an IBI (repository name or IBIp), check its grammar "
        "and show its parts; for an IBIp, the IP address, port and date it was made from.",
    )
    parser.add_argument("ibi", metavar="IBI", help="a repository name or an IBIp")
    parser.add_argument("--json", action="store_true", help="print a JSON object")
    parser.set_defaults(func=run)


def json_seconds(seconds: Fraction | None) -> int | float | None:
    """POSIX seconds as a JSON number: an integer when whole (exact text is in "date")."""
    if seconds is None:
        return None
    return int(seconds) if seconds == math.floor(seconds) else float(seconds)


def describe(ibi: Ibi | str) -> dict[str, object]:
    """Everything ``inspect`` shows about an IBI, as JSON-ready values."""
    value = _parse_with_hint(ibi) if isinstance(ibi, str) else ibi
    info: dict[str, object] = {
        "form": value.form,
        "ibi": value.text,
        "key": value.key,
        "prefix": value.prefix,
        "suffix": value.suffix,
    }
    if isinstance(value, Ibip):
        decoded = decode_ibip(value)
        info.update(ip=decoded.ip, port=decoded.port, seconds=decoded.seconds)
    else:
        info.update(
            parts=list(value.parts),
            subdomain=value.subdomain,
            word=value.word,
            port=value.port,
            port_separator=value.port_separator,
            seconds=suffix_seconds(value.suffix),
        )
    seconds = info["seconds"]
    info["date"] = None if seconds is None else iso_date(seconds)
    info["seconds"] = json_seconds(seconds)
    return info


def _parse_with_hint(text: str) -> Ibi:
    """parse_ibi, with a hint when the text is a persistent URL, a DOI or an IBI with a
    catalog's series code after it."""
    try:
        return parse_ibi(text)
    except IbiSyntaxError as error:
        raise IbiSyntaxError(
            error.text, error.position, error.expected, error.what, hint(text)
        ) from None


def _shown(value: object) -> str:
    if value is None or value == "":
        return "-"
    if isinstance(value, list):
        return " | ".join(value)
    return str(value)


def run(args: argparse.Namespace) -> int:
    info = describe(args.ibi)
    if args.json:
        print(json.dumps(info, ensure_ascii=False))
    else:
        width = max(map(len, info))
        for name, value in info.items():
            print(f"{name:<{width}}  {_shown(value)}")
    return 0
