"""``ibistatic resolver``: the live resolver of §5-§8, fanning out to Archives that join it."""

from __future__ import annotations

import sys

from ..federation.wire import DEFAULT_SERVICE_IBI


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "resolver",
        help="run a resolver that Archives join (ibistatic serve --join) and that asks them all",
        description="A resolver of the IBI resolution system: Archives listed in the keys file "
        "join it with inclusionRequest; persistent URLs at any other path are asked of every "
        "included Archive (and each --index) at once, selected, followed and acknowledged.",
    )
    parser.add_argument(
        "--keys",
        required=True,
        metavar="FILE",
        help="YAML list of {archive-service-ibi, registration-key}: the Archives that may join",
    )
    parser.add_argument(
        "--bind", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)"
    )
    parser.add_argument(
        "--port", type=int, default=8080, help="port (default: 8080; 0 picks a free one)"
    )
    parser.add_argument(
        "--service-ibi",
        default=DEFAULT_SERVICE_IBI,
        metavar="IBI",
        help=f"the resolver service's IBI: its path (default: {DEFAULT_SERVICE_IBI})",
    )
    parser.add_argument(
        "--index",
        action="append",
        default=[],
        metavar="SITE",
        help="a built site (or its index/) whose Archives are asked too, with no network "
        "(repeatable; asked before the included Archives)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=2.0,
        metavar="S",
        help="seconds an Archive may take to answer (default: 2)",
    )
    parser.add_argument(
        "--cache-seconds",
        type=float,
        default=3.0,
        metavar="S",
        help="keep answers this long (default: 3; 0 disables; cached answers are not acknowledged)",
    )
    parser.add_argument(
        "--state",
        metavar="FILE",
        help="where the included Archives are kept across restarts (default: none)",
    )
    parser.add_argument("--log", action="store_true", help="log every request to stderr")
    parser.set_defaults(func=run)


def run(args) -> int:
    from ..errors import UsageError
    from ..federation.registry import Registry, load_keys
    from ..federation.resolver_app import ResolverApp
    from ..index.reader import Index

    if args.timeout <= 0:
        raise UsageError(f"--timeout {args.timeout}: expected a positive number of seconds")
    if args.cache_seconds < 0:
        raise UsageError(f"--cache-seconds {args.cache_seconds}: expected 0 or more seconds")
    registry = Registry(load_keys(args.keys), args.state)
    views = [view for site in args.index for view in Index(site).views()]
    app = ResolverApp(
        registry,
        service_ibi=_service_ibi(args.service_ibi),
        views=views,
        timeout=args.timeout,
        cache_seconds=args.cache_seconds,
    )

    def started(host: str, port: int) -> None:
        print(
            f"ibistatic resolver: service at http://{host}:{port}/{app.service_ibi}, "
            f"{len(registry.archives())} Archive(s) included, {len(views)} local (Ctrl-C stops)",
            file=sys.stderr,
            flush=True,
        )

    from ..errors import IbistaticError
    from ..web.server import run_server

    try:
        run_server(app, args.bind, args.port, on_started=started, access_log=args.log)
    except OSError as error:
        raise IbistaticError(
            f"resolver: cannot listen on {args.bind} port {args.port}: {error.strerror or error}"
        ) from None
    return 0


def _service_ibi(text: str) -> str:
    from ..core.identifiers import parse_ibi
    from ..errors import IbistaticError, UsageError

    try:
        return parse_ibi(text).text
    except IbistaticError as error:
        raise UsageError(f"--service-ibi {text!r}: {str(error).splitlines()[0]}") from None
