"""Reading a descriptor (item.yaml, archive.yaml) so that no file can hurt the reader.

A descriptor is written by hand or by script, carelessly or with intent.  Whatever it
holds, reading it either gives YAML values or raises :class:`DescriptorError` saying
what was found and what was expected (archive-format.md, "Limits"):

- only regular files are opened (a FIFO or a device would block the crawl), and with
  ``O_NONBLOCK``, checked again on the open file;
- at most :data:`MAX_DESCRIPTOR_BYTES` are read;
- text must be UTF-8 (a UTF-8 byte order mark is allowed), with no NUL byte;
- lists and mappings nest at most :data:`MAX_NESTING` deep: libyaml's C composer
  recurses, and a deep ``[[[...`` would overflow the C stack (a segfault, no exception);
- values YAML's safe constructor cannot build (``2009-02-30T00:00:00Z``, a 5,000-digit
  number, ``!!bool maybe``) and duplicate keys are errors with their line and column.
"""

from __future__ import annotations

import math
import os
import re
import stat
from typing import Any

import yaml
from yaml.constructor import ConstructorError

try:  # libyaml's C loader: crawling 100k items must not be dominated by YAML parsing
    from yaml import CSafeLoader as _BaseLoader
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeLoader as _BaseLoader

__all__ = [
    "MAX_DESCRIPTOR_BYTES",
    "MAX_NESTING",
    "DescriptorError",
    "read_regular_file",
    "parse_descriptor",
    "file_kind",
]

#: the largest descriptor read: real ones are a few hundred bytes
MAX_DESCRIPTOR_BYTES = 1024 * 1024
#: the deepest nesting of lists and mappings: real descriptors need 3
MAX_NESTING = 32
#: the longest piece of a bad value quoted in a message
_SHOWN_CHARACTERS = 40


class DescriptorError(Exception):
    """A descriptor that cannot be read as YAML: what was found, and what was expected."""

    def __init__(self, found: str, expected: str | None = None, key: str = "") -> None:
        super().__init__(found)
        self.found = found
        self.expected = expected
        #: the top-level key whose value holds the fault, when one does ("" if none)
        self.key = key


def file_kind(mode: int) -> str:
    """What a non-regular file is, in words."""
    kinds = (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    )
    return next((words for test, words in kinds if test(mode)), "not a regular file")


def read_regular_file(path: str | os.PathLike, limit: int = MAX_DESCRIPTOR_BYTES) -> bytes:
    """The bytes of a regular file of at most `limit` bytes; never opens anything else."""
    st = os.stat(path)  # stat does not open: a FIFO is seen before it could block
    if not stat.S_ISREG(st.st_mode):
        raise DescriptorError(f"{file_kind(st.st_mode)}, not a regular file", "a regular file")
    handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    try:
        st = os.fstat(handle)  # what was opened, should it have been swapped meanwhile
        if not stat.S_ISREG(st.st_mode):
            raise DescriptorError(f"{file_kind(st.st_mode)}, not a regular file", "a regular file")
        data = os.read(handle, limit + 1)
        while len(data) <= limit and (more := os.read(handle, limit + 1 - len(data))):
            data += more
    finally:
        os.close(handle)
    if len(data) > limit:
        raise DescriptorError(
            f"a file over {limit:,} bytes",
            f"a descriptor of at most {limit:,} bytes (archive-format.md, Limits)",
        )
    return data


def parse_descriptor(data: bytes) -> Any:
    """The YAML value of a descriptor's bytes; DescriptorError with a located message."""
    text = _text(data)
    if _nesting_bound(text) > MAX_NESTING:
        _check_nesting(text)
    try:
        loader = _Loader(text)
        try:
            loader.anchored = "&" in text  # no alias without an anchor: nothing to bound
            return loader.get_single_data()
        finally:
            loader.dispose()
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        key = _key_at_line(text, mark.line) if mark is not None else ""
        raise DescriptorError(_yaml_message(error), key=key) from None
    except (
        ValueError,
        TypeError,
        KeyError,
        AttributeError,
        OverflowError,
        RecursionError,
    ) as error:
        # a constructor this module does not wrap: no place to name, but never a traceback
        raise DescriptorError(f"YAML that cannot be read ({_short(str(error))})") from None


