"""``ibistatic properties IBI --archive DIR``: what Archive DIR answers to urlRequest."""

from __future__ import annotations

import sys


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "properties",
        help="print the property list an Archive answers for an IBI (Algorithm 2)",
        description="Print the pair list that Archive DIR answers to a urlRequest for IBI "
        "(resolution-system §7), names sorted, in the text/plain pair-list format: the bytes "
        "'ibistatic serve' answers (CRLF between pairs, nothing after the last; nothing "
        "at all for an IBI the Archive does not hold). With --verbs the answer is "
        "filtered as FILTRARLISTADEURL does.",
    )
    parser.add_argument("ibi", help="the IBI, in either form")
    parser.add_argument(
        "--archive", required=True, metavar="DIR", help="the Archive's root directory"
    )
    parser.add_argument(
        "--verbs",
        metavar="VERBLIST",
        help="a verb list such as 'GetLastEdition GetMetadata(oai_dc)'",
    )
    parser.add_argument(
        "--filepath", default="", metavar="PATH", help="a file of the item (parsedibiurl.filepath)"
    )
    parser.add_argument(
        "--client-ip",
        metavar="IP",
        help="clientinformation.ipaddress (accepted; URLs do not depend on it)",
    )
    parser.add_argument(
        "--site-url",
        metavar="URL",
        help="base URL of the published site (default: from ibistatic.yaml)",
    )
    parser.set_defaults(func=run)


def run(args) -> int:
    from pathlib import Path

    from ..archive.load import load_archives
    from ..core.identifiers import parse_ibi
    from ..core.pairlists import in_charset, wire_text
    from ..core.properties import filter_property_list, property_list, property_pairs
    from ..core.relations import parse_verb_list

    ibi = parse_ibi(args.ibi)
    verbs = parse_verb_list(args.verbs) if args.verbs else None
    root = Path(args.archive)
    loaded = load_archives([root], _site_url(args, root))
    for problem in loaded.problems:
        print(problem, file=sys.stderr)
    if not loaded.infos:
        return 1
    view = loaded.view(loaded.infos[0].name)
    answer = property_list(view, ibi.key, filepath=args.filepath, verbs=verbs)
    if verbs is not None:
        answer = filter_property_list(answer, verbs)
    sys.stdout.write(wire_text(in_charset(property_pairs(answer), view.info.pair_list_charset)))
    sys.stdout.flush()
    return 0


def _site_url(args, archive_root) -> str:
    from pathlib import Path

    """--site-url, else that of an ibistatic.yaml here or beside the archive."""
    if args.site_url:
        return args.site_url if args.site_url.endswith("/") else args.site_url + "/"
    from ..config import CONFIG_NAME, load_config

    here = Path.cwd() / CONFIG_NAME
    for candidate in (
        here,
        archive_root.resolve().parent / CONFIG_NAME,
        archive_root.resolve().parent.parent / CONFIG_NAME,
    ):
        if candidate.exists():
            return load_config(candidate).site_url
    return "https://ibi.example.org/"
