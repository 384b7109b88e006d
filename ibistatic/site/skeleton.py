"""Templates rendered once per shape, then filled in by joining strings: the redirect and
alert pages of a build are millions of the same page with other values."""

from __future__ import annotations

import re
from collections.abc import Sequence

import jinja2
from markupsafe import Markup

from .fastjinja import escaped

__all__ = ["Skeleton"]


class Skeleton:
    """A template rendered once with a marker in place of each variable, then cut at the
    markers: filling it in is a join of its constant text and the values escaped as
    jinja2's autoescaping escapes them (Markup values as they are).

    Only for templates that print the variables plainly (``{{ name }}``): a variable
    used in a test or a filter would see the marker, not its value.  Conditions are
    handled by making one skeleton per outcome (`constants` fixes what they test).
    """

    _MARKER = re.compile("\x00([0-9]+)\x00")

    def __init__(self, template: jinja2.Template, names: Sequence[str], constants: dict) -> None:
        markers = {name: Markup(f"\x00{number}\x00") for number, name in enumerate(names)}
        parts = self._MARKER.split(template.render(**constants, **markers))
        self.chunks = parts[0::2]
        self.fields = [names[int(number)] for number in parts[1::2]]

    def fill(self, values: dict) -> str:
        out = [self.chunks[0]]
        for name, chunk in zip(self.fields, self.chunks[1:]):
            out.append(_escaped(values[name]))
            out.append(chunk)
        return "".join(out)


def _escaped(value) -> str:
    """What jinja2's autoescaping prints for `value` (Markup as it is)."""
    return value if isinstance(value, Markup) else escaped(str(value))
