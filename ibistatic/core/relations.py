"""Relations, persistent-URL modifiers and verb lists: three spellings of one model.

A *relation* says how a related item is reached from an identified item, as a sequence
of steps read left to right: the last edition, a translation, the metadata.  The
standard spells it three ways, all with the same grammar:

============  ===================  ====================================  ================
step          relation (Tab. 7.5)  verb (Tables 6.4, 6.5)                modifier (6.1)
============  ===================  ====================================  ================
last edition  ``.lastedition``     ``GetLastEdition``                    ``!``
translation   ``.translation(pt)`` ``GetTranslation(pt)``                ``+(pt)``
metadata      ``.metadata(oai_dc)`` ``GetMetadata(oai_dc)``              ``:(oai_dc)``
============  ===================  ====================================  ================

::

    relation = ([u [t]] | [t [u]]) [m [t]]

so a relation has one of 15 shapes: the empty relation and the 14 modifiers of
Table 6.2.  A verb list may also hold ``GetFileList``, whose position does not matter:
it is kept apart as :attr:`VerbList.file_list`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from ..errors import IbiSyntaxError
from .facts import (
    FILE_LIST_VERB,
    FORMATS,
    KINDS,
    LASTEDITION,
    METADATA,
    MODIFIER_SYMBOLS,
    RELATION_HEADS,
    RELATION_SYMBOLS,
    RELATION_TAILS,
    STEP_NOUNS,
    TRANSLATION,
    VERB_NAMES,
)
from .languages import match_language_tag, parse_language_tag

__all__ = [
    "LASTEDITION",
    "TRANSLATION",
    "METADATA",
    "FORMATS",
    "FILE_LIST_VERB",
    "TABLE_6_2",
    "Step",
    "Relation",
    "VerbList",
    "parse_relation",
    "relation_text",
    "relation_texts",
    "check_relation",
    "parse_modifier",
    "match_modifier",
    "modifier_text",
    "parse_verb_list",
    "verb_list_text",
    "verb_list_to_relation",
    "relation_to_verb_list",
    "compositions",
    "describe_relation",
    "relation_problems",
]

# Table 6.2, in its order: every non-empty modifier and what it returns.
TABLE_6_2: tuple[tuple[str, str], ...] = (
    (":", "metadata"),
    (":+", "translation of the metadata"),
    ("!", "last edition"),
    ("!+", "translation of the last edition"),
    ("!:", "metadata of the last edition"),
    ("!+:", "metadata of the translation of the last edition"),
    ("!:+", "translation of the metadata of the last edition"),
    ("!+:+", "translation of the metadata of the translation of the last edition"),
    ("+", "translation"),
    ("+!", "last edition of the translation"),
    ("+:", "metadata of the translation"),
    ("+!:", "metadata of the last edition of the translation"),
    ("+:+", "translation of the metadata of the translation"),
    ("+!:+", "translation of the metadata of the last edition of the translation"),
)

_NOUNS = STEP_NOUNS


@dataclass(frozen=True)
class _Notation:
    """How one spelling writes the three steps."""

    symbols: dict[str, str]


MODIFIER = _Notation(MODIFIER_SYMBOLS)
RELATION = _Notation(RELATION_SYMBOLS)
VERBS = _Notation(VERB_NAMES)


@dataclass(frozen=True)
class Step:
    """One step of a relation: ``kind`` is 'lastedition', 'translation' or 'metadata';
    ``param`` is a language tag (``pt-BR``) for a translation, ``oai_dc`` for metadata,
    or None."""

    kind: str
    param: str | None = None

    def __post_init__(self) -> None:
        # Steps built by hand are held to the grammar the parsers enforce.
        if self.kind not in KINDS:
            expected = "'lastedition', 'translation' or 'metadata'"
            raise IbiSyntaxError(str(self.kind), 0, expected, "relation step")
        if self.param is not None:
            _check_param(self.kind, self.param)


Relation = tuple[Step, ...]


def _check_param(kind: str, param: str) -> None:
    text = f".{kind}({param})"
    start = len(kind) + 2
    if kind == LASTEDITION:
        raise IbiSyntaxError(text, start - 1, "no parameter after .lastedition", "relation")
    if kind == METADATA and param not in FORMATS:
        raise IbiSyntaxError(text, start, repr(FORMATS[0]), "relation")
    if kind == TRANSLATION:
        try:
            parse_language_tag(param)
        except IbiSyntaxError as error:
            position = start + error.position
            raise IbiSyntaxError(text, position, error.expected, "relation") from None


@dataclass(frozen=True)
class VerbList:
    """A verb list (Table 6.4): the relation it asks for, and whether ``GetFileList``
    is among its verbs."""

    steps: Relation = ()
    file_list: bool = False

    def __post_init__(self) -> None:
        check_relation(self.steps)


# relation = ([u [t]] | [t [u]]) [m [t]]
_HEADS, _TAILS = RELATION_HEADS, RELATION_TAILS
SHAPES: frozenset[tuple[str, ...]] = frozenset(head + tail for head in _HEADS for tail in _TAILS)
_PREFIXES = frozenset(shape[:n] for shape in SHAPES for n in range(len(shape) + 1))


@lru_cache(maxsize=None)  # a handful of prefixes, asked for each step of each relation checked
def _allowed_after(kinds: tuple[str, ...]) -> tuple[str, ...]:
    """The step kinds that may follow *kinds* under the relation grammar."""
    return tuple(kind for kind in KINDS if kinds + (kind,) in _PREFIXES)


def _expected(
    kinds: tuple[str, ...], notation: _Notation, last: Step | None, ends: Iterable[str]
) -> str:
    """What may come after the steps *kinds* (the last one *last*), for an error message."""
    options = []
    if last is not None and last.kind != LASTEDITION and last.param is None:
        options.append("'('")
    options += [repr(notation.symbols[kind]) for kind in _allowed_after(kinds)]
    options += list(ends)
    if len(options) == 1:
        return options[0]
    return ", ".join(options[:-1]) + " or " + options[-1]


# ---------------------------------------------------------------------------------------
# The three spellings: one step, then a sequence of steps


def _step(text: str, start: int, notation: _Notation, what: str) -> tuple[Step, int] | None:
    """``u | t | m`` in *notation* at ``text[start:]``; None when no step starts there."""
    for kind in KINDS:
        symbol = notation.symbols[kind]
        if text.startswith(symbol, start):
            return _parameter(text, start + len(symbol), kind, what)
    return None


def _parameter(text: str, start: int, kind: str, what: str) -> tuple[Step, int]:
    """``["(" idioma ["-" pais] ")"]`` after a translation, ``["(" formato ")"]`` after
    metadata; nothing after the last edition."""
    if kind == LASTEDITION or not text.startswith("(", start):
        return Step(kind), start
    if kind == TRANSLATION:
        tag, end = match_language_tag(text, start + 1, what)
        param = str(tag)
        expected = "')'" if tag.country else "'-' or ')'"
    else:
        end, param, expected = _formato(text, start + 1, what), FORMATS[0], "')'"
    if not text.startswith(")", end):
        raise IbiSyntaxError(text, end, expected, what)
    return Step(kind, param), end + 1


def _formato(text: str, start: int, what: str) -> int:
    """``formato = "oai_dc"``; returns the index after it."""
    if not text.startswith(FORMATS[0], start):
        raise IbiSyntaxError(text, start, repr(FORMATS[0]), what)
    return start + len(FORMATS[0])


def _steps(
    text: str, start: int, notation: _Notation, what: str, stops: tuple[str, ...]
) -> tuple[Relation, int]:
    """``([u [t]] | [t [u]]) [m [t]]`` spelled in *notation* from ``text[start:]``.

    The steps end at the end of *text* or at one of the characters *stops*; anything
    else, or a step the grammar does not allow there, is an error at its first
    character.  Returns the steps and the index after them.
    """
    steps: list[Step] = []
    position = start
    while True:
        found = _step(text, position, notation, what)
        kinds = tuple(step.kind for step in steps)
        if found is None and (position == len(text) or text[position] in stops):
            return tuple(steps), position
        if found is None or found[0].kind not in _allowed_after(kinds):
            ends = [repr(stop) for stop in stops] + [f"end of {what}"]
            expected = _expected(kinds, notation, steps[-1] if steps else None, ends)
            raise IbiSyntaxError(text, position, expected, what)
        steps.append(found[0])
        position = found[1]


def parse_relation(text: str) -> Relation:
    """``relation = ([u [t]] | [t [u]]) [m [t]]`` with ``u = ".lastedition"``,
    ``t = ".translation" ["(" idioma ["-" pais] ")"]``,
    ``m = ".metadata" ["(" formato ")"]`` (Table 7.5).  ``""`` is the empty relation."""
    return _steps(text, 0, RELATION, "relation", ())[0]


def relation_text(rel: Relation) -> str:
    """The relation spelling: ``.lastedition.metadata(oai_dc)``; ``""`` for ``()``."""
    return _spell(rel, RELATION)


def relation_texts(relations: Iterable[Relation]) -> list[str]:
    """relation_text of each relation of an Archive's set, each step spelled once: the
    default set has as many relations as the square of the Archive's languages, made
    of a few steps per language.  The relations of a set were checked when it was made
    (compositions, parse_relation), so they are not checked again here."""
    spelled: dict[Step, str] = {}
    texts = []
    for rel in relations:
        text = ""
        for step in rel:
            found = spelled.get(step)
            if found is None:
                found = spelled[step] = _spell_step(step, RELATION)
            text += found
        texts.append(text)
    return texts


def parse_modifier(text: str) -> Relation:
    """``mdf = ([u [t]] | [t [u]]) [m [t]]`` with ``u = "!"``,
    ``t = "+" ["(" idioma ["-" pais] ")"]``, ``m = ":" ["(" formato ")"]`` (Table 6.1)."""
    return _steps(text, 0, MODIFIER, "modifier", ())[0]


def match_modifier(
    text: str, start: int, what: str, stops: tuple[str, ...]
) -> tuple[Relation, int]:
    """The modifier (possibly empty) at ``text[start:]`` and the index after it.

    For parsers of larger texts (persistent URLs): the modifier must end at the end of
    *text* or before one of the characters *stops*; errors carry positions in the whole
    *text* and call it *what*.
    """
    return _steps(text, start, MODIFIER, what, stops)


def modifier_text(rel: Relation) -> str:
    """The modifier spelling: ``!:(oai_dc)``; ``""`` for ``()``."""
    return _spell(rel, MODIFIER)


def _spell(rel: Relation, notation: _Notation) -> str:
    check_relation(rel)
    return "".join(_spell_step(step, notation) for step in rel)


def _spell_step(step: Step, notation: _Notation) -> str:
    symbol = notation.symbols[step.kind]
    return symbol if step.param is None else f"{symbol}({step.param})"


def check_relation(rel: Relation) -> None:
    """Raise :class:`IbiSyntaxError` unless *rel* is a tuple of :class:`Step` whose kinds
    follow ``([u [t]] | [t [u]]) [m [t]]``; the caret points into its relation spelling."""
    if not isinstance(rel, tuple) or not all(isinstance(step, Step) for step in rel):
        raise IbiSyntaxError(repr(rel), 0, "a tuple of Step", "relation")
    if tuple(step.kind for step in rel) in _PREFIXES:
        return  # every prefix of a relation of the grammar is one too: nothing to point at
    kinds: tuple[str, ...] = ()
    for index, step in enumerate(rel):
        if step.kind not in _allowed_after(kinds):
            text = "".join(_spell_step(each, RELATION) for each in rel)
            position = len("".join(_spell_step(each, RELATION) for each in rel[:index]))
            last = rel[index - 1] if index else None
            expected = _expected(kinds, RELATION, last, ("end of relation",))
            raise IbiSyntaxError(text, position, expected, "relation")
        kinds += (step.kind,)


# ---------------------------------------------------------------------------------------
# Verb lists


def parse_verb_list(text: str, *, after: Relation = ()) -> VerbList:
    """``lista-de-verbos = [verbo *("+" verbo)]`` (Table 6.4), with
    ``verbo = ("GetTranslation" ["(" idioma ["-" pais] ")"]) | "GetLastEdition" |
    ("GetMetadata" ["(" formato ")"]) | "GetFileList"``.

    A space separates verbs as well as ``+`` (the pair-list spelling, and what a ``+``
    becomes when a client form-encodes it).  Without ``GetFileList`` the verbs must
    follow the relation grammar.

    With *after* (the steps of a modifier) the result is the union without repetition
    of Table 6.6: the steps of *after*, then the verbs of *text* not among them; the
    union must follow the grammar too (errors point into *text*).
    """
    verbs, positions = _verb_list(text, "verb list")
    steps = list(after)
    for step, position in zip(verbs.steps, positions):
        if step in after:
            continue
        kinds = tuple(each.kind for each in steps)
        if step.kind not in _allowed_after(kinds):
            expected = _expected(kinds, VERBS, None, (repr(FILE_LIST_VERB),))
            expected += f" after the modifier's verbs {verb_list_text(VerbList(after), '+')}"
            raise IbiSyntaxError(text, position, expected, "verb list")
        steps.append(step)
    return VerbList(tuple(steps), verbs.file_list)


def _verb_list(text: str, what: str) -> tuple[VerbList, list[int]]:
    """The verb list filling *text*, and where each of its steps starts."""
    steps: list[Step] = []
    positions: list[int] = []
    file_list = False
    position = 0
    while text:
        kinds = tuple(step.kind for step in steps)
        verb, end = _verbo(text, position, kinds, what)
        if verb is None:
            file_list = True
        else:
            steps.append(verb)
            positions.append(position)
        if end == len(text):
            break
        if text[end] not in "+ ":
            raise IbiSyntaxError(text, end, _separator_expected(verb), what)
        position = end + 1
    return VerbList(tuple(steps), file_list), positions


def _verbo(text: str, start: int, kinds: tuple[str, ...], what: str) -> tuple[Step | None, int]:
    """``verbo`` at ``text[start:]``, allowed after the verbs *kinds*; None stands for
    ``GetFileList``."""
    if text.startswith(FILE_LIST_VERB, start):
        return None, start + len(FILE_LIST_VERB)
    found = _step(text, start, VERBS, what)
    if found is None or found[0].kind not in _allowed_after(kinds):
        expected = _expected(kinds, VERBS, None, (repr(FILE_LIST_VERB),))
        raise IbiSyntaxError(text, start, expected, what)
    return found


def _separator_expected(verb: Step | None) -> str:
    if verb is not None and verb.kind != LASTEDITION and verb.param is None:
        return "'(', '+', ' ' or end of verb list"
    return "'+', ' ' or end of verb list"


def verb_list_text(vl: VerbList, sep: str = " ") -> str:
    """The verbs of *vl* joined by *sep*; ``GetFileList`` last (its place is free)."""
    verbs = [_spell_step(step, VERBS) for step in vl.steps]
    if vl.file_list:
        verbs.append(FILE_LIST_VERB)
    return sep.join(verbs)


def verb_list_to_relation(vl: VerbList) -> Relation:
    """The relation a verb list asks for (``GetFileList`` aside)."""
    return vl.steps


def relation_to_verb_list(rel: Relation, file_list: bool = False) -> VerbList:
    """The verb list asking for *rel* (and for the file list when *file_list*)."""
    return VerbList(rel, file_list)


# ---------------------------------------------------------------------------------------
# Enumeration and meaning


def compositions(languages: Iterable[str] = (), formats: Iterable[str] = FORMATS) -> list[Relation]:
    """Every relation of the grammar whose parameters come from *languages* and *formats*.

    Each of the 15 shapes (the empty relation first, then Table 6.2 in its order) with
    every translation either bare or with one of *languages*, and the metadata either
    bare or with one of *formats*.  Duplicates in the arguments are dropped.
    """
    options = {
        LASTEDITION: (None,),
        TRANSLATION: (None, *dict.fromkeys(str(parse_language_tag(tag)) for tag in languages)),
        METADATA: (None, *dict.fromkeys(formats)),
    }
    # each step made (and checked) once: the relations are every product of them, as
    # many as the square of the languages for the shapes with two translations
    steps = {kind: tuple(Step(kind, param) for param in params) for kind, params in options.items()}
    result: list[Relation] = []
    for shape in [()] + [tuple(s.kind for s in parse_modifier(m)) for m, _ in TABLE_6_2]:
        result += itertools.product(*(steps[kind] for kind in shape))
    return result


def describe_relation(rel: Relation) -> str:
    """What *rel* returns, in English as in Table 6.2: ``metadata (oai_dc) of the last
    edition``; ``item itself`` for the empty relation."""
    check_relation(rel)
    if not rel:
        return "item itself"
    nouns = [_NOUNS[step.kind] + (f" ({step.param})" if step.param else "") for step in rel]
    return " of the ".join(reversed(nouns))


def relation_problems(archives, items) -> list:
    """Warnings for Archives whose explicit ``relations`` miss what their items need.

    §7.2: "se o Arquivo armazenar itens de informação sem especificação de idioma, então
    ele deverá incluir no subconjunto relações, a relação .translation sem parâmetro de
    idioma"; likewise ``.translation(L)`` for each language L its items are in or name a
    translation in (without it, ``+(L)`` and ``+`` cannot reach them).  `archives` are
    ArchiveInfos, `items` the Items in crawl order; one warning per missing relation,
    naming the first item that needs it.  Pure: the caller reports them.
    """
    from ..errors import Problem

    declared = {info.name: set(info.relations) for info in archives if info.relations is not None}
    needed: dict[tuple[str, Relation], str] = {}
    for item in items:
        if item.archive not in declared or item.state == "Deleted":
            continue
        for relation, why in _translations_needed(item):
            if not _covered(relation[0].param, declared[item.archive]):
                needed.setdefault((item.archive, relation), f"{item.repository.text} ({why})")
    return [
        Problem(
            archive,
            "archive.yaml",
            "relations",
            f"no {relation_text(relation)!r}, which {who} needs",
            "every relation the Archive's items need (resolution-system §7.2)",
            "warning",
        )
        for (archive, relation), who in needed.items()
    ]


def _translations_needed(item) -> list[tuple[Relation, str]]:
    needs: list[tuple[tuple[Step, ...], str]]
    if item.language is None:
        needs = [((Step(TRANSLATION, None),), "an item without a language")]
    else:
        needs = [((Step(TRANSLATION, item.language),), f"an item in {item.language}")]
    needs += [
        ((Step(TRANSLATION, tag),), f"a translation in {tag}") for tag, _ in item.translations
    ]
    return needs


def _covered(language: str | None, declared: set) -> bool:
    """Whether a declared one-step ``.translation`` answers `language` (None: the bare
    one); a tag L answers L-CC and vice versa, as translation_target matches them."""
    for relation in declared:
        if len(relation) != 1 or relation[0].kind != TRANSLATION:
            continue
        have = relation[0].param
        if have is None or language is None:
            if have is None and language is None:
                return True
            continue
        have, want = have.lower(), language.lower()
        if have == want or have.split("-")[0] == want or want.split("-")[0] == have:
            return True
    return False
