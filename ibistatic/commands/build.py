"""``ibistatic build``: publish the site and the index."""

from __future__ import annotations

import sys


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "build",
        help="publish the static site and the JSON index",
        description="Crawl the configured Archives and publish the site and index. With no "
        "--config and no ibistatic.yaml in the current directory, publishes the bundled "
        "ibistatic/sample_archive/ into ./site.",
    )
    parser.add_argument("--config", metavar="FILE", help="the site configuration (default: ./ibistatic.yaml, else the bundled sample)")
    parser.add_argument("--output", metavar="DIR", help="where to publish (default: the configuration's output)")
    parser.add_argument("--strict", action="store_true", help="exit 1 when any problem (error or warning) was found")
    parser.add_argument("--full", action="store_true", help="rebuild every file into a new tree (default: rewrite only what changed)")
    parser.add_argument("--quiet", action="store_true", help="print only problems")
    parser.set_defaults(func=run)


def run(args) -> int:

    from ..config import load_command_config
    from ..site.build import build_site

    config = load_command_config(args.config, args.output)
    from ..progress import Progress

    progress = Progress(enabled=None if not args.quiet else False)  # a bar on a terminal only
    report = build_site(config, log=None if args.quiet else lambda m: print(m, file=sys.stderr), full=args.full, progress=progress)
    for problem in report.problems:
        print(problem, file=sys.stderr)
    for warning in report.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if not args.quiet:
        print(report.summary())
    if args.strict and (report.problems or report.warnings):
        return 1
    return 0
