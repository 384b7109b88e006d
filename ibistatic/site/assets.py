"""The site's static assets: those of ``site_src/assets``, the generated ``facts.js``,
the standard's tables for the in-browser resolver (from :mod:`ibistatic.core.facts`), and
``target-<digest>.js``, the script of every redirect and alert page (pages.target_script)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from ..core.facts import browser_facts
from .pages import SITE_SRC
from .script import target_script

__all__ = ["FACTS_ASSET", "copy_assets", "facts_script"]

#: the standard's tables for the in-browser resolver, written at build time
FACTS_ASSET = "facts.js"


def facts_script() -> str:
    """``assets/facts.js``: :func:`..core.facts.browser_facts` as a script that sets
    ``ibistaticFacts`` (in a page) or is a module (under node)."""
    facts = json.dumps(browser_facts(), ensure_ascii=True, sort_keys=True, indent=1)
    return (
        "/* ibistatic: the standard's facts for resolve.js, generated from\n"
        " * ibistatic/core/facts.py by the build: do not edit. */\n"
        f"(function (root) {{\n  var facts = {facts};\n"
        "  root.ibistaticFacts = facts;\n"
        '  if (typeof module !== "undefined" && module.exports) module.exports = facts;\n'
        '})(typeof window !== "undefined" ? window : globalThis);\n'
    )


def copy_assets(out: Path) -> None:
    """The static assets of site_src/assets, and the generated facts.js beside them."""
    (out / "assets").mkdir(parents=True, exist_ok=True)
    (out / "assets" / FACTS_ASSET).write_text(facts_script(), encoding="utf-8")
    name, text = target_script()
    (out / "assets" / name).write_text(text, encoding="utf-8")
    source = SITE_SRC / "assets"
    for directory, subdirectories, files in os.walk(source):
        subdirectories.sort()
        relative = Path(directory).relative_to(source)
        (out / "assets" / relative).mkdir(parents=True, exist_ok=True)
        for name in sorted(files):
            shutil.copyfile(Path(directory) / name, out / "assets" / relative / name)
