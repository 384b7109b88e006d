"""Writes the key tables of the documentation from the descriptors' schemas.

    python scripts/schema_tables.py          # rewrite the tables in docs/
    python scripts/schema_tables.py --check  # exit 1 when a table differs from its schema

A table sits between ``<!-- schema: NAME ... -->`` and ``<!-- end of schema -->`` in
docs/configuration.md (ibistatic.yaml) and docs/archive-format.md (archive.yaml,
item.yaml); NAME is the descriptor.  Edit the schema (``ibistatic/config.py``,
``ibistatic/archive/descriptors.py``), never the table; tests/test_schemas.py fails
while a table is stale.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the schemas of this checkout, wherever ibistatic is installed

from ibistatic.archive.descriptors import ARCHIVE_SCHEMA, ITEM_SCHEMA  # noqa: E402
from ibistatic.config import CONFIG_SCHEMA  # noqa: E402

SCHEMAS = {schema.descriptor: schema for schema in (CONFIG_SCHEMA, ARCHIVE_SCHEMA, ITEM_SCHEMA)}
DOCS = (ROOT / "docs" / "configuration.md", ROOT / "docs" / "archive-format.md")
BLOCK = re.compile(
    r"(<!-- schema: (?P<name>\S+) [^\n]*-->\n)(?P<table>.*?)(<!-- end of schema -->)", re.S
)


def rendered(text: str) -> str:
    """`text` with every schema block's table made anew from its schema."""

    def table(match: re.Match) -> str:
        schema = SCHEMAS[match["name"]]  # an unknown name is a mistake in the page: let it raise
        return match[1] + schema.markdown_table() + match[4]

    return BLOCK.sub(table, text)


def documented(text: str) -> list[str]:
    """The descriptors whose schema blocks `text` holds, in order."""
    return [match["name"] for match in BLOCK.finditer(text)]


def main(argv: list[str]) -> int:
    check = argv == ["--check"]
    stale = []
    for page in DOCS:
        text = page.read_text(encoding="utf-8")
        new = rendered(text)
        if new != text:
            stale.append(page)
            if not check:
                page.write_text(new, encoding="utf-8")
    for page in stale:
        print(f"{page.relative_to(ROOT)}: {'stale' if check else 'rewritten'}")
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
