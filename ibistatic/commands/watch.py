"""``ibistatic watch``: build, then republish on every change to the archives."""

from __future__ import annotations

import sys

from . import add_site_options


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "watch",
        help="build, then republish on every change to the archives",
        description="Build the site, then watch every Archive and republish (incrementally) "
        "when files change. Invalid descriptors are reported and their items keep their last "
        "good published state. Ctrl-C stops.",
    )
    add_site_options(parser)
    parser.add_argument(
        "--polling",
        action="store_true",
        help="poll the file system instead of using its events (network file systems)",
    )
    parser.add_argument(
        "--debounce",
        type=float,
        default=0.2,
        metavar="SECONDS",
        help="quiet time before a republish (default: 0.2)",
    )
    parser.add_argument(
        "--rescan",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="republish anyway this often, as a backstop (default: 300)",
    )
    parser.set_defaults(func=run)


def run(args) -> int:
    import signal
    import time

    from ..config import load_command_config
    from ..watch import Watcher

    config = load_command_config(args.config, args.output, args.jobs)

    def log(message: str) -> None:
        print(f"{time.strftime('%H:%M:%S')} {message}", file=sys.stderr, flush=True)

    watcher = Watcher(
        config, polling=args.polling, debounce=args.debounce, rescan=args.rescan, log=log
    )
    signal.signal(signal.SIGTERM, lambda *_: watcher.stop())
    watcher.run()
    return 0
