"""Four costs jinja2 puts on every page, taken off without changing a byte it prints.

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
- the template's globals (``range``, ``dict``, ...): a ChainMap over the environment's,
  which each render copies key by key; a dict of the same keys copies in C.
- ``{% extends %}`` and ``{% include %}``: each include of ``_header.html`` and
  ``_footer.html`` copies the page's variables into a new context.  :func:`flattened`
  compiles a bundled page as one template: the layout with the page's blocks in place
  and the includes' bodies inlined, as jinja2 would have rendered them.  A third of a
  record page's time went there.
- ``{{ t.word }}``: an interface word, the same on every page of a language, looked up
  and escaped again on each (a third of a record page's 67 escapes).  Given the
  words, :func:`flattened` prints each as the text it escapes to, once per language.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import jinja2
from jinja2 import meta, nodes
from markupsafe import escape

__all__ = ["Texts", "Template", "escaped", "flattened", "all_bundled"]


def escaped(value):
    """What ``markupsafe.escape(value)`` prints, without a new Markup when a plain
    string needs no escaping (Markup and objects with ``__html__`` go to markupsafe).

    Five ``in`` tests, not a regular expression: each is a memchr, and on a target URL
    they take a fraction of the time of the character class's search (every field of
    every page goes through here)."""
    if type(value) is str and not (
        "&" in value or "<" in value or ">" in value or '"' in value or "'" in value
    ):
        return value
    return escape(value)


class Texts(dict):
    """The words of one interface language: the dict templates always had (``t[name]``,
    ``t.get(...)``), whose words are also attributes, found without an exception."""

    __hash__ = object.__hash__  # one per language, never changed: a key of flattened()'s cache

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
        # jinja2's globals are a ChainMap over the environment's, copied into every
        # render's context key by key in Python (half of a small page's time); ibistatic
        # never changes them once a template is compiled, so a dict holds the same
        template.globals = dict(template.globals)
        return template


#: what a flattened template may not hold: what would leak out of an inlined include,
#: or stop blocks from being moved (anything else keeps jinja2's own way)
_SCOPED = (
    nodes.Extends,
    nodes.Include,
    nodes.Import,
    nodes.FromImport,
    nodes.Macro,
    nodes.CallBlock,
    nodes.Assign,
    nodes.AssignBlock,
    nodes.Scope,
    nodes.OverlayScope,
    nodes.EvalContextModifier,
    nodes.With,
)


@lru_cache(maxsize=512)  # per template and language: compiled once per process
def flattened(
    environment: jinja2.Environment, name: str, bundled: Path, words: Texts | None = None
) -> jinja2.Template:
    """Template `name`, compiled as one template when it and every template it extends
    or includes are the bundled ones (from `bundled`) of a shape this handles: a child
    of only blocks, a layout whose blocks and includes are at its top level.  Else (a
    site's own template, whose errors must name its own lines) jinja2's template.
    With `words` (what ``t`` is on the pages it will render), ``{{ t.word }}`` is printed
    as the word's escaped text."""
    tree = _bundled_tree(environment, name, bundled)
    flat = None if tree is None else _flatten(environment, tree, bundled)
    if flat is None:
        return environment.get_template(name)
    if words is not None:
        _print_words(flat, words)
    code = environment.compile(flat, name, str(bundled / name))
    return environment.template_class.from_code(environment, code, environment.make_globals(None))


def _print_words(tree: nodes.Template, words: Texts) -> None:
    """Each ``{{ t.word }}`` (or ``{{ t["word"] }}``) of `tree` as the text jinja2 would
    print for it, unless the template sets a ``t`` of its own (a loop's, a set)."""
    if any(name.name == "t" and name.ctx != "load" for name in tree.find_all(nodes.Name)):
        return
    for output in tree.find_all(nodes.Output):
        output.nodes = [_printed(node, words) for node in output.nodes]


def _printed(node: nodes.Node, words: Texts) -> nodes.Node:
    if isinstance(node, nodes.Getattr):
        word = node.attr
    elif isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Const):
        word = node.arg.value
    else:
        return node
    if not (isinstance(node.node, nodes.Name) and node.node.name == "t" and word in words):
        return node
    return nodes.TemplateData(str(escape(words[word])), lineno=node.lineno)


def all_bundled(environment, name: str, bundled: Path) -> bool:
    """Whether `name` and every template it extends, includes or imports are the bundled
    ones (from `bundled`), none of them a site's own."""
    tree = _bundled_tree(environment, name, bundled)
    return tree is not None and all(
        other is not None and all_bundled(environment, other, bundled)
        for other in meta.find_referenced_templates(tree)
    )


def _bundled_tree(environment, name: str, bundled: Path) -> nodes.Template | None:
    source, filename, _ = environment.loader.get_source(environment, name)
    if filename is None or Path(filename).parent != bundled:
        return None
    return environment.parse(source, name, filename)


def _flatten(environment, child: nodes.Template, bundled: Path) -> nodes.Template | None:
    """The layout `child` extends, its blocks replaced by the child's and its includes
    inlined; None when some part is not of the shape described in flattened()."""
    body = child.body
    if not body or not isinstance(body[0], nodes.Extends) or _self_or_super(child):
        return None
    if not isinstance(body[0].template, nodes.Const):
        return None
    blocks = {}
    for node in body[1:]:  # after extends, jinja2 prints nothing but the layout's blocks
        if isinstance(node, nodes.Block) and not _nests(node, (nodes.Block, *_SCOPED)):
            blocks[node.name] = node
        elif not isinstance(node, nodes.Output):
            return None
    layout = _bundled_tree(environment, body[0].template.value, bundled)
    if layout is None or _self_or_super(layout):
        return None
    flat = []
    for node in layout.body:
        if isinstance(node, nodes.Block) and not node.required and not _nests(node, nodes.Block):
            flat.append(blocks.get(node.name, node))
        elif isinstance(node, nodes.Include):
            inlined = _included(environment, node, bundled)
            if inlined is None:
                return None
            flat += inlined
        elif _nests(node, (nodes.Block, nodes.Include, nodes.Extends)):
            return None
        else:
            flat.append(node)
    return nodes.Template(flat, lineno=1).set_environment(environment)


def _included(environment, include: nodes.Include, bundled: Path) -> list | None:
    """The body of a bundled template included with context, when it sets nothing."""
    if not (isinstance(include.template, nodes.Const) and include.with_context):
        return None
    tree = _bundled_tree(environment, include.template.value, bundled)
    if tree is None or _self_or_super(tree) or _nests(tree, (nodes.Block, *_SCOPED)):
        return None
    return tree.body


def _nests(node: nodes.Node, kinds) -> bool:
    return any(True for _ in node.find_all(kinds))


def _self_or_super(tree: nodes.Node) -> bool:
    return any(name.name in ("self", "super") for name in tree.find_all(nodes.Name))
