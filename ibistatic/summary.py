"""The last line of a build or a republish: what was published, the errors and warnings
printed, the time in all and per phase (docs/cli/build.md, "Summary")."""

from __future__ import annotations

import logging
from collections.abc import Callable

__all__ = ["summary", "counted", "LoggedWarnings"]


def summary(report, times: dict[str, float], logged_warnings: int = 0) -> str:
    """The last line of a build: what it published, the errors and warnings it printed
    (the archives' problems, the host-file advice, and warnings libraries logged), the
    time in all and per phase."""
    from .progress import format_times

    errors = sum(1 for p in report.problems if p.severity == "error")
    warnings = len(report.problems) - errors + len(report.warnings) + logged_warnings
    phases = f" ({format_times(times)})" if times else ""
    return (
        f"published {report.output} ({report.mode}): {report.items} items, {report.keys} IBIs, "
        f"{report.pages} pages, {report.written} files written, {report.removed} removed, "
        f"{counted(errors, 'error')}, {counted(warnings, 'warning')} in {report.seconds:.2f} s{phases}"
    )


def counted(number: int, noun: str) -> str:
    """``1 warning``, ``2 warnings``, ``1,000 items``."""
    if number == 1:
        return f"1 {noun}"
    return f"{number:,} " + (noun[:-1] + "ies" if noun.endswith("y") else noun + "s")


class LoggedWarnings(logging.Handler):
    """Counts the warnings (and worse) that libraries log while it is open, and prints
    those no other handler prints, as Python's last-resort handler would have (a handler
    on the root logger keeps that one silent).  Warnings of ibistatic's own mkdocs plugin
    repeat the archives' problems, which the summary counts already."""

    def __init__(self, show: Callable[[str], None]) -> None:
        super().__init__(logging.WARNING)
        self.count = 0
        self.show = show  # prints one line

    def emit(self, record: logging.LogRecord) -> None:
        if not self._printed_elsewhere(record.name):
            self.show(self.format(record))
        if record.name != "mkdocs.plugins.ibistatic":
            self.count += 1

    def _printed_elsewhere(self, name: str) -> bool:
        logger: logging.Logger | None = logging.getLogger(name)
        while logger is not None:
            if any(handler is not self for handler in logger.handlers):
                return True
            logger = logger.parent if logger.propagate else None
        return False

    def __enter__(self) -> "LoggedWarnings":
        logging.getLogger().addHandler(self)
        return self

    def __exit__(self, *exc) -> None:
        logging.getLogger().removeHandler(self)
