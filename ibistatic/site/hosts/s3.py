"""Amazon S3 website hosting: one object redirect per persistent URL that redirects.

S3 has no redirect file (a bucket's routing rules stop at 50): a redirect is an empty
object whose ``x-amz-website-redirect-location`` names the target, and S3 answers it
with 301.  The build writes their manifest, ``_ibistatic/s3-redirects.tsv`` (object
key, tab, location), and docs/hosting.md the ``aws`` commands that upload it.  An
object key is at most 1,024 bytes (UTF-8); S3 cannot answer 410 or 303.  S3 website
endpoints read ``+`` in a request path as a space: a key with ``+`` is listed with
spaces too, the key browsers and ``curl`` reach.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..hostfiles import _EDITED, HostRule, redirect_rules

__all__ = ["MANIFEST", "KEY_BYTES", "manifest_lines", "rule_warnings"]

MANIFEST = "_ibistatic/s3-redirects.tsv"
KEY_BYTES = 1024


def _key(rule: HostRule, base: str) -> str:
    """The object key of a rule: its decoded path, without the leading ``/``."""
    return (base + rule.path)[1:]


def _fits(key: str, url: str) -> bool:
    return len(key.encode("utf-8")) <= KEY_BYTES and not any(c in key + url for c in "\t\n\r")


def manifest_lines(rules: list[HostRule], base: str) -> Iterator[str]:
    yield f"# S3 object redirects (key<TAB>x-amz-website-redirect-location), {_EDITED}."
    listed = {_key(rule, base) for rule in rules}
    for rule in redirect_rules(rules):
        key = _key(rule, base)
        if not _fits(key, rule.url):
            continue
        yield f"{key}\t{rule.url}"
        spaced = key.replace("+", " ")  # where S3 looks for it; unless a rule is there
        if spaced != key and spaced not in listed:
            yield f"{spaced}\t{rule.url}"


def rule_warnings(rules: list[HostRule]) -> list[str]:
    left = sum(1 for rule in redirect_rules(rules) if not _fits(_key(rule, "/"), rule.url))
    if not left:
        return []
    return [
        f"s3: {left:,} persistent URLs have object keys longer than {KEY_BYTES:,} bytes "
        "(or a tab or line break): left out of the manifest; their pages answer"
    ]
