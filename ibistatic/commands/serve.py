"""``ibistatic serve``: the built site and real redirects, the Archive service, over HTTP."""

from __future__ import annotations

import sys

from ..web.limits import Limits

#: what `serve` and `resolver` run on, installed by the extra ibistatic[serve]
SERVER_MODULES = ("uvicorn", "httptools")


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="serve a built site with real redirects and the Archive service (HTTP)",
        description="Serve a built site over HTTP: its files as a static host would, persistent "
        "URLs with real redirects (302, 303 for metadata), alerts as pages with 404, 409 or 410, "
        "and /<archive service IBI>?servicesubject=... with the Archive-service answers of the "
        "standard. Reloads when the index is rebuilt.",
    )
    parser.add_argument(
        "site",
        nargs="?",
        metavar="SITE",
        help="a built site or its index/ folder (default: the configured output)",
    )
    parser.add_argument("--index", metavar="DIR", help="the same as SITE (kept for old scripts)")
    parser.add_argument(
        "--bind", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)"
    )
    parser.add_argument(
        "--port", type=int, default=8000, help="port (default: 8000; 0 picks a free one)"
    )
    parser.add_argument("--log", action="store_true", help="log every request to stderr")
    parser.add_argument(
        "--head-timeout",
        type=_seconds,
        default=Limits.head_timeout,
        metavar="SECONDS",
        help="drop a client that has not sent a whole request head in this time "
        f"(default: {Limits.head_timeout:g})",
    )
    parser.add_argument(
        "--keep-alive",
        type=_seconds,
        default=Limits.keep_alive,
        metavar="SECONDS",
        help=f"close an idle kept-alive connection after this time (default: {Limits.keep_alive:g})",
    )
    parser.add_argument(
        "--send-timeout",
        type=_seconds,
        default=Limits.send_timeout,
        metavar="SECONDS",
        help="drop a client that reads nothing of an answer for this time "
        f"(default: {Limits.send_timeout:g})",
    )
    parser.add_argument(
        "--client-connections",
        type=_connections,
        default=Limits.max_client_connections,
        metavar="N",
        help="connections one client address (IPv6: its /64) may hold at once, per worker; "
        "more get 503 (default: %(default)s; 0: no limit, e.g. behind a proxy that limits)",
    )
    parser.add_argument(
        "--workers",
        type=_workers,
        default=1,
        metavar="N",
        help="processes answering on the one port, one per core (default: 1)",
    )
    parser.add_argument(
        "--no-filter",
        dest="filtered",
        action="store_false",
        help="answer urlRequest with the whole property list (FILTRARLISTADEURL is optional)",
    )
    from ..federation.archive_side import add_join_options

    add_join_options(parser)  # --join, --registration-key, --advertise, --ack-log, ...
    parser.set_defaults(func=run)


def _seconds(text: str) -> float:
    import argparse

    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value <= 3600:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected seconds, more than 0 and at most 3600"
        )
    return value


def _connections(text: str) -> int | None:
    import argparse

    if not text.isdigit() or int(text) > 1_000_000:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected a number of connections, 0 (no limit) to 1000000"
        )
    return int(text) or None


def _workers(text: str) -> int:
    import argparse

    if not text.isdigit() or not 1 <= int(text) <= 64:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a number of processes, 1 to 64")
    return int(text)


def run(args) -> int:
    from ..errors import IbistaticError, UsageError, need_extra

    need_extra(SERVER_MODULES, "serve", "ibistatic serve")
    from ..serve import make_app
    from ..web.server import run_server

    if args.site and args.index and args.site != args.index:
        raise UsageError(
            f"serve: give the site once (SITE {args.site!r} or --index {args.index!r})"
        )
    site = args.site or args.index
    if site is None:
        from ..config import load_config

        site = str(load_config().output)
    app = make_app(site, filtered=args.filtered)
    from ..federation.archive_side import ArchiveSide

    side = ArchiveSide(args, app.resolver.views, filtered=args.filtered)  # urlkeys, acks, --join
    app.service = side.service

    def started(host: str, port: int) -> None:
        shown = f"[{host}]" if ":" in host else host
        print(
            f"ibistatic serve: resolving from {site} at http://{shown}:{port}/ (Ctrl-C stops)",
            file=sys.stderr,
            flush=True,
        )
        side.on_started(host, port)

    try:
        limits = Limits(
            head_timeout=args.head_timeout,
            keep_alive=args.keep_alive,
            send_timeout=args.send_timeout,
            max_client_connections=args.client_connections,
        )
        run_server(
            app,
            args.bind,
            args.port,
            on_started=started,
            on_stopping=side.on_stopping,
            limits=limits,
            access_log=args.log,
            workers=args.workers,
        )
    except OSError as error:
        raise IbistaticError(
            f"serve: cannot listen on {args.bind} port {args.port}: {error.strerror or error}"
        ) from None
    return 0
