"""``ibistatic resolve URL``: resolve a persistent URL from a built index, no network."""

from __future__ import annotations

import json


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "resolve",
        help="resolve a persistent URL (or a bare IBI with modifiers) from a built index",
        description="Resolve a persistent URL, or a bare IBI with modifiers, path and query, "
        "from a built index with no network. Prints the target URL, or the alert (exit 1).",
    )
    parser.add_argument(
        "url",
        help="e.g. 'https://ibi.example.org/8JMKD3MGP8W/35MMLL8!:(oai_dc)' or '8JMKD3MGP8W/35MMLL8!'",
    )
    parser.add_argument(
        "--index",
        metavar="DIR",
        help="a built site or its index/ folder (default: the configured output)",
    )
    parser.add_argument(
        "--accept-language",
        metavar="TAGS",
        help="the browser's Accept-Language, e.g. 'pt-BR,pt;q=0.8'",
    )
    parser.add_argument(
        "--client-ip",
        metavar="IP",
        help="clientinformation.ipaddress (accepted; URLs do not depend on it)",
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.set_defaults(func=run)


def run(args) -> int:
    from ..resolver import Resolver

    resolver = Resolver(args.index or _default_index())
    result = resolver.resolve(args.url, args.accept_language, args.client_ip)
    if args.json:
        print(json.dumps(result.as_json(), ensure_ascii=False))
    elif result.url is not None:
        print(result.url)
    else:
        print(f"{result.alert}: {result.message}")
    return 0 if result.url is not None else 1


def _default_index() -> str:
    from ..config import load_config

    return str(load_config().output)
