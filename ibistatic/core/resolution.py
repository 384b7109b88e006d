"""The resolution process (resolution-system §6.2 and §8), with no network.

The live resolver fans a urlRequest out to every Archive; here each Archive is an
:class:`~ibistatic.core.properties.ArchiveView` (over a crawl or over the JSON index)
and its answer is computed by the same MONTARLISTADEURL.  The steps:

1. Ask every Archive, in the configured order, for the IBI and the wanted relation.
2. With ``requireditemstatus=Original``: exactly one answer claiming the original is
   taken; none → ``no-original``; two or more → ``conflict`` ("two or more Archives are
   under suspicion; an investigation is needed").  Only then: "Em todos os outros casos,
   o resolvedor seleciona a primeira resposta não vazia que satisfaz a mensagem" (§6.2),
   so a double claim does not stop a plain request (the build reports it as a problem).
3. Otherwise the first answer that satisfies the request: the first, in the configured
   order, that holds the item (not Deleted) and gives the URL of the wanted relation or
   an IBI to follow.  Its URL wins, and when it has none its IBI is followed even if a
   later Archive's answer has the URL ("se a resposta não contiver a URL ... uma nova
   mensagem ... o valor ... é, dentre os IBI contidos na resposta selecionada, aquele que
   atende a lista de verbos").  An answer with state Deleted only ends in ``deleted``
   when no other Archive has the item.
4. No URL for the wanted relation: follow the ``ibi<prefix>`` of the longest answered
   prefix of the relation with the steps still to apply, or ``ibi.nextedition`` with
   the verb list unchanged; a chain that comes back to where it was (the same IBI with
   the same steps) is a ``loop``, and only that: over local views a chain of any length
   is followed to its end (the network resolver sends at most MAX_HOPS rounds).
   A prefix with ``.metadata(oai_dc)`` in it is not followed: asking the IBI it names
   again would give that item's free-format target, not the format (a gap of the
   standard's loop; an Archive holding the items answers it directly).
5. ``+`` without a language is chosen from the Accept-Language preferences among the
   translations the answer offers (the item itself when its own language is
   preferred or when no translation matches).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import NamedTuple

from .facts import CHAIN_GAP, CHAIN_HEAD, CHAIN_KEPT, CHAIN_TAIL, HOP_LIMIT_MESSAGE
from .identifiers import Ibi, parse_ibi
from .languages import match_language
from .outcome import ALERTS, MAX_HOPS, Resolution, _alert, kept_chain
from .properties import ArchiveView, PropertyList, RelationAnswer, open_relations, property_list
from .relations import Relation, Step, VerbList, relation_text

__all__ = [
    "Resolution",
    "ResolutionMemo",
    "resolve",
    "resolution_process",
    "shared_memo",
    "ALERTS",
    "wanted_relations",
]


def _pattern_matches(relation: Relation, pattern: Relation) -> bool:
    """`relation` is `pattern` with each language-less translation step made concrete."""
    if len(relation) != len(pattern):
        return False
    for have, want in zip(relation, pattern):
        if have.kind != want.kind:
            return False
        if have.param != want.param and not (want.kind == "translation" and want.param is None):
            return False
    return True


def wanted_relations(view: ArchiveView, steps: Relation):
    """The relations of the Archive's set that the request needs: the wanted one (every
    language for a language-less translation step) and its prefixes, to follow; for
    property_list's `relations`.  Memoized on the view: an Archive's relation set does
    not change."""
    memo = view.__dict__.setdefault("_wanted_relations", {})
    found = memo.get(steps)
    if found is None:
        found = memo[steps] = _wanted_relations(view, steps)
    return found


def _wanted_relations(view: ArchiveView, steps: Relation) -> list[Relation] | Callable:
    prefixes: list[Relation] = [()] + [steps[:n] for n in range(1, len(steps) + 1)]
    open_prefixes = [
        p for p in prefixes if any(s.kind == "translation" and s.param is None for s in p)
    ]
    if view.info.relations is not None:
        # a declared subset limits what the Archive answers; an open '+' is made
        # concrete with the languages the Archive holds
        return [r for r in view.relations() if any(_pattern_matches(r, p) for p in prefixes)]
    if open_prefixes:
        # the default set: an open '+' is made concrete with the languages of the items
        # it reaches (the relations of the set it names that no item answers have no
        # answer, and the set grows with the square of the Archive's languages)
        return partial(open_relations, steps=steps)
    # the default set is every relation of the grammar: ask for exactly these
    return prefixes


def _first_form(forms: tuple[str, ...] | None) -> str | None:
    return forms[1] if forms is not None and len(forms) >= 2 else None


def _answers_something(known: RelationAnswer | None) -> bool:
    """Whether the answer names the related item or gives its URL."""
    return known is not None and (known.ibi is not None or known.url is not None)


def _choose_languages(
    steps: Relation, answer: PropertyList, preferences: Sequence[str]
) -> Relation | None:
    """Make each language-less translation step concrete from what `answer` offers.

    None when the answer does not reach that step (the relation must be followed first).
    """
    concrete = list(steps)
    for index, step in enumerate(concrete):
        if step.kind != "translation" or step.param is not None:
            continue
        prefix = tuple(concrete[:index])
        offered = answer.offered_languages(prefix)
        if not offered:
            if _answers_something(answer.answer(prefix + (step,))):
                continue  # the item has no language: `.translation` is the item itself
            return None
        chosen = match_language(list(preferences), offered)
        if chosen is None:
            del concrete[index]  # no translation matches: the item itself
            return _choose_languages(tuple(concrete), answer, preferences)
        concrete[index] = Step("translation", chosen)
    return tuple(concrete)


def resolve(
    views: Sequence[ArchiveView],
    ibi: Ibi | str,
    verbs: VerbList | None = None,
    *,
    filepath: str = "",
    required_status: str = "",
    languages: Sequence[str] = (),
    memo: ResolutionMemo | None = None,
) -> Resolution:
    """Resolve `ibi` with `verbs` over the Archives `views`, in order (§8).

    `languages` are the Accept-Language tags, most preferred first.  The outcome
    records the relation asked (``asked``), which decides its HTTP answer.  `memo`
    (:func:`shared_memo`) lets the resolutions of one build over the same views share
    their walks: item k of an edition chain then reuses item k+1's.
    """
    ibi = parse_ibi(ibi) if isinstance(ibi, str) else ibi
    return _walk(views, ibi, verbs, filepath, required_status, languages, memo)


class ResolutionMemo:
    """What resolutions over the same views share (one build's: :func:`shared_memo`).

    ``walks``: per request context (file path, file list, required status, languages),
    the walk from each (IBI key, steps) asked on the way of a resolution of more than
    one round.  A walk from a state does not depend on how it was reached (only the
    first IBI of its chain does), so a resolution stops at the first state already
    walked and takes the rest from there: the resolutions of a whole edition chain cost
    one walk along it.  ``answers``: the Archives' answers to each question, for those
    of one item's resolutions that differ only in the client's languages (the build's
    negotiated ``+``); the caller clears it between items, as it would grow with the site.
    """

    __slots__ = ("walks", "answers")

    def __init__(self, answers: bool = True) -> None:
        self.walks: dict[tuple, dict[tuple[str, Relation], _Walk]] = {}
        self.answers: dict[tuple, list] | None = {} if answers else None


def shared_memo(views: Sequence[ArchiveView]) -> ResolutionMemo:
    """The memo of the resolutions over exactly `views`, kept with the first of them (a
    build's views live as long as its load; a new load makes new views, and so a new
    memo: the items a memo has seen never change under it)."""
    if not views:
        return ResolutionMemo()
    kept = views[0].__dict__.get("_resolution_memo")
    if (
        kept is None
        or len(kept[0]) != len(views)
        or any(a is not b for a, b in zip(kept[0], views))
    ):
        kept = views[0].__dict__["_resolution_memo"] = (tuple(views), ResolutionMemo())
    return kept[1]


class _End(NamedTuple):
    """How one round of answers ends a resolution: `outcome` without its chain, and
    whether its ``ibi`` is the IBI of that round as it was asked (`own_ibi`)."""

    outcome: Resolution
    own_ibi: bool = False

    def made(self, chain: tuple[str, ...], text: str, asked: Relation = ()) -> Resolution:
        """The outcome of a resolution that asked `chain` and ended with the round that
        asked `text`, for a request that asked for `asked`."""
        o = self.outcome
        ibi = text if self.own_ibi else o.ibi
        return Resolution(
            o.url, o.alert, o.archive, o.address, o.state, ibi, o.content_type, chain,
            o.relation, o.message, asked,
        )  # fmt: skip


class _Walk(NamedTuple):
    """The resolution from one state, (IBI key, steps), whatever IBI text reached it:
    how it ends and the IBIs asked after the first (bounded: core.outcome.kept_chain)."""

    end: _End
    head: tuple[str, ...]  # the first CHAIN_KEPT - 1 IBIs asked after the first
    tail: tuple[str, ...]  # the last CHAIN_TAIL of them
    length: int  # how many IBIs were asked after the first
    last: str | None  # the IBI of the last round as asked; None: the first

    def resolution(self, text: str, asked: Relation) -> Resolution:
        """The outcome when the first IBI is asked as `text`, for the relation `asked`."""
        if self.length < CHAIN_KEPT:
            chain = (text, *self.head)
        else:  # as kept_chain keeps the whole chain, without making it
            left_out = self.length + 1 - CHAIN_HEAD - CHAIN_TAIL
            chain = (text, *self.head[: CHAIN_HEAD - 1], CHAIN_GAP.format(left_out), *self.tail)
        return self.end.made(chain, text if self.last is None else self.last, asked)

    def after(self, text: str) -> _Walk:
        """The walk of the round that led here, asking this state's IBI as `text`."""
        head = (text, *self.head)
        length = self.length + 1
        tail = head[-CHAIN_TAIL:] if length < CHAIN_KEPT else self.tail
        last = self.last if self.length else text
        return _Walk(self.end, head[: CHAIN_KEPT - 1], tail, length, last)


_LOOP = _End(_alert("loop", []))


def _walk(views, ibi: Ibi, verbs, filepath: str, required_status: str, languages, memo):
    """The resolution process over local views: the rounds of :func:`resolution_process`
    with no hop limit (the states asked find a cycle, the only ``loop``), each state's
    walk taken from `memo` when another resolution made it already."""
    steps: Relation = verbs.steps if verbs is not None else ()
    file_list = bool(verbs and verbs.file_list)
    memo = memo if memo is not None else ResolutionMemo(answers=False)
    context = (filepath, file_list, required_status, tuple(languages))
    walks = memo.walks.get(context)
    if walks is None:
        walks = memo.walks[context] = {}
    state, text = (ibi.key, steps), ibi.text
    path: list[tuple[tuple[str, Relation], str]] = []  # the states asked, as asked
    places: dict[tuple[str, Relation], int] = {}  # state -> its place in `path`
    while True:
        walk = walks.get(state)
        if walk is not None:
            break
        place = places.get(state)
        if place is not None:  # a cycle: back where the walk was
            walk = _cycle(path, place, text, walks)
            state, text = path[place]
            del path[place:]
            break
        ended = _round(views, state, verbs, filepath, required_status, languages, memo)
        if isinstance(ended, _End):
            walk = _Walk(ended, (), (), 0, None)
            if path:  # a state other resolutions may reach
                walks[state] = walk
            break
        places[state] = len(path)
        path.append((state, text))
        next_ibi, next_steps = ended
        state, text = (parse_ibi(next_ibi).key, next_steps), next_ibi
    for state, asked in reversed(path):
        walk = walks[state] = walk.after(text)
        text = asked
    return walk.resolution(text, steps)


def _cycle(path: list, place: int, back: str, walks: dict) -> _Walk:
    """Make the walks of the states of a cycle, path[place:], each of which comes back
    to itself (its loop's chain goes once round, starting there); `back` is the IBI
    that led back to path[place].  Returns that of path[place]."""
    states = [state for state, _ in path[place:]]
    # arrived[k]: the IBI as the state before states[k] in the cycle names it
    arrived = [back] + [asked for _, asked in path[place + 1 :]]
    size = len(states)
    for at in range(size - 1, -1, -1):
        after = [arrived[(at + 1 + k) % size] for k in range(min(size, CHAIN_KEPT - 1))]
        tail = [arrived[(at + 1 + k) % size] for k in range(max(0, size - CHAIN_TAIL), size)]
        walks[states[at]] = _Walk(_LOOP, tuple(after), tuple(tail), size, None)
    return walks[states[0]]


def _round(views, state, verbs, filepath: str, required_status: str, languages, memo):
    """One round over local views: ask each view for the state, then decide (_select)."""
    key, steps = state
    file_list = bool(verbs and verbs.file_list)
    question = (key, steps, file_list, filepath)
    answers = memo.answers.get(question) if memo.answers is not None else None
    if answers is None:
        step_verbs = (
            verbs if verbs is not None and steps == verbs.steps else VerbList(steps, file_list)
        )
        answers = []
        for view in views:
            answer = property_list(
                view,
                key,
                filepath=filepath,
                verbs=step_verbs,
                relations=wanted_relations(view, steps),
                urlkey=str,
            )
            if answer is not None:
                answers.append((view, answer))
        if memo.answers is not None:
            memo.answers[question] = answers
    return _select(answers, steps, required_status, languages)


def resolution_process(ibi: Ibi, verbs, required_status: str, languages):
    """The resolution process without I/O (a generator): it yields each question, ``(IBI
    key, verb list, relation steps)``, and is sent the non-empty answers to it, a list of
    ``(source, PropertyList)`` in the configured order, where each source has
    ``info.name`` and ``info.address``; it returns the Resolution.  The network resolver
    (``ibistatic.federation``) runs it: each round asks every Archive over HTTP, so it
    sends at most MAX_HOPS rounds, and a resolution that needs more ends in the alert
    ``unavailable`` with a message that says so (not ``loop``: that is a cycle).  Local
    views are walked by :func:`resolve`, the same rounds with no such bound."""
    steps: Relation = verbs.steps if verbs is not None else ()
    file_list = bool(verbs and verbs.file_list)
    key, text = ibi.key, ibi.text
    chain: list[str] = []
    visited: set[tuple[str, Relation]] = set()
    for _ in range(MAX_HOPS):
        if (key, steps) in visited:
            return _alert("loop", chain + [text])
        visited.add((key, steps))
        chain.append(text)
        step_verbs = (
            verbs if verbs is not None and steps == verbs.steps else VerbList(steps, file_list)
        )
        answers = yield key, step_verbs, steps
        outcome = _select(answers, steps, required_status, languages)
        if isinstance(outcome, _End):
            return outcome.made(kept_chain(chain), text)
        next_ibi, steps = outcome
        key, text = parse_ibi(next_ibi).key, next_ibi
    return Resolution(
        None,
        "unavailable",
        chain=kept_chain(chain),
        message=HOP_LIMIT_MESSAGE.format(MAX_HOPS),
    )


def _select(answers, steps: Relation, required_status: str, languages):
    """§6.2 over one round of answers: how it ends (_End: a URL or an alert, its chain
    to be filled in), or the (IBI, steps) to ask next."""
    if not answers:
        return _End(_alert("not-found", []))
    if required_status == "Original":
        originals = [(v, a) for v, a in answers if a.state == "Original"]
        if not originals:
            return _End(_alert("no-original", []), own_ibi=True)
        if len(originals) > 1:
            return _End(_alert("conflict", []), own_ibi=True)
        answers = originals
    live = [(v, a) for v, a in answers if a.state != "Deleted"]
    if not live:
        view, answer = answers[0]
        stored = _first_form(answer.ibi)
        deleted = _alert(
            "deleted",
            [],
            archive=view.info.name,
            address=view.info.address,
            state="Deleted",
            ibi=stored or None,
        )
        return _End(deleted, own_ibi=not stored)
    outcome = _from_answers(live, steps, languages)
    if outcome is None:
        return _End(_alert("unavailable", []), own_ibi=True)
    return outcome


def _from_answers(answers, steps: Relation, languages: Sequence[str]):
    """The first answer that satisfies the request decides: how it ends when it has the
    URL, else (IBI, steps) to ask next; None when no answer gives either."""
    for view, answer in answers:
        concrete = _choose_languages(steps, answer, languages)
        if concrete is not None:
            known = answer.answer(concrete)
            if known is not None and known.url is not None:
                return _End(
                    Resolution(
                        url=known.url,
                        alert=None,
                        archive=view.info.name,
                        address=view.info.address,
                        state=known.state,
                        ibi=_first_form(known.ibi),
                        content_type=known.content_type,
                        relation=relation_text(concrete),
                    )
                )
        follow = _next_request(answer, concrete if concrete is not None else steps)
        if follow is not None:
            return follow
    return None


def _next_request(answer: PropertyList, steps: Relation) -> tuple[str, Relation] | None:
    """Where to ask next: the IBI of the longest answered prefix, or the next edition."""
    own = (_first_form(answer.ibi) or "").lower()
    for length in range(len(steps), 0, -1):
        prefix = steps[:length]
        if any(s.kind == "translation" and s.param is None for s in prefix):
            continue  # a language not chosen yet cannot be followed
        if any(s.kind == "metadata" and s.param is not None for s in prefix):
            continue  # the format cannot be asked again: the IBI gives the free format
        known = answer.answer(prefix)
        target = _first_form(known.ibi) if known is not None else None
        if target is None or (length == len(steps) and target.lower() == own):
            continue  # unknown, or the item itself with nothing left to apply
        return target, steps[length:]
    if steps and steps[0].kind == "lastedition":
        nextedition = _first_form(answer.nextedition)
        if nextedition is not None:
            return nextedition, steps
    return None
