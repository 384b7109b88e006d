"""Redirect pages and alert pages: ``<path>/index.html`` of every persistent URL an item
publishes (a redirect page when the resolver answers with a URL, else an alert page).

``redirect-pages: false`` (the default for hosts that answer every persistent URL
themselves) writes no redirect page.  ``alert-pages: false`` (the default when a host is
chosen) leaves the alerts to ``404.html`` (and a server's fallback to it),
which answer them alike, except ``deleted``: nginx and Apache answer a deleted item's URLs
410 Gone with its page (site.hostfiles), so that page is kept."""

from __future__ import annotations

from collections.abc import Iterator

from ...store.files import File
from .. import pages

#: alerts whose page is written even with `alert-pages: false`: a host rule serves it
_KEPT_ALERTS = frozenset({"deleted"})


class RedirectPages:
    name = "redirect and alert pages"
    pages = True
    remembered = False  # the state's published URLs name them

    def files(self, plan, context) -> Iterator[File]:
        alerts = context.config.writes_alert_pages
        redirects = context.config.writes_redirect_pages
        for key, targets in context.targets.items():
            for target in targets:
                if target.resolution.url is not None and not redirects:
                    continue  # the host's redirect answers it
                if not alerts and _left_to_404(target.resolution):
                    continue
                yield File(
                    target.path + "/index.html",
                    pages.target_page(context.site, target, context.loaded),
                    owner=key,
                )


def _left_to_404(resolution) -> bool:
    return resolution.url is None and resolution.alert not in _KEPT_ALERTS


OUTPUT = RedirectPages()
