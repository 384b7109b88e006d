"""``ibistatic build``: publish the site and the index."""

from __future__ import annotations

import sys
from collections import Counter

from ..config import HOST_NAMES
from . import add_site_options

#: lines printed of one kind of warning; the rest are counted in one summary line
ALIKE_WARNINGS = 20


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "build",
        help="publish the static site and the JSON index",
        description="Crawl the configured Archives and publish the site and index. With no "
        "--config and no ibistatic.yaml in the current directory, publishes the bundled "
        "ibistatic/sample_archive/ into ./site. Exits 1 when an error was reported.",
    )
    add_site_options(parser)
    parser.add_argument(
        "--host",
        action="append",
        choices=HOST_NAMES,
        metavar="NAME",
        help="a host the site is published on, repeatable, instead of the configuration's "
        f"hosts: ({', '.join(HOST_NAMES)}); writes what it needs and checks its limits",
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 on any warning: a problem of the archives, or a chosen host's limit "
        "passed (the site is still published)",
    )
    parser.add_argument(
        "--full",
        action="store_true",
        help="rebuild every file into a new tree (default: rewrite only what changed)",
    )
    parser.add_argument("--quiet", action="store_true", help="print only problems")
    parser.set_defaults(func=run)


def run(args) -> int:
    from ..config import load_command_config
    from ..progress import Progress
    from ..site.build import build_site
    from ..summary import LoggedWarnings, summary

    config = load_command_config(args.config, args.output, args.jobs)
    if args.host:  # --host replaces the configuration's hosts: (site/hosts/)
        from dataclasses import replace

        from ..config import check_hosts

        config = replace(config, hosts=tuple(dict.fromkeys(args.host)))
        check_hosts(config.hosts)
    progress = Progress(enabled=False if args.quiet else None)  # a bar on a terminal only
    log = None if args.quiet else lambda message: say(message, sys.stderr, progress)
    with LoggedWarnings(
        lambda text: say(text, sys.stderr, progress)
    ) as logged:  # what libraries (mkdocs) print while the build runs
        report = build_site(config, log=log, full=args.full, progress=progress)
    for line in problem_lines(report.problems):
        say(line, sys.stderr)
    for warning in report.warnings:
        say(f"warning: {warning}", sys.stderr)
    if not args.quiet:
        say(summary(report, progress.times, logged.count), sys.stdout)
    return exit_status(report.problems, args.strict, report.warnings)


def exit_status(problems, strict: bool, warnings=()) -> int:
    """docs/cli/build.md: 1 when the run found problems: any error, or with --strict any
    warning: of the archives, or of the build (a chosen host's limit passed).  The site
    is published either way: --strict tells a deployment step not to go on."""
    if any(p.severity == "error" for p in problems):
        return 1
    return 1 if strict and (problems or warnings) else 0


def problem_lines(problems) -> list[str]:
    """One line per problem, but at most ALIKE_WARNINGS of one kind of warning (same
    Archive, what was found and what was expected) and of the errors of one file, then
    one line with how many more: a descriptor of 50,000 bad keys is 21 lines, not 50,000."""
    from ..errors import printable

    shown: Counter = Counter()
    lines = []
    for problem in problems:
        if problem.severity == "warning":
            kind = ("warning", problem.archive, problem.found, problem.expected)
        else:
            kind = ("error", problem.archive, problem.path)
        shown[kind] += 1
        if shown[kind] <= ALIKE_WARNINGS:
            lines.append(str(problem))
    for (severity, archive, what, *_), count in shown.items():
        if count <= ALIKE_WARNINGS:
            continue
        more = f"{count - ALIKE_WARNINGS:,} more"
        if severity == "warning":
            line = f"warning: {archive}: ... and {more} warnings like this ({what})"
        else:
            line = f"error: {archive}: {what}: ... and {more} errors in this file"
        lines.append(printable(line))
    return lines


def say(text: str, stream, progress=None) -> None:
    """Print one line; a character the stream cannot encode is escaped, never raised.
    With `progress`, the line is printed above its bar, never into it."""
    from ..errors import printable

    if progress is not None:
        with progress.hidden():
            say(text, stream)
        return
    text = printable(text)
    try:
        print(text, file=stream)
    except UnicodeEncodeError:
        encoding = getattr(stream, "encoding", None) or "ascii"
        print(text.encode(encoding, "backslashreplace").decode(encoding), file=stream)
