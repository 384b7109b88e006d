"""The words a search matches: one rule, written here and mirrored by ``search.js``.

A text is lower-cased, decomposed (NFKD) and stripped of its combining marks, so
``Relatório`` and ``relatorio`` are one word; its words are the runs of letters and
digits.  An IBI is also one token as a whole (``8jmkd3mgp8w/35mme4e``): a query word
with a ``/`` in it is looked up that way.  Pure: no I/O.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

__all__ = ["MAX_TOKEN", "normalize", "words", "ibi_token", "year_of"]

#: longer words are cut here (a 10,000-letter "word" in a title costs nothing then)
MAX_TOKEN = 40

# Letters and digits (str.isalnum; the script's [\p{L}\p{N}]): not "_", which \w has.
WORD = re.compile(r"[^\W_]+")
YEAR = re.compile(r"(?<![0-9])([0-9]{4})(?![0-9])")


class _DropMarks(dict):
    """A str.translate table that drops combining marks (category M*), filled in as
    characters are met: one dictionary look-up per character after the first."""

    def __missing__(self, code: int):
        kept = None if unicodedata.category(chr(code)).startswith("M") else code
        self[code] = kept
        return kept


_DROP_MARKS = _DropMarks()


def normalize(text: str) -> str:
    """Lower case, then NFKD without combining marks (as the script does)."""
    lowered = text.lower()
    if lowered.isascii():
        return lowered  # most text: nothing to decompose
    return unicodedata.normalize("NFKD", lowered).translate(_DROP_MARKS)


def words(texts: Iterable[str]) -> set[str]:
    """The distinct words of *texts*."""
    found = WORD.findall(normalize(" ".join(texts)))
    return {word if len(word) <= MAX_TOKEN else word[:MAX_TOKEN] for word in found}


def ibi_token(text: str) -> str:
    """An IBI as one token: the whole IBI, lower case (a query word with '/')."""
    return normalize(text)


def year_of(text: str) -> str | None:
    """The first four-digit year in *text* (a Dublin Core date), or None."""
    found = YEAR.search(text)
    return found.group(1) if found else None
