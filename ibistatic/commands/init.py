"""``ibistatic init DIR [--github] [--site-url URL] [--name NAME] [--host NAME] [--ip ADDR]
[--address HOSTPORT]``: a new publishing project (docs/cli/init.md).

Exit codes: 0 written, 2 bad options or a folder that is not empty.
"""

from __future__ import annotations

import argparse

__all__ = ["add_parser", "run"]


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "init",
        help="start a new project: a configuration, one Archive, a README",
        description="Write a new publishing project into DIR (made when missing; refused when "
        "not empty): ibistatic.yaml, one Archive with its subsystem for deposits, a README "
        "with the next commands and, with --github, a GitHub Pages workflow.",
    )
    parser.add_argument("folder", metavar="DIR", help="the new project's folder (new or empty)")
    parser.add_argument(
        "--site-url",
        default="https://ibi.example.org/",
        metavar="URL",
        help="base URL of the persistent links (default: https://ibi.example.org/)",
    )
    parser.add_argument(
        "--name",
        default="archive",
        help="the Archive's folder name under archives/, its name in the index (default: archive)",
    )
    parser.add_argument(
        "--host",
        metavar="NAME",
        help="deposit-host: the host name new IBIs are minted for (default: the site URL's host)",
    )
    parser.add_argument(
        "--ip", metavar="ADDR", help="deposit-ip: every deposited item also gets an IBIp"
    )
    parser.add_argument(
        "--address",
        metavar="HOSTPORT",
        help="the Archive's web address, host[:port] (default: the site URL's host)",
    )
    parser.add_argument(
        "--github",
        action="store_true",
        help="add .github/workflows/ibistatic.yml: build and deploy to GitHub Pages",
    )
    parser.add_argument(
        "--branch",
        default="main",
        help="with --github: the branch whose pushes publish (default: main)",
    )
    parser.set_defaults(func=run)


def run(args) -> int:
    from ..errors import printable
    from ..init import Project, init_project

    project = Project(
        site_url=args.site_url,
        name=args.name,
        host=args.host,
        ip=args.ip,
        address=args.address,
        github=args.github,
        branch=args.branch,
    )
    written = init_project(args.folder, project)
    for path in written:
        print(printable(f"wrote {path}"))
    print(printable(f"next: see {written[0].parent / 'README.md'}"))
    return 0
