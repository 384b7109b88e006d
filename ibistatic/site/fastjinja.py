"""Two costs jinja2 puts on every page, taken off without changing a byte it prints.

The record, file-list and metadata pages (one of each per item) are rendered by jinja2
templates a site may replace with its own, so they cannot be skeletons
(:mod:`.skeleton`).  Under a profiler two steps of jinja2's own were a fifth of their
time:

- ``{{ t.word }}`` on a dict: jinja2 tries the attribute first, and the AttributeError
  it raises and catches costs ten times a plain attribute.  :class:`Texts` is the same
  dict with its words as attributes too.
- ``{{ value }}`` under autoescaping: ``markupsafe.escape`` wraps every string in a new
  ``Markup``.  :class:`Template` gives each compiled template an escape that returns a
  string with nothing to escape as it is: the same characters (a string with no
  ``&<>"'`` escapes to itself), and everything else goes to markupsafe.
"""

from __future__ import annotations

import re

import jinja2
from markupsafe import escape

__all__ = ["Texts", "Template", "escaped"]

_HTML_SPECIAL = re.compile("[&<>\"']")


def escaped(value):
    """What ``markupsafe.escape(value)`` prints, without a new Markup when a plain
    string needs no escaping (Markup and objects with ``__html__`` go to markupsafe)."""
    if type(value) is str and _HTML_SPECIAL.search(value) is None:
        return value
    return escape(value)


class Texts(dict):
    """The words of one interface language: the dict templates always had (``t[name]``,
    ``t.get(...)``), whose words are also attributes, found without an exception."""

    def __init__(self, words: dict[str, str]) -> None:
        super().__init__(words)
        self.__dict__.update(words)


class Template(jinja2.Template):
    """A jinja2 template whose ``{{ … }}`` use :func:`escaped`.

    jinja2 runs a compiled template's code in a namespace of its own, and its
    functions look ``escape`` up there at each call: replacing that one name changes
    nothing else.  If a jinja2 version stops naming it so, nothing is replaced and the
    pages are rendered as before, only slower."""

    @classmethod
    def from_code(cls, environment, code, globals, uptodate=None):
        template = super().from_code(environment, code, globals, uptodate)
        namespace = template.root_render_func.__globals__
        if namespace.get("escape") is escape:
            namespace["escape"] = escaped
        return template
