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
   the verb list unchanged; a chain that comes back to where it was is a ``loop``.
   A prefix with ``.metadata(oai_dc)`` in it is not followed: asking the IBI it names
   again would give that item's free-format target, not the format (a gap of the
   standard's loop; an Archive holding the items answers it directly).
5. ``+`` without a language is chosen from the Accept-Language preferences among the
   translations the answer offers (the item itself when its own language is
   preferred or when no translation matches).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from .identifiers import Ibi, parse_ibi
from .languages import match_language
from .outcome import ALERTS, MAX_HOPS, Resolution, _alert
from .properties import ArchiveView, PropertyList, RelationAnswer, property_list
from .relations import Relation, Step, VerbList, relation_text

__all__ = ["Resolution", "resolve", "resolution_process", "ALERTS", "wanted_relations"]


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


def wanted_relations(view: ArchiveView, steps: Relation) -> list[Relation]:
    """The relations of the Archive's set that the request needs: the wanted one (every
    language for a language-less translation step) and its prefixes, to follow.
    Memoized on the view: an Archive's relation set does not change."""
    memo = view.__dict__.setdefault("_wanted_relations", {})
    found = memo.get(steps)
    if found is None:
        found = memo[steps] = _wanted_relations(view, steps)
    return found


def _wanted_relations(view: ArchiveView, steps: Relation) -> list[Relation]:
    prefixes = [()] + [steps[:n] for n in range(1, len(steps) + 1)]
    open_prefixes = [
        p for p in prefixes if any(s.kind == "translation" and s.param is None for s in p)
    ]
    if view.info.relations is not None or open_prefixes:
        # a declared subset limits what the Archive answers; an open '+' is made
        # concrete with the languages the Archive holds
        chosen = [r for r in view.relations() if any(_pattern_matches(r, p) for p in prefixes)]
        if view.info.relations is not None:
            return chosen
        concrete = [p for p in prefixes if p not in open_prefixes]
        return concrete + [r for r in chosen if r not in concrete]
    # the default set is every relation of the grammar: ask for exactly these
    return prefixes


def _first_form(forms: tuple[str, ...] | None) -> str | None:
    return forms[1] if forms is not None and len(forms) >= 2 else None


def _answers_something(known: RelationAnswer | None) -> bool:
    """Whether the answer names the related item or gives its URL."""
    return known is not None and (known.ibi is not None or known.url is not None)


def _offered_languages(answer: PropertyList, prefix: Relation) -> list[str]:
    """The languages of the translations `answer` offers right after `prefix`."""
    at = len(prefix)
    return sorted(
        {
            relation[at].param
            for relation, known in answer.relations.items()
            if len(relation) > at
            and relation[:at] == prefix
            and relation[at].kind == "translation"
            and relation[at].param is not None
            and _answers_something(known)
        }
    )


def _choose_languages(
    steps: Relation, answer: PropertyList, preferences: Sequence[str]
) -> Relation | None:
    """Make each language-less translation step concrete from what `answer` offers.

    None when the answer does not reach that step (the relation must be followed first).
    """
    steps = list(steps)
    for index, step in enumerate(steps):
        if step.kind != "translation" or step.param is not None:
            continue
        prefix = tuple(steps[:index])
        offered = _offered_languages(answer, prefix)
        if not offered:
            if _answers_something(answer.answer(prefix + (step,))):
                continue  # the item has no language: `.translation` is the item itself
            return None
        chosen = match_language(list(preferences), offered)
        if chosen is None:
            del steps[index]  # no translation matches: the item itself
            return _choose_languages(tuple(steps), answer, preferences)
        steps[index] = Step("translation", chosen)
    return tuple(steps)


def resolve(
    views: Sequence[ArchiveView],
    ibi: Ibi | str,
    verbs: VerbList | None = None,
    *,
    filepath: str = "",
    required_status: str = "",
    languages: Sequence[str] = (),
) -> Resolution:
    """Resolve `ibi` with `verbs` over the Archives `views`, in order (§8).

    `languages` are the Accept-Language tags, most preferred first.  The outcome
    records the relation asked (``asked``), which decides its HTTP answer.
    """
    ibi = parse_ibi(ibi) if isinstance(ibi, str) else ibi
    outcome = _resolve(views, ibi, verbs, filepath, required_status, languages)
    asked = verbs.steps if verbs is not None else ()
    return outcome if outcome.asked == asked else replace(outcome, asked=asked)


def _resolve(views, ibi: Ibi, verbs, filepath: str, required_status: str, languages) -> Resolution:
    """Drive :func:`resolution_process`, asking each local Archive view in turn."""
    process = resolution_process(ibi, verbs, required_status, languages)
    question = next(process)
    while True:
        key, step_verbs, steps = question
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
        try:
            question = process.send(answers)
        except StopIteration as done:
            return done.value


def resolution_process(ibi: Ibi, verbs, required_status: str, languages):
    """The resolution process without I/O (a generator): it yields each question, ``(IBI
    key, verb list, relation steps)``, and is sent the non-empty answers to it, a list of
    ``(source, PropertyList)`` in the configured order, where each source has
    ``info.name`` and ``info.address``; it returns the Resolution.  The same process
    runs over local views (:func:`resolve`) and over Archives on the network
    (``ibistatic.federation``)."""
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
        outcome = _select(answers, steps, chain, text, required_status, languages)
        if isinstance(outcome, Resolution):
            return outcome
        next_ibi, steps = outcome
        key, text = parse_ibi(next_ibi).key, next_ibi
    return _alert("loop", chain)


def _select(answers, steps: Relation, chain: list[str], text: str, required_status: str, languages):
    """§6.2 over one round of answers: a Resolution (a URL or an alert), or the
    (IBI, steps) to ask next."""
    if not answers:
        return _alert("not-found", chain)
    if required_status == "Original":
        originals = [(v, a) for v, a in answers if a.state == "Original"]
        if not originals:
            return _alert("no-original", chain, ibi=text)
        if len(originals) > 1:
            return _alert("conflict", chain, ibi=text)
        answers = originals
    live = [(v, a) for v, a in answers if a.state != "Deleted"]
    if not live:
        view, answer = answers[0]
        return _alert(
            "deleted",
            chain,
            archive=view.info.name,
            address=view.info.address,
            state="Deleted",
            ibi=_first_form(answer.ibi) or text,
        )
    outcome = _from_answers(live, steps, languages, chain)
    if outcome is None:
        return _alert("unavailable", chain, ibi=text)
    return outcome


def _from_answers(answers, steps: Relation, languages: Sequence[str], chain: list[str]):
    """The first answer that satisfies the request decides: a Resolution when it has the
    URL (`chain`: the IBIs asked), else (IBI, steps) to ask next; None when no answer
    gives either."""
    for view, answer in answers:
        concrete = _choose_languages(steps, answer, languages)
        if concrete is not None:
            known = answer.answer(concrete)
            if known is not None and known.url is not None:
                return Resolution(
                    url=known.url,
                    alert=None,
                    archive=view.info.name,
                    address=view.info.address,
                    state=known.state,
                    ibi=_first_form(known.ibi),
                    content_type=known.content_type,
                    relation=relation_text(concrete),
                    chain=tuple(chain),
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
    if steps and steps[0].kind == "lastedition" and answer.nextedition is not None:
        return _first_form(answer.nextedition), steps
    return None
