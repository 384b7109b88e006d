"""The ``ibistatic`` command line: parse options, call one library function, print.

Each sub-command lives in ``ibistatic/commands/<name>.py`` and defines
``add_parser(subparsers)`` (which sets ``func`` to its ``run(args) -> int``).  The
contract for commands, options, outputs and exit codes is docs/cli/index.md:
0 success, 1 an alert or problems found, 2 bad usage or input that does not parse.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from .errors import IbistaticError, IbiSyntaxError, failure, printable

# Order is the order of `ibistatic --help`.
COMMANDS = (
    "init",
    "build",
    "resolve",
    "properties",
    "parse_url",
    "inspect",
    "mint",
    "deposit",
    "watch",
    "serve",
    "server_config",
    "check_deployment",
    "resolver",
    "acks",
    "linkcheck",
)


def _wanted(argv: list[str] | None) -> tuple[str, ...]:
    """The command modules to load: only the one asked for (a cold `ibistatic resolve`
    must not pay for importing the crawler or YAML), or all of them for help."""
    words = [word for word in (sys.argv[1:] if argv is None else argv) if not word.startswith("-")]
    if words:
        name = words[0].replace("-", "_")
        if name in COMMANDS:
            return (name,)
    return COMMANDS


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ibistatic",
        description="Publish IBI persistent links as a static site and resolve them offline.",
    )
    from . import __version__

    parser.add_argument("--version", action="version", version=f"ibistatic {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _wanted(argv):
        try:
            module = importlib.import_module(f".commands.{name}", __package__)
        except ModuleNotFoundError as error:
            # A command whose module is not written yet is simply absent.
            if error.name == f"{__package__}.commands.{name}":
                continue
            raise
        module.add_parser(subparsers)
    return parser


def shown(error: IbistaticError) -> str:
    """The message of `error`, escaped so that no input it quotes (a path, an IBI, a
    file's text) can forge a line of output.  A syntax error, raised or quoted at the end
    of the message (``--edition-of: invalid IBI ...``), keeps its own lines (the input with
    a caret under it), each escaped: the class builds them from escaped parts; so does an
    error made of several lines (IbistaticError.of_lines)."""
    lines = getattr(error, "lines", None)
    if lines:  # several problems: each line escaped on its own
        return "\n".join(printable(line) for line in lines)
    text = str(error)
    syntax = error if isinstance(error, IbiSyntaxError) else error.__context__
    if isinstance(syntax, IbiSyntaxError) and text.endswith(str(syntax)):
        head, lines = text[: len(text) - len(str(syntax))], str(syntax).split("\n")
        return printable(head) + "\n".join(printable(line) for line in lines)
    return printable(text)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.func(args) or 0)
    except IbistaticError as error:
        print(f"ibistatic {args.command}: {shown(error)}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print(f"ibistatic {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as error:  # a gap in ibistatic's checks: one line, not a traceback
        if os.environ.get("IBISTATIC_TRACEBACK"):
            raise
        print(
            f"ibistatic {args.command}: unexpected error: {printable(failure(error))} (a bug of "
            "ibistatic: please report it; IBISTATIC_TRACEBACK=1 shows where)",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
