"""One resolution over the network: each question put to the Archives by the holder rule,
within the resolution's budget (docs/protocol.md, "Who holds an IBI").

- An IBI with a remembered holder is asked of its holder alone; its answer is taken when
  it arrives.  Another Archive's claim is never followed.  A holder that is not included,
  rests, fails or times out makes the IBI ``unavailable`` for that request (never handed
  on); a holder that answers empty (or, for the original, no longer claims it) releases
  it, and the question is asked as for a new IBI.
- A new IBI is asked of every usable Archive at once.  An answer that settles the
  question is taken as soon as every Archive ranked before its own (the order they first
  joined) has answered, so a hostile Archive that answers fast cannot win over an older
  one, and a hung one is waited for at most its timeout (then it rests).  The original
  (``ibiurl.requireditemstatus=Original``) needs every answer: two claims are an alert.
  The Archive taken becomes the holder; provisionally when an Archive ranked before it
  gave no answer (it left, rests, failed): once one of those answers again, the next
  request for the IBI is asked of every Archive and decided anew.
- Every resolution has a deadline and a number of rounds and of requests it may not
  exceed; past them it ends in ``unavailable``, saying which limit it met.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, replace

from ..core.identifiers import parse_ibi
from ..core.resolution import resolution_process
from ..core.urls import PersistentUrl, parsed_pairs
from .holders import ANY, ORIGINAL
from .network import Answered, ResolverLimits, answered_by, throttle, unavailable
from .wire import url_request_pairs

__all__ = ["resolve_over", "run_process", "Budget", "Unavailable"]

log = logging.getLogger("ibistatic.resolver")

#: an Archive that gave no usable answer (down, hung, garbage, a misfit, the deadline)
FAILED = object()
#: probes of resting Archives left to finish after their round decided (one per Archive)
_probes: set[asyncio.Task] = set()


class Unavailable(Exception):
    """The question cannot be answered now; the message says why."""


class Budget:
    """What is left to one resolution: time, rounds and requests."""

    def __init__(self, limits: ResolverLimits) -> None:
        self.limits = limits
        self.deadline = time.monotonic() + limits.deadline
        self.rounds, self.requests = limits.max_rounds, limits.max_requests

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def round(self) -> None:
        self.rounds -= 1
        if self.rounds < 0:
            raise Unavailable(
                f"it follows more IBIs than a resolution may ({self.limits.max_rounds - 1})"
            )

    def spend(self, requests: int) -> None:
        if requests > self.requests:
            raise Unavailable(
                "it needs more requests to Archives than a resolution may send "
                f"({self.limits.max_requests})"
            )
        if self.left() <= 0:
            self.late()
        self.requests -= requests

    def late(self):
        raise Unavailable(f"it takes longer than a resolution may ({self.limits.deadline:g} s)")


@dataclass(frozen=True)
class Question:
    key: str  # the IBI asked, as a key
    kind: str  # ANY or ORIGINAL
    verbs: object  # the round's verb list
    steps: tuple
    languages: tuple


async def resolve_over(
    sources,
    parsed: PersistentUrl,
    client_ip: str,
    accept_language: str | None,
    languages,
    *,
    holders=None,
    limits: ResolverLimits = ResolverLimits(),
) -> Answered:
    """The resolution process over `sources` (in rank order), each question put to them
    by the holder rule, within `limits`: :func:`run_process` with its defaults."""
    return await run_process(sources, parsed, client_ip, languages, holders, limits)


async def run_process(sources, parsed, client_ip, languages, holders, limits, ranked=None):
    """The resolution process of `parsed` over `sources` (in rank order); `ranked`: the
    holder ids of every registered Archive by rank, included or not (default: the
    sources')."""
    kind = ORIGINAL if parsed.required_status == "Original" else ANY
    process = resolution_process(parsed.ibi, parsed.verbs, parsed.required_status, languages)
    question = next(process)
    budget, chain, complete = Budget(limits), [], True
    asked = parsed.verbs.steps
    ranked = ranked if ranked is not None else [_holder_id(s) for s in sources]
    while True:
        key, step_verbs, steps = question
        chain.append(key)
        at = parsed  # the first round asks what the client asked
        if key != parsed.ibi.key or step_verbs is not parsed.verbs:
            at = replace(parsed, ibi=parse_ibi(key), verbs=step_verbs)
        pairs = url_request_pairs(parsed_pairs(at, client_ip))
        ask = Round(sources, pairs, Question(key, kind, step_verbs, steps, tuple(languages)))
        try:
            replies = await ask.run(holders, budget, ranked)
        except Unavailable as why:
            return Answered(unavailable(chain, str(why), asked), complete=False)
        complete = complete and ask.complete
        try:
            question = process.send(replies)
        except StopIteration as done:
            return answered_by(replace(done.value, asked=asked), replies, complete)
        except Exception as error:  # an answer no check foresaw: that resolution only
            log.warning("resolution of %s: an answer could not be followed (%r)", key, error)
            message = "an Archive's answer could not be followed"
            return Answered(unavailable(chain, message, asked), complete=False)


def _holder_id(source) -> str:
    return getattr(source, "holder_id", None) or source.info.name


def _usable(source) -> bool:
    usable = getattr(source, "usable", None)
    return usable() if usable is not None else True


def _probing(source) -> bool:
    """Whether `source` is a resting Archive asked once to see if it is back."""
    return getattr(getattr(source, "health", None), "probing", False)


def _reply(source, answer):
    answering = getattr(source, "answering", None)
    return answering(answer) if answering is not None else source


class Round:
    """One question put to the Archives (module docstring)."""

    def __init__(self, sources, pairs, question: Question) -> None:
        self.sources, self.pairs, self.question = sources, pairs, question
        self.complete = True  # every Archive that might hold it gave an answer
        self.late = False  # the resolution's deadline cut an answer short
        self._settled: dict = {}  # source -> _settles(its answer), tried once
        self.probes: set = set()  # resting Archives asked to see if they are back

    async def run(self, holders, budget: Budget, ranked) -> list:
        budget.round()
        question = self.question
        found = holders.get(question.key, question.kind) if holders is not None else None
        if found is not None and not self._back(found[1]):
            replies = await self._from_holder(found[0], holders, budget)
            if replies is not None:
                return replies
        return await self._discover(holders, budget, ranked)

    def _back(self, pending) -> bool:
        """Whether an Archive that was missing when the holder was chosen answers again
        (then the question is asked anew: it might be the holder)."""
        for source in self.sources:
            if _holder_id(source) in pending:
                health = getattr(source, "health", None)
                if health is None or health.failures == 0:
                    return True
        return False

    async def _ask(self, source, budget: Budget):
        """The source's answer, None (empty) or FAILED; never waits past the deadline."""
        try:
            async with asyncio.timeout(max(budget.left(), 0)):
                return await source.ask(self.pairs, self.question.steps)
        except TimeoutError:  # the deadline (a peer's own timeout is a PeerError)
            self.complete, self.late = False, True
            return FAILED
        except Exception as error:
            self.complete = False
            name = source.info.name
            if throttle((name, "failed")):
                log.warning("Archive %s: no usable answer (%s)", name, error or "deadline")
            return FAILED

    async def _from_holder(self, holder: str, holders, budget: Budget):
        question = self.question
        source = next((s for s in self.sources if _holder_id(s) == holder), None)
        if source is None:
            raise Unavailable(f"the Archive that holds it ({holder}) is not included now")
        if not _usable(source):
            raise Unavailable(f"the Archive that holds it ({holder}) is not answering")
        budget.spend(1)
        answer = await self._ask(source, budget)
        if answer is FAILED:
            if self.late:
                budget.late()
            raise Unavailable(f"the Archive that holds it ({holder}) did not answer")
        if answer is not None and (question.kind == ANY or answer.state == "Original"):
            return [(_reply(source, answer), answer)]
        holders.release(question.key, question.kind, holder)
        log.info("IBI %s: %s no longer holds it (%s); asking every Archive", *_who(self, holder))
        return None

    async def _discover(self, holders, budget: Budget, ranked) -> list:
        sources = [s for s in self.sources if _usable(s)]
        if len(sources) < len(self.sources):
            self.complete = False  # a resting Archive might hold it
        budget.spend(len(sources))
        self.probes = {s for s in sources if _probing(s)}
        tasks = {asyncio.ensure_future(self._ask(s, budget)): s for s in sources}
        results: dict = {}
        try:
            chosen, replies = await self._settle(sources, tasks, results)
        finally:
            for task, source in tasks.items():
                if source in self.probes and not task.done():
                    _probes.add(task)  # its answer tells whether it is back
                    task.add_done_callback(_probes.discard)
                else:
                    task.cancel()
        if any(probe not in results for probe in self.probes):
            self.complete = False  # it may hold the IBI: do not keep the outcome
        if self.late and not replies:
            budget.late()
        self._learn(chosen, sources, results, holders, ranked)
        return replies

    async def _settle(self, sources, tasks, results):
        decide = self._all_answers if self.question.kind == ORIGINAL else self._first_answer
        while True:
            decision = decide(sources, results)
            if decision is not None:
                return decision
            pending = [task for task in tasks if tasks[task] not in results]
            done, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                results[tasks[task]] = task.result()

    def _first_answer(self, sources, results):
        """The first answer in rank order that settles the question (a URL, an IBI to
        follow, or the item's deletion), once every source ranked before it answered;
        when none does, every non-empty one (the process then finds the alert)."""
        answered = [s for s in sources if results.get(s, FAILED) not in (FAILED, None)]
        if len(answered) == 1 and len(results) == len(sources):
            only = answered[0]  # taken whether it settles the question or not: no trial
            return only, [(_reply(only, results[only]), results[only])]
        kept = []
        for source in sources:
            if source not in results:
                if source in self.probes:
                    continue  # a resting Archive is not waited for
                return None  # an Archive ranked before has yet to answer
            answer = results[source]
            if answer is FAILED or answer is None:
                continue
            settles = self._settled.get(source, ...)
            if settles is ...:
                settles = self._settled[source] = self._settles(source, answer)
            if settles is None:
                results[source] = FAILED
            elif settles:
                return source, [(_reply(source, answer), answer)]
            else:
                kept.append((source, answer))
        chosen = kept[0][0] if kept else None
        return chosen, [(_reply(s, a), a) for s, a in kept]

    def _all_answers(self, sources, results):
        """For the original: every answer (two claims are an alert); the holder is the one
        Archive that claims it."""
        if any(s not in results and s not in self.probes for s in sources):
            return None
        kept = [(s, results[s]) for s in sources if results.get(s, FAILED) not in (FAILED, None)]
        originals = [s for s, answer in kept if answer.state == "Original"]
        chosen = originals[0] if len(originals) == 1 else None
        return chosen, [(_reply(s, a), a) for s, a in kept]

    def _settles(self, source, answer) -> bool | None:
        """Whether `answer` alone gives the URL or the IBI to ask next (a trial of the
        process); None when the process cannot read it (the answer is dropped)."""
        if answer.state == "Deleted":
            return True  # its Archive says so first: a claim by another does not revive it
        question = self.question
        trial = resolution_process(
            parse_ibi(question.key), question.verbs, "", list(question.languages)
        )
        try:
            next(trial)
            trial.send([(_reply(source, answer), answer)])
        except StopIteration as done:
            return done.value.url is not None
        except Exception as error:
            if throttle((source.info.name, "unreadable")):
                log.warning("Archive %s: an answer the process cannot read (%r)", source, error)
            return None
        finally:
            trial.close()
        return True  # it names the IBI to ask next

    def _learn(self, chosen, sources, results, holders, ranked) -> None:
        """Remember the holder, and report the other Archives that claimed the IBI."""
        question = self.question
        if chosen is None:
            return
        others = [
            s.info.name for s in sources if s is not chosen and results.get(s) not in (None, FAILED)
        ]
        if others and throttle((question.key, "claims")):
            log.warning(
                "IBI %s: %s answered first; also claimed by %s (not followed)",
                question.key,
                chosen.info.name,
                ", ".join(others),
            )
        if holders is not None:
            pending = self._missing(chosen, sources, results, ranked)
            holders.remember(question.key, question.kind, _holder_id(chosen), pending)

    def _missing(self, chosen, sources, results, ranked) -> tuple[str, ...]:
        """The Archives ranked before `chosen` that gave no answer (not included now,
        resting, failed): each might hold the IBI, and is asked again once it is back."""
        included = {_holder_id(s): s for s in self.sources}
        missing = []
        for holder_id in ranked:
            if holder_id == _holder_id(chosen):
                break
            source = included.get(holder_id)
            if source is None or results.get(source, FAILED) is FAILED:
                missing.append(holder_id)
        return tuple(missing)


def _who(round_: Round, holder: str) -> tuple[str, str, str]:
    reason = "answered empty" if round_.question.kind == ANY else "does not claim the original"
    return round_.question.key, holder, reason