#: a key of the top-level block mapping, at the start of its line
_TOP_KEY = re.compile(
    r"""^(?:"([^"\n]*)"|'([^'\n]*)'|([^\s#'"\-?:,\[\]{}][^:#\n]*?))[ \t]*:(?:[ \t]|$)"""
)


def _key_at_line(text: str, line: int) -> str:
    """The top-level key whose value runs over `line` (0-based) of `text`: the last one
    that starts at or before it, or "" for a document that is no block mapping."""
    key = ""
    for number, row in enumerate(text.split("\n", line + 1)[: line + 1]):
        match = _TOP_KEY.match(row)
        if match:
            key = next(group for group in match.groups() if group is not None)
        elif number == 0 and row.lstrip().startswith(("[", "{")):
            return ""
    return key if len(key) <= _SHOWN_CHARACTERS else ""


def _text(data: bytes) -> str:
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise DescriptorError("UTF-16 text (its byte order mark)", "UTF-8 text")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise DescriptorError(f"bytes that are not UTF-8 at byte {error.start + 1}") from None
    if "\x00" in text:
        raise DescriptorError(
            f"binary content (a NUL byte at byte {data.index(0) + 1})", "UTF-8 text"
        )
    return text


#: a line's leading run of indentation and block indicators ('- ', '? ', ': ')
_LEADING = re.compile(r"^[ \-?:]*", re.MULTILINE)


def _nesting_bound(text: str) -> int:
    """An upper bound of the nesting depth, cheap to compute: a flow collection opens with
    '[' or '{'; a nested block collection needs more indentation or one more compact
    indicator on its line.  Only when it exceeds MAX_NESTING are the events counted."""
    leading = max((len(match) for match in _LEADING.findall(text)), default=0)
    return text.count("[") + text.count("{") + leading + 3


def _check_nesting(text: str) -> None:
    """Count the depth on libyaml's event stream, which does not recurse."""
    depth = 0
    starts, ends = (
        (yaml.MappingStartEvent, yaml.SequenceStartEvent),
        (yaml.MappingEndEvent, yaml.SequenceEndEvent),
    )
    try:
        for event in yaml.parse(text, Loader=_BaseLoader):
            if isinstance(event, starts):
                depth += 1
                if depth > MAX_NESTING:
                    mark = event.start_mark
                    raise DescriptorError(
                        f"lists or mappings nested over {MAX_NESTING} deep at line {mark.line + 1}, "
                        f"column {mark.column + 1}",
                        f"at most {MAX_NESTING} levels (archive-format.md, Limits)",
                        _key_at_line(text, mark.line),
                    )
            elif isinstance(event, ends):
                depth -= 1
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        key = _key_at_line(text, mark.line) if mark is not None else ""
        raise DescriptorError(_yaml_message(error), key=key) from None


def _yaml_message(error: yaml.YAMLError) -> str | DescriptorError:
    if isinstance(error, yaml.reader.ReaderError):  # a character YAML refuses, such as a control
        character = error.character if isinstance(error.character, int) else ord(error.character)
        raise DescriptorError(
            f"a character YAML does not allow (#x{character:04x}) at character {error.position + 1}",
            "UTF-8 text",
        )
    mark = getattr(error, "problem_mark", None)
    problem = getattr(error, "problem", None) or str(error)
    if mark is not None:
        return f"malformed YAML at line {mark.line + 1}, column {mark.column + 1}: {problem}"
    return f"malformed YAML: {problem}"


def _short(text: str) -> str:
    return text if len(text) <= _SHOWN_CHARACTERS else text[:_SHOWN_CHARACTERS] + "..."


_STR = "tag:yaml.org,2002:str"


