"""Host profiles: what each host needs in the published tree, and its limits
(docs/hosting.md, "Host profiles").

A profile is chosen with ``hosts:`` in ibistatic.yaml or ``build --host``.  Each writes
its own files (:func:`profile_files`) and checks that host's documented limits: its
rules (:func:`rule_warnings`, from the host rules) and the published tree's files and
bytes (:func:`tree_warnings`, after the build).  Only the chosen hosts are checked.
With none chosen the build writes the *portable* output: pages, ``404.html``,
``.nojekyll`` and an unforced ``_redirects``, harmless on every static host.

No profile writes a server configuration into the published tree: the nginx and Apache
virtual hosts name the build machine's paths and are written by ``ibistatic
server-config`` (``nginx`` and ``apache`` here add nothing to the tree).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from ...config import HOST_NAMES, check_hosts
from ...core.urls import base_path
from ..hostfiles import HostRule, cited_rules, host_rules, redirects_lines
from . import cloudflare, github_pages, netlify, s3
from .limits import TreeLimits, tree_warnings

__all__ = [
    "HOST_NAMES",
    "check_hosts",
    "profile_files",
    "host_files",
    "write_host_files",
    "needs_rules",
    "rule_warnings",
    "tree_warnings",
    "chosen_tree_limits",
    "NOJEKYLL",
]

#: tells GitHub Pages not to run Jekyll (which drops `_`-folders); empty, harmless elsewhere
NOJEKYLL = ".nojekyll"

Files = Iterator[tuple[str, Iterable[str]]]


def profile_files(
    config, rules: list[HostRule], base: str, made: Iterable[str] | None = None
) -> Files:
    """(path inside the site, its lines) of every file the chosen hosts need; `made`: the
    portable ``_redirects``' line of each rule, made already (hostfiles.redirects_lines)."""
    hosts = config.hosts
    check_hosts(hosts)
    if not hosts or "github-pages" in hosts:
        yield NOJEKYLL, iter(())
    if not hosts:
        yield "_redirects", redirects_lines(rules, base, made)
    cited = cited_rules(rules) if {"netlify", "s3"} & set(hosts) else []
    if "netlify" in hosts:
        yield "_redirects", netlify.redirects_lines(cited, base)
    if "cloudflare-pages" in hosts:
        yield "_redirects", cloudflare.redirects_lines(rules, base)
        yield cloudflare.WORKER, iter(cloudflare.worker_script(base).splitlines())
    if "s3" in hosts:
        yield s3.MANIFEST, s3.manifest_lines(cited, base)


#: the profiles whose files hold the rules (the portable output's `_redirects` too)
RULE_FILE_HOSTS = frozenset({"netlify", "cloudflare-pages", "s3"})


def needs_rules(hosts: Iterable[str]) -> bool:
    """Whether the files of `hosts` hold any rule: nginx and Apache take theirs from
    ``server-config``, GitHub Pages none, so a site for them only needs no rule made."""
    hosts = tuple(hosts)
    return not hosts or not RULE_FILE_HOSTS.isdisjoint(hosts)


def rule_warnings(hosts: Iterable[str], rules: list[HostRule]) -> list[str]:
    """What the chosen hosts will not apply of their rules, one warning each."""
    warnings: list[str] = []
    cited = cited_rules(rules) if {"netlify", "s3"} & set(hosts) else []
    if "netlify" in hosts:
        warnings += netlify.rule_warnings(cited)
    if "cloudflare-pages" in hosts:
        warnings += cloudflare.rule_warnings(rules)
    if "s3" in hosts:
        warnings += s3.rule_warnings(cited)
    return warnings


#: the documented limits of the published tree, for the hosts that have any
TREE_LIMITS: dict[str, TreeLimits] = {
    "github-pages": github_pages.TREE_LIMITS,
    "cloudflare-pages": cloudflare.TREE_LIMITS,
}


def chosen_tree_limits(hosts: Iterable[str]) -> list[TreeLimits]:
    return [TREE_LIMITS[name] for name in hosts if name in TREE_LIMITS]


def host_files(
    config, rules: list[HostRule], made: Iterable[str] | None = None
) -> Iterator[tuple[str, Iterator[str]]]:
    """(path inside the site, its lines) of the host files of `config.hosts`
    (ibistatic.site.hosts), each line made when asked: a file grows with the site and
    is never held whole.  Never a server configuration: those name the build machine's paths
    and are written by ``ibistatic server-config``, outside the published tree.
    `made`: the portable ``_redirects``' lines made already (redirects_lines)."""
    yield from profile_files(config, rules, base_path(config.site_url), made)


def write_host_files(config, published, out: Path) -> list[str]:
    """Write the host files of `config.hosts` for the published URLs into `out`;
    return the warnings about those hosts' rule limits."""
    out = Path(out)
    rules = host_rules(published)
    for relative, lines in host_files(config, rules):
        (out / relative).parent.mkdir(parents=True, exist_ok=True)
        text = "".join(line + "\n" for line in lines)
        (out / relative).write_text(text, encoding="utf-8", newline="\n")
    return rule_warnings(config.hosts, rules)
