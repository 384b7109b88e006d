"""Changing a descriptor the way a person would: one key, and nothing else.

``ibistatic deposit --edition-of`` and ``--translation-of`` add a key to an ``item.yaml``
someone wrote by hand.  Its comments, key order, flow lists and mappings (``[a, b]``,
``{pt: ...}``), quoting and indentation are kept (ruamel.yaml's round trip); only the
changed key's value is new.  The text is first read as any descriptor is
(:func:`ibistatic.archive.safe_yaml.parse_descriptor`: its size, nesting and value
limits), so the round-trip parser never sees what the crawler would refuse.
"""

from __future__ import annotations

import io
from collections.abc import Callable, MutableMapping

from .safe_yaml import parse_descriptor

__all__ = ["rewritten"]


def rewritten(data: bytes, change: Callable[[MutableMapping], None]) -> str:
    """The text of the descriptor `data` after `change(mapping)`, its layout kept.
    Raises safe_yaml.DescriptorError for a text any descriptor read would refuse."""
    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedMap

    parse_descriptor(data)  # the limits of every descriptor read, before the round trip
    text = data.decode("utf-8-sig")
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096  # long values stay on their line, as written
    yaml.indent(**_indents(text))
    head = _before_start(text)  # comments above `---`, which the round trip would drop
    yaml.explicit_start = head is not None
    loaded = yaml.load(text)
    mapping = loaded if isinstance(loaded, MutableMapping) else CommentedMap()
    change(mapping)
    out = io.StringIO()
    yaml.dump(mapping, out)
    return (head or "") + out.getvalue()


def _indents(text: str) -> dict[str, int]:
    """How the text indents a mapping in a mapping, and a block list (ruamel's `mapping`,
    `sequence` and `offset`: the dash's own indent under its key), guessed from the first
    of each; 2, 2 and 0 when the text has none."""
    mapping = sequence = offset = None
    parent = None  # the indent of the last line that was a key alone (`key:`)
    for line in text.splitlines():
        content = line.lstrip(" ")
        if not content or content.startswith("#"):
            continue
        indent = len(line) - len(content)
        if parent is not None and indent > parent:
            if content.startswith("- ") and sequence is None:
                offset = indent - parent
                sequence = offset + len(content) - len(content[1:].lstrip(" "))
            elif not content.startswith("- ") and mapping is None:
                mapping = indent - parent
        parent = indent if content.rstrip().endswith(":") and not content.startswith("- ") else None
    return {"mapping": mapping or 2, "sequence": sequence or 2, "offset": offset or 0}


def _before_start(text: str) -> str | None:
    """The lines above the document's ``---`` (comments, blank lines), or None when the
    document does not start with ``---``."""
    lines = text.splitlines(keepends=True)
    for number, line in enumerate(lines):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return "".join(lines[:number]) if stripped.startswith("---") else None
    return None
