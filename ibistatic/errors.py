"""The one exception hierarchy of ibistatic.

Every error the package raises on bad input derives from :class:`IbistaticError`, so
callers (and the CLI) can catch one class.  Errors carry *where* (text and offset, or
archive, path and key) and *what was expected*; the CLI prints ``str(error)`` with no
traceback.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "IbistaticError",
    "IbiSyntaxError",
    "UsageError",
    "ConfigError",
    "OutputError",
    "PublishError",
    "Problem",
    "printable",
    "failure",
    "need_extra",
]


def printable(text: str) -> str:
    """`text` with every character that could break or forge a line of output escaped:
    controls (newline, carriage return, ANSI escapes), line and paragraph separators,
    and the lone surrogates Python makes of bytes that are not UTF-8 (which would also
    make printing raise UnicodeEncodeError).  Printable text, non-ASCII letters
    included, is kept as it is."""
    if text.isprintable():
        return text  # the common case, and fast
    return "".join(ch if ch.isprintable() or ch == " " else _escaped(ch) for ch in text)


def _escaped(ch: str) -> str:
    code = ord(ch)
    if ch in "\n\r\t":
        return {"\n": "\\n", "\r": "\\r", "\t": "\\t"}[ch]
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def failure(error: BaseException) -> str:
    """An unexpected exception in one line: its kind and the start of its message."""
    text = " ".join(str(error).split())
    text = text if len(text) <= 120 else text[:120] + "..."
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def need_extra(modules: tuple[str, ...], extra: str, what: str) -> None:
    """A UsageError when a module of an optional part of ibistatic is not installed: a
    build-only install has neither the server (``serve``) nor mkdocs (``catalog``)."""
    from importlib.util import find_spec

    missing = [module for module in modules if find_spec(module) is None]
    if missing:
        raise UsageError(
            f"{what} needs {', '.join(missing)}, which is not installed; expected the "
            f"'{extra}' extra: python3 -m pip install 'ibistatic[{extra}]'"
        )


class IbistaticError(Exception):
    """Base class of every error ibistatic raises on bad input or state."""

    #: exit code the CLI uses for this kind of error (docs/cli/index.md: 2 = does not parse)
    exit_code = 1

    @classmethod
    def of_lines(cls, lines):
        """One error reporting several problems, one line each (kept as lines, so that
        printing can escape each one without joining what a quoted input split)."""
        error = cls("\n".join(lines))
        error.lines = tuple(lines)
        return error


class UsageError(IbistaticError):
    """The command line or an API call is used the wrong way."""

    exit_code = 2


class ConfigError(IbistaticError):
    """The site configuration (ibistatic.yaml) is missing or wrong."""

    exit_code = 2


class OutputError(IbistaticError):
    """An output ibistatic must not write: a file, someone else's folder, an Archive..."""

    exit_code = 2


class PublishError(IbistaticError):
    """Publishing failed midway (a full disk, a read-only folder); the site is unchanged."""

    exit_code = 1


class IbiSyntaxError(IbistaticError, ValueError):
    """Text that breaks a grammar of the standard.

    The message shows the input with a caret under the first offending character and
    says what was expected there, in the style of packaging's ``ParserSyntaxError``::

        invalid IBI 'sid.inpe.br/mtc m18/2009': expected a letter, digit or '-' at character 15
            sid.inpe.br/mtc m18/2009
                           ^
    """

    exit_code = 2

    def __init__(
        self, text: str, position: int, expected: str, what: str = "IBI", hint: str = ""
    ) -> None:
        self.text = text
        self.position = max(0, min(position, len(text)))
        self.expected = expected
        self.what = what
        #: what the text probably is, when that is not the grammar's business (a DOI, an
        #: IBI followed by a catalog's series code); printed on a line of its own
        self.hint = hint
        #: in a URL, where its IBI began (the hints need not look there again)
        self.ibi_start: int | None = None
        super().__init__(str(self))

    @property
    def found(self) -> str:
        if self.position >= len(self.text):
            return "end of input"
        return repr(self.text[self.position])

    def __str__(self) -> str:
        # Tabs and other control characters would shift the caret: show them escaped.
        shown = "".join(ch if ch.isprintable() else "?" for ch in self.text)
        return (
            f"invalid {self.what} {self.text!r}: expected {self.expected} "
            f"at character {self.position + 1}, found {self.found}\n"
            f"    {shown}\n"
            f"    {' ' * self.position}^"
        ) + (f"\n    hint: {self.hint}" if self.hint else "")


@dataclass(frozen=True, order=True)
class Problem:
    """One problem found in an archive: where it is, what was found, what was expected.

    Problems are collected, not raised, so that a run reports every one of them
    (as packaging's _ErrorCollector does).  ``severity`` is ``"error"`` (the item is left out)
    or ``"warning"`` (reported, nothing left out).
    """

    archive: str
    path: str
    key: str
    found: str
    expected: str
    severity: str = "error"

    def __str__(self) -> str:
        where = self.archive
        if self.path:
            where += f": {self.path}"
        if self.key:
            where += f": {self.key}"
        # one line whatever the names hold: a name cannot forge a line of the report
        return printable(f"{self.severity}: {where}: {self.found}; expected {self.expected}")
