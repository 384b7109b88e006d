"""``ibistatic parse-url URL``: the pairs a resolver extracts from a persistent URL."""

from __future__ import annotations

import sys


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "parse-url",
        help="print the parsedibiurl.* pairs of a persistent URL (Table 6.6)",
        description="Parse a persistent URL (or a bare IBI with modifier, path and query) "
        "and print what the resolver extracts from it (resolution-system §6.1, Table 6.6, "
        "Example 6.8) as a pair list, one pair per line, names sorted. The shapes urlib.net "
        "and INPE's Archives print (/ibi/<IBI>, /rep/<IBI>, /rep-/<IBI>, /goto/<IBI>, "
        "/goto-/<IBI>, ibi:<IBI>, /col/<IBI>/doc/<file>) name their IBI; a note on stderr "
        "says which shape was read and which query pairs were ignored. A URL that does "
        "not parse exits with status 2 and a message pointing at the character.",
    )
    parser.add_argument(
        "url", metavar="URL", help="a persistent URL, e.g. 'http://urlib.net/LK47B6W/362SFKH+'"
    )
    parser.add_argument(
        "--base",
        metavar="URL",
        help="the resolver's base URL, when it has a path (https://example.org/ibi/); "
        "by default any scheme://host[:port]/",
    )
    parser.add_argument("--client-ip", metavar="IP", help="also print clientinformation.ipaddress")
    parser.add_argument(
        "--accept-language",
        metavar="TAGS",
        help="also print clientinformation.languagepreference (an Accept-Language value)",
    )
    parser.set_defaults(func=run)


def run(args) -> int:
    from ..core.pairlists import serialize_pairs
    from ..core.urls import parse_persistent_url, parsed_pairs

    url = parse_persistent_url(args.url, args.base)
    pairs = parsed_pairs(url, client_ip=args.client_ip, language_preference=args.accept_language)
    sys.stdout.write(serialize_pairs(sorted(pairs, key=lambda pair: pair[0])) + "\n")
    for note in notes(url):
        sys.stderr.write(f"note: {note}\n")
    return 0


def notes(url) -> list[str]:
    """What parse-url read but does not print as a pair: the shape before the IBI and
    the query pairs that are not the resolver's business (Table 6.3)."""
    from ..core.urls import REQUIRED_STATUS, VERB_LIST

    found = []
    if url.shape:
        found.append(
            f"{url.shape!r} before the IBI is a shape urlib.net and INPE's Archives print; read as the IBI"
        )
    ignored = [name for name, _ in url.query if name not in (REQUIRED_STATUS, VERB_LIST)]
    if ignored:
        found.append("ignored query pairs (not the resolver's business): " + ", ".join(ignored))
    return found
