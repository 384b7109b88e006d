"""``ibistatic acks``: accesses per item from an Archive's acknowledgment log."""

from __future__ import annotations

import json
import sys


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "acks",
        help="summarise an ack log (ibistatic serve --ack-log): accesses per item",
        description="Read the JSON lines that ibistatic serve --ack-log appends, one per "
        "acknowledgment a resolver sent (Table 6.11), and print the accesses per item, most "
        "accessed first.",
    )
    parser.add_argument("file", metavar="FILE", help="the ack log")
    parser.add_argument("--json", action="store_true", help="print a JSON list instead")
    parser.set_defaults(func=run)


def run(args) -> int:
    from ..errors import UsageError
    from ..federation.acks import summarise

    try:
        with open(args.file, encoding="utf-8", errors="replace") as handle:
            items, problems = summarise(handle, args.file)
    except OSError as error:
        raise UsageError(f"{args.file}: cannot read: {error.strerror}") from None
    for problem in problems:
        print(f"ibistatic acks: {problem}", file=sys.stderr)
    if args.json:
        print(json.dumps([item.as_json() for item in items], indent=1))
    else:
        print(f"{'accesses':>8}  {'last':20}  ibi")
        for item in items:
            print(f"{item.count:>8}  {item.last:20}  {item.ibi}")
        total = sum(item.count for item in items)
        print(f"{total:>8}  in all, {len(items)} item(s)")
    return 1 if problems else 0
