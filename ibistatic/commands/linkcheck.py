"""``ibistatic linkcheck [--config FILE | --site DIR] [--concurrency N] [--per-host-rate R]
[--timeout S] [--allow-private [NETWORK]] [--csv FILE] [--html FILE]``: check the target of
every published item (docs/cli/linkcheck.md).

Exit codes: 0 no target is broken, 1 some target is broken, 2 bad usage (an option out of
range, no built site).
"""

from __future__ import annotations

import argparse
import sys

__all__ = ["add_parser", "run"]


def _positive(kind, what: str):
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r}: expected {what}") from None
        if not value > 0 or value != value or value == float("inf"):
            raise argparse.ArgumentTypeError(f"{text!r}: expected {what}")
        return value

    return parse


def _network(text: str) -> str:
    import ipaddress

    if text == "all":  # what --allow-private alone gives (argparse passes it here too)
        return text
    try:
        return str(ipaddress.ip_network(text, strict=False))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected an address or a network, such as 10.1.0.0/16"
        ) from None


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    from ..linkcheck import Settings

    default = Settings()
    parser = subparsers.add_parser(
        "linkcheck",
        help="check that the target of every published item still answers",
        description="Ask every target URL of the published items (read from the built site's "
        "index) whether it still answers: concurrently, at most --per-host-rate requests a second "
        "to one host, HEAD then GET, redirects followed. Lists the broken targets; exits 1 when "
        "any is broken.",
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--config",
        metavar="FILE",
        help="the configuration whose output is checked (default: ./ibistatic.yaml, else ./site "
        "as `ibistatic build` publishes the bundled sample)",
    )
    where.add_argument("--site", metavar="DIR", help="a built site, or its index/ folder")
    parser.add_argument(
        "--concurrency",
        type=_positive(int, "a whole number of requests, 1 or more"),
        default=default.concurrency,
        metavar="N",
        help=f"requests in flight at once (default: {default.concurrency})",
    )
    parser.add_argument(
        "--per-host-rate",
        type=_positive(float, "requests a second, more than 0"),
        default=default.per_host_rate,
        metavar="R",
        help=f"at most R requests a second to one host (default: {default.per_host_rate:g})",
    )
    parser.add_argument(
        "--timeout",
        type=_positive(float, "seconds, more than 0"),
        default=default.timeout,
        metavar="S",
        help="seconds for one whole check: the connections, answers and redirects of one "
        f"target URL together (default: {default.timeout:g})",
    )
    parser.add_argument(
        "--allow-private",
        type=_network,
        action="append",
        nargs="?",
        const="all",
        default=[],
        metavar="NETWORK",
        help="also check targets on internal addresses (loopback, private, link-local), all of "
        "them or those in NETWORK (e.g. 10.1.0.0/16); may be repeated. Without it they are "
        "reported as not checked",
    )
    parser.add_argument("--csv", metavar="FILE", help="write the broken targets as CSV")
    parser.add_argument("--html", metavar="FILE", help="write the broken targets as an HTML page")
    parser.add_argument("--quiet", action="store_true", help="print only the broken targets")
    parser.set_defaults(func=run)


def run(args) -> int:
    from ..errors import UsageError, printable
    from ..index.reader import IndexUnavailable, find_index_dir
    from ..linkcheck import EVERY_ADDRESS, Settings, check_targets, published_targets
    from ..progress import Progress

    try:
        index_dir = find_index_dir(args.site or _configured_output(args.config))
    except IndexUnavailable as error:
        raise UsageError(str(error)) from None
    allowed = tuple(args.allow_private)
    settings = Settings(
        args.concurrency,
        args.per_host_rate,
        args.timeout,
        allow_private=EVERY_ADDRESS if "all" in allowed else allowed,
    )
    targets = published_targets(index_dir)
    progress = Progress(enabled=False if args.quiet else None)
    progress.phase("checking targets", len({t.url for t in targets}), unit="URL")
    report = check_targets(targets, settings, progress.advance)
    progress.finish()
    _write_reports(args, report)
    for target, outcome in report.broken():
        problem = outcome.reason if outcome.status is None else f"{outcome.status} {outcome.reason}"
        print(printable(f"broken: {target.url}: {problem} ({target.ibi}, {target.archive})"))
    if not args.quiet:
        print(printable(report.summary()), file=sys.stderr)
    return 1 if report.broken() else 0


def _configured_output(config: str | None) -> str:
    """Where `ibistatic build` publishes with the same --config: the configuration's output
    (./ibistatic.yaml when none is given, else the bundled sample's ./site)."""
    from ..config import load_command_config

    return str(load_command_config(config, None).output)


def _write_reports(args, report) -> None:
    import time

    from ..errors import UsageError
    from ..linkcheck import csv_report, html_report

    checked_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    for path, text in (
        (args.csv, csv_report(report) if args.csv else ""),
        (args.html, html_report(report, checked_at) if args.html else ""),
    ):
        if path is None:
            continue
        try:
            with open(path, "w", encoding="utf-8", newline="") as writer:
                writer.write(text)
        except OSError as error:
            raise UsageError(f"{path}: cannot write the report ({error.strerror})") from None
