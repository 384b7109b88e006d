"""The names of the host profiles (``hosts:`` in ibistatic.yaml, ``build --host``), and
which of them cannot share one output."""

from __future__ import annotations

__all__ = ["HOST_NAMES", "check_hosts"]

#: every host profile, in the order the documentation lists them
HOST_NAMES = ("github-pages", "netlify", "cloudflare-pages", "nginx", "apache", "s3")

#: hosts that read the same file in syntaxes the other rejects (Cloudflare Pages rejects
#: Netlify's forced "302!" and "410" rules): one output cannot serve both
EXCLUSIVE = (("netlify", "cloudflare-pages"),)


def check_hosts(hosts) -> None:
    """Raise ConfigError for hosts that cannot share one published tree."""
    from ...errors import ConfigError

    for first, second in EXCLUSIVE:
        if first in hosts and second in hosts:
            raise ConfigError(
                f"hosts: {first} and {second} read _redirects in two syntaxes that each "
                f"rejects of the other; build each into its own output "
                f"(ibistatic build --host {first} --output DIR)"
            )
