"""``ibistatic mint (--host NAME | --ip ADDR) [--port N] [--at SECONDS]
[--granularity R] [--state FILE] [--json]``: mint a new IBI through the temporal
distributor.

``--host`` mints a repository name (Algorithms 1-4), ``--ip`` an IBIp (Algorithms 4-7).
The distributor's memory is the state file, shared by every process that uses it; by
default ``$XDG_STATE_HOME/ibistatic/<subsystem>.json`` (``~/.local/state/ibistatic/``).
Exit codes: 0 minted, 1 the state file cannot be read or written, 2 bad options.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
from pathlib import Path

from ..core.ibip import as_seconds
from ..core.minting import iso_date
from ..distributor import check_not_future, default_state_path, mint_ibip, mint_repository_name
from ..errors import UsageError
from .inspect import json_seconds

__all__ = ["add_parser", "run"]


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "mint",
        help="mint a new IBI through the temporal distributor",
        description="Mint a new IBI: a repository name from a host name, or an IBIp from "
        "an IP address. Concurrent runs that share a state file never mint the same IBI.",
    )
    subsystem = parser.add_mutually_exclusive_group(required=True)
    subsystem.add_argument(
        "--host", metavar="NAME", help="host name of the subsystem: a repository name"
    )
    subsystem.add_argument(
        "--ip", metavar="ADDR", help="IPv4 or IPv6 address of the subsystem: an IBIp"
    )
    parser.add_argument(
        "--port",
        metavar="N",
        type=int,
        help="port of the subsystem (default 80 for --host, 800 for --ip)",
    )
    parser.add_argument(
        "--at",
        metavar="SECONDS",
        help="the current date in POSIX seconds (decimal; at most 60 s ahead of the clock); no waiting",
    )
    parser.add_argument(
        "--granularity", metavar="R", default="1", help="60, 1, 0.1, 0.01, ... seconds (default 1)"
    )
    parser.add_argument(
        "--state", metavar="FILE", help="the distributor's state file (default: see docs)"
    )
    parser.add_argument("--json", action="store_true", help="print a JSON object")
    parser.set_defaults(func=run)


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def run(args: argparse.Namespace) -> int:
    if args.host is not None and _is_ip(args.host):
        raise UsageError(f"--host {args.host} is an IP address: use --ip to mint an IBIp")
    now = None if args.at is None else check_not_future(as_seconds(args.at, "--at"), "--at")
    target = args.host if args.host is not None else args.ip
    state = Path(args.state) if args.state else default_state_path(target, args.port)
    mint, form = (
        (mint_repository_name, "repository") if args.host is not None else (mint_ibip, "ibip")
    )
    label, date = mint(target, args.port, state_path=state, granularity=args.granularity, now=now)
    if args.json:
        info = {
            form: label,
            "seconds": json_seconds(date),
            "date": iso_date(date),
            "state": str(state),
        }
        print(json.dumps(info))
    else:
        print(label)
    return 0
