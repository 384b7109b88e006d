"""The host files of the chosen hosts (ibistatic.site.hosts): ``_redirects`` for
Netlify or Cloudflare Pages, Cloudflare's ``_worker.js``, ``.nojekyll``, the S3
manifest; with a notice for each rule limit a chosen host passes."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from operator import attrgetter

from ...core.urls import base_path
from ...store.files import File, Notice
from ..hostfiles import first_by_path, portable_line, rule_candidates
from ..hosts import host_files, needs_rules, rule_warnings
from ..memo import CHANGES, FirstByPath, PerRepository


class HostFiles:
    name = "host redirect files"
    pages = False
    remembered = False
    #: forked in a full build, the costliest first: every rule of every chosen host's files
    apart = 2

    def files(self, plan, context) -> Iterator[File | Notice]:
        # the costliest part of a watch republish: made only when written
        hosts = context.config.hosts
        kept = _kept(context) if context.kept and needs_rules(hosts) else None
        if kept is not None:
            rules = kept.by_path.update(kept.candidates)
        else:
            rules = _rules(context.state) if needs_rules(hosts) else []
        made = kept.by_path.texts if kept is not None else None  # the portable lines kept
        for relative, lines in host_files(context.config, rules, made):
            yield File(relative, lines=lines)  # as large as the site: streamed
        for warning in rule_warnings(hosts, rules):
            yield Notice(warning)


def _rules(state) -> list:
    """hostfiles.host_rules of every published URL, each repository's candidates kept
    in the state's memo (site.memo): a republish asks http_answer of its own URLs."""
    candidates = state.memo.get(HostFiles.name)
    if not isinstance(candidates, PerRepository):
        candidates = state.memo[HostFiles.name] = PerRepository(rule_candidates)
    return first_by_path(candidates.joined(state.published, state.memo.get(CHANGES)))


@dataclass(frozen=True)
class _Kept:
    """What watch keeps: the candidates, and the first of each path with its line."""

    candidates: PerRepository
    by_path: FirstByPath


def _kept(context) -> _Kept:
    """The rules of every published URL as kept for watch (candidates.joined called)."""
    state = context.state
    kept = state.memo.get(HostFiles.name)
    if not isinstance(kept, _Kept):
        base = base_path(context.config.site_url)

        def line(rule) -> str:  # its line of the portable _redirects ("": a 410)
            return portable_line(rule, base)

        # the lines only for the portable _redirects: the hosts' own files format theirs
        portable = not context.config.hosts
        by_path = FirstByPath(attrgetter("path"), line if portable else _no_line)
        kept = state.memo[HostFiles.name] = _Kept(PerRepository(rule_candidates), by_path)
    kept.candidates.joined(state.published, state.memo.get(CHANGES))
    return kept


def _no_line(rule) -> str:
    return ""


OUTPUT = HostFiles()
