"""The script of every redirect and alert page, as one cached asset, and the
Content-Security-Policy those pages carry (docs/site.md, "Redirect pages")."""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

import jinja2

__all__ = ["PAGE_POLICY", "target_script"]

_SOURCE = Path(__file__).resolve().parent.parent / "site_src" / "_target_script.html"

#: the Content-Security-Policy of redirect and alert pages: no inline script at all, only the
#: site's own scripts (the shared one, and facts.js and resolve.js it may load), style sheet
#: and index; the page's data is a JSON block, which is never executed.  Images may come
#: from anywhere: the institution's logo (logo:) may be on its own host
PAGE_POLICY = (
    "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; "
    "img-src * data:; base-uri 'none'; form-action 'none'"
)


@lru_cache(maxsize=1)
def target_script() -> tuple[str, str]:
    """(name in assets/, text) of the script every redirect and alert page loads: one
    cached file instead of the same bytes in every page; the name holds a digest of the
    text, so a browser never runs a stale copy after a build changes it."""
    text = jinja2.Template(_SOURCE.read_text(encoding="utf-8")).render()
    return f"target-{hashlib.sha256(text.encode()).hexdigest()[:12]}.js", text
