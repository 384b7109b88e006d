"""``ibistatic serve``: a loopback resolver with real redirects and the Archive service."""

from __future__ import annotations

import sys


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="answer persistent URLs with real redirects from a built index (loopback)",
        description="Serve a built index over HTTP: persistent URLs get 302 (303 for metadata), "
        "alerts an HTML page with 404, 409 or 410; /<archive service IBI>?servicesubject=... gets "
        "the Archive-service answers of the standard. Reloads when the index is rebuilt.",
    )
    parser.add_argument(
        "--index",
        metavar="DIR",
        help="a built site or its index/ folder (default: the configured output)",
    )
    parser.add_argument(
        "--bind", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)"
    )
    parser.add_argument(
        "--port", type=int, default=8000, help="port (default: 8000; 0 picks a free one)"
    )
    parser.add_argument("--log", action="store_true", help="log every request to stderr")
    parser.add_argument(
        "--no-filter",
        dest="filtered",
        action="store_false",
        help="answer urlRequest with the whole property list (FILTRARLISTADEURL is optional)",
    )
    parser.set_defaults(func=run)


def run(args) -> int:
    from ..serve import make_server

    index = args.index
    if index is None:
        from ..config import load_config

        index = str(load_config().output)
    server = make_server(index, args.bind, args.port, quiet=not args.log, filtered=args.filtered)
    host, port = server.server_address[:2]
    print(
        f"ibistatic serve: resolving from {index} at http://{host}:{port}/ (Ctrl-C stops)",
        file=sys.stderr,
        flush=True,
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
