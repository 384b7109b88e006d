"""The host files of the chosen hosts (ibistatic.site.hosts): ``_redirects`` for
Netlify or Cloudflare Pages, Cloudflare's ``_worker.js``, ``.nojekyll``, the S3
manifest; with a notice for each rule limit a chosen host passes."""

from __future__ import annotations

from collections.abc import Iterator

from ...store.files import File, Notice
from ..hostfiles import first_by_path, host_files, rule_candidates
from ..hosts import needs_rules, rule_warnings
from ..memo import PerRepository


class HostFiles:
    name = "host redirect files"
    pages = False
    remembered = False
    #: forked in a full build, the costliest first: every rule of every chosen host's files
    apart = 2

    def files(self, plan, context) -> Iterator[File | Notice]:
        # 2.1-2.7 s of each watch republish at 100,000 items: made only when written
        hosts = context.config.hosts
        rules = _rules(context.state) if needs_rules(hosts) else []
        for relative, lines in host_files(context.config, rules):
            yield File(relative, lines=lines)  # about 50 MB each at 100,000 items: streamed
        for warning in rule_warnings(hosts, rules):
            yield Notice(warning)


def _rules(state) -> list:
    """hostfiles.host_rules of every published URL, each repository's candidates kept
    in the state's memo (site.memo): a republish asks http_answer of its own URLs."""
    candidates = state.memo.get(HostFiles.name)
    if candidates is None:
        candidates = state.memo[HostFiles.name] = PerRepository(rule_candidates)
    return first_by_path(candidates.joined(state.published))


OUTPUT = HostFiles()
