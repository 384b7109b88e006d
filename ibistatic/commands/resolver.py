"""``ibistatic resolver``: the live resolver of §5-§8, fanning out to Archives that join it."""

from __future__ import annotations

import sys

from ..federation.wire import DEFAULT_SERVICE_IBI


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "resolver",
        help="run a resolver that Archives join (ibistatic serve --join) and that asks them all",
        description="A resolver of the IBI resolution system: Archives listed in the keys file "
        "join it with inclusionRequest; persistent URLs at any other path are asked of the "
        "Archive that holds the IBI, or of every included Archive (and each --index) at once "
        "for an IBI not seen before, within a budget of time and requests, then followed and "
        "acknowledged (docs/protocol.md: the holder rule).",
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
        "--deadline",
        type=float,
        default=5.0,
        metavar="S",
        help="seconds one resolution may take, every round of requests together (default: 5)",
    )
    parser.add_argument(
        "--max-requests",
        type=int,
        default=64,
        metavar="N",
        help="urlRequests one resolution may send to Archives (default: 64)",
    )
    parser.add_argument(
        "--cache-seconds",
        type=float,
        default=3.0,
        metavar="S",
        help="keep answers this long (default: 3; 0 disables; a cached redirect is "
        "acknowledged too, and kept at most 60 s)",
    )
    parser.add_argument(
        "--cache-mib",
        type=float,
        default=32.0,
        metavar="MIB",
        help="the most memory the answer cache takes (default: 32)",
    )
    parser.add_argument(
        "--state",
        metavar="FILE",
        help="where the included Archives, their ranks and which Archive holds each IBI "
        "are kept across restarts (FILE and FILE's name with .holders.sqlite; default: none)",
    )
    parser.add_argument("--log", action="store_true", help="log every request to stderr")
    parser.set_defaults(func=run)


def run(args) -> int:
    from ..errors import UsageError, need_extra
    from .serve import SERVER_MODULES

    need_extra(SERVER_MODULES, "serve", "ibistatic resolver")
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
        cache_seconds=args.cache_seconds,
        limits=_limits(args),
        holders=_holders(args.state, registry, views),
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


def _limits(args):
    from ..errors import UsageError
    from ..federation.network import ResolverLimits

    if args.deadline <= 0:
        raise UsageError(f"--deadline {args.deadline}: expected a positive number of seconds")
    if not 1 <= args.max_requests <= 100_000:
        raise UsageError(f"--max-requests {args.max_requests}: expected 1 to 100000")
    if not 0 < args.cache_mib <= 65536:
        raise UsageError(f"--cache-mib {args.cache_mib}: expected more than 0, at most 65536")
    return ResolverLimits(
        timeout=args.timeout,
        deadline=args.deadline,
        max_requests=args.max_requests,
        cache_bytes=int(args.cache_mib * 1024 * 1024),
    )


def _holders(state, registry, views):
    """The holders' memory next to --state (in a temporary folder without it); what the
    Archives removed from the keys file held is forgotten."""
    from pathlib import Path

    from ..errors import ConfigError
    from ..federation.holders import Holders

    path = None
    if state is not None:
        path = Path(state).with_name(Path(state).name + ".holders.sqlite")
    try:
        holders = Holders(path)
    except Exception as error:  # sqlite3.Error, OSError: a file that is not ours
        raise ConfigError(f"--state {state}: cannot open {path}: {error}") from None
    holders.keep_only(set(registry.keys) | {"local:" + view.info.name for view in views})
    return holders


def _service_ibi(text: str) -> str:
    from ..core.identifiers import parse_ibi
    from ..errors import IbistaticError, UsageError

    try:
        return parse_ibi(text).text
    except IbistaticError as error:
        raise UsageError(f"--service-ibi {text!r}: {str(error).splitlines()[0]}") from None