def _expanded_size(root: yaml.Node) -> float:
    """How many characters and nodes the document would hold with every alias written
    out: an alias is its anchor's node again, so a few aliases of aliases make a small
    graph whose expansion is exponential, and a node inside itself (``&r [*r]``) an
    infinite one.  Each node is counted once (memoized), without recursion."""
    sizes: dict[int, float] = {}
    entered: set[int] = set()
    stack = [root]
    while stack:
        node = stack[-1]
        if isinstance(node, yaml.ScalarNode):
            sizes[id(node)] = 1 + len(node.value)
            stack.pop()
            continue
        children = [
            child
            for entry in node.value
            for child in (entry if isinstance(entry, tuple) else (entry,))
        ]
        if id(node) not in entered:
            entered.add(id(node))
            for child in children:
                if id(child) in entered and id(child) not in sizes:
                    return math.inf  # a node inside itself
                if id(child) not in sizes:
                    stack.append(child)
            continue
        stack.pop()
        if id(node) not in sizes:
            sizes[id(node)] = 1 + sum(sizes[id(child)] for child in children)
    return sizes[id(root)]


def _alias_error(size: float, root: yaml.Node) -> DescriptorError:
    """The refusal of a document whose aliases expand too far (`size`), naming the
    top-level key whose value does it."""
    if size == math.inf:
        found = "an alias inside its own anchor (a value that would never end)"
        expected = "aliases of values written before them only"
    else:
        found = f"aliases that expand to over {MAX_DESCRIPTOR_BYTES:,} characters"
        expected = (
            f"a descriptor of at most {MAX_DESCRIPTOR_BYTES:,} characters with every alias "
            "written out (archive-format.md, Limits)"
        )
    key = ""
    if isinstance(root, yaml.MappingNode):
        sized = [(_expanded_size(value), name) for name, value in root.value]
        worst = max(sized, key=lambda pair: pair[0], default=(0, None))[1]
        if isinstance(worst, yaml.ScalarNode) and len(worst.value) <= _SHOWN_CHARACTERS:
            key = worst.value
    return DescriptorError(found, expected, key)


class _Loader(_BaseLoader):
    """The safe loader, with located errors for what it would raise without a place
    (ValueError, KeyError) and for duplicate keys (which it silently merges), and a bound
    on what aliases expand to."""

    anchored = True  # the text may hold anchors (parse_descriptor knows better)

    def construct_document(self, node):
        if self.anchored:
            size = _expanded_size(node)
            if size > MAX_DESCRIPTOR_BYTES:
                raise _alias_error(size, node)
        return super().construct_document(node)

    def construct_object(self, node, deep=False):
        # a string (most of a descriptor's keys and values) is its node's text: the
        # constructor's way there (its memo, the tag's constructor, construct_scalar)
        # was a fifth of the time of reading a descriptor
        if node.__class__ is yaml.ScalarNode and node.tag == _STR:
            return node.value
        return super().construct_object(node, deep)

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            if (
                not isinstance(key_node, yaml.ScalarNode)
                or key_node.tag == "tag:yaml.org,2002:merge"
            ):
                continue  # '<<' merges keys that the mapping may override
            key = self.construct_object(key_node)
            if key in seen:
                mark = key_node.start_mark
                raise ConstructorError(
                    None, None, f"a duplicate key {_short(repr(key))} (a key may appear once)", mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _located(construct):
    """`construct` raising a ConstructorError that names the value and its place."""

    def checked(loader, node):
        try:
            return construct(loader, node)
        except (ValueError, TypeError, KeyError, AttributeError, OverflowError) as error:
            value = node.value if isinstance(node, yaml.ScalarNode) else node.id
            reason = (
                str(error).split(":")[0] if isinstance(error, ValueError) else type(error).__name__
            )
            tag = node.tag.rpartition(":")[2]
            problem = f"{_short(repr(value))} is not a valid {tag} ({_short(reason)})"
            raise ConstructorError(None, None, problem, node.start_mark) from None

    return checked


for _tag, _construct in list(_BaseLoader.yaml_constructors.items()):
    if _tag is not None and _tag != "tag:yaml.org,2002:map":
        _Loader.add_constructor(_tag, _located(_construct))
