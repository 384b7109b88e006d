"""The host redirect files: ``_redirects`` (Netlify, Cloudflare Pages; ibistatic.site.hostfiles),
with a notice for each host limit the site exceeds."""

from __future__ import annotations

from collections.abc import Iterator

from ...store.files import File, Notice
from ..hostfiles import host_files, host_rules, limit_warnings


class HostFiles:
    name = "host redirect files"
    pages = False
    remembered = False

    def files(self, plan, context) -> Iterator[File | Notice]:
        rules = host_rules(context.published)
        for relative, lines in host_files(context.config, rules):
            yield File(relative, lines=lines)  # about 50 MB each at 100,000 items: streamed
        for warning in limit_warnings(rules):
            yield Notice(warning)


OUTPUT = HostFiles()
