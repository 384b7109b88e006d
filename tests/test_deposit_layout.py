"""``deposit --edition-of`` / ``--translation-of`` change one key of the linked item.yaml
and keep the rest as written: comments, key order, flow lists and mappings, quoting,
indentation, dates (ibistatic.archive.roundtrip)."""

from __future__ import annotations

from pathlib import Path

import pytest

from archive_factory import write_archive
from ibistatic.archive.roundtrip import rewritten
from ibistatic.archive.safe_yaml import DescriptorError
from ibistatic.cli import main

SERVICE = "sid.inpe.br/mtc-m18@80/2008/03.17.15.17"
LINKED = "sid.inpe.br/mtc-m18@80/2009/07.21.13.23"
HOST = "mtc-m18.sid.inpe.br"
AT = "1287587646"  # 2010-10-20T15:14:06Z
NEW = "sid.inpe.br/mtc-m18/2010/10.20.15.14.06"

#: a descriptor as people write them: comments everywhere, flow and block collections,
#: three kinds of quoting, 4-space mappings and indented lists, a document marker
HAND_WRITTEN = """\
# An item described by hand.
---
state: Original   # the original, not a copy
ibip: "8JMKD3MGP8W/35MME4E"
timestamp: 2009-07-21T13:23:45Z
target: 'CCSDS 643.0-B-1.pdf'

language: en
translations: {pt: sid.inpe.br/mtc-m18@80/2009/08.25.19.43}   # flow map
dublin-core:
    title: "Report: \\"quoted\\" and 'single'"
    creator: [Banon, G. J. F., 'Ramos, J.']
    subject:
      - IBI
      - persistent  # trailing
    date: 2009-07-21
    description: >-
        Folded text
        over two lines.
"""

BLOCK_TRANSLATIONS = """\
state: Original
language: en
translations:
  # the Portuguese one came first
  pt: sid.inpe.br/mtc-m18@80/2009/08.25.19.43  # the 2009 translation
dublin-core:
  title: Report
"""


def _archive(tmp_path: Path, descriptor: str) -> Path:
    root = write_archive(tmp_path / "mtc-m16c", "mtc-m16c.sid.inpe.br", SERVICE)
    item = root.joinpath(*LINKED.split("/"))
    (item / "doc").mkdir(parents=True)
    (item / "doc" / "CCSDS 643.0-B-1.pdf").write_text("%PDF")
    (item / "item.yaml").write_text(descriptor, encoding="utf-8")
    (tmp_path / "new.pdf").write_text("%PDF new")
    return root


def _deposit(tmp_path: Path, root: Path, *link: str) -> None:
    argv = ["deposit", str(tmp_path / "new.pdf"), "--archive", str(root), "--host", HOST]
    assert main([*argv, "--at", AT, *link]) == 0


def test_edition_of_adds_one_line_and_keeps_everything_else(tmp_path):
    root = _archive(tmp_path, HAND_WRITTEN)
    _deposit(tmp_path, root, "--edition-of", LINKED)
    after = root.joinpath(*LINKED.split("/"), "item.yaml").read_text(encoding="utf-8")
    assert after == HAND_WRITTEN + f"next-edition: {NEW}\n"


def test_translation_of_extends_a_flow_mapping_in_place(tmp_path):
    root = _archive(tmp_path, HAND_WRITTEN)
    _deposit(tmp_path, root, "--translation-of", "8JMKD3MGP8W/35MME4E", "--language", "es")
    after = root.joinpath(*LINKED.split("/"), "item.yaml").read_text(encoding="utf-8")
    assert after == HAND_WRITTEN.replace(
        "translations: {pt: sid.inpe.br/mtc-m18@80/2009/08.25.19.43}   # flow map",
        f"translations: {{pt: sid.inpe.br/mtc-m18@80/2009/08.25.19.43, es: {NEW}}} # flow map",
    )


def test_translation_of_extends_a_block_mapping_with_its_comments(tmp_path):
    root = _archive(tmp_path, BLOCK_TRANSLATIONS)
    _deposit(tmp_path, root, "--translation-of", LINKED, "--language", "de")
    after = root.joinpath(*LINKED.split("/"), "item.yaml").read_text(encoding="utf-8")
    assert after == BLOCK_TRANSLATIONS.replace(
        "  # the 2009 translation\n", f"  # the 2009 translation\n  de: {NEW}\n"
    )


def test_translation_of_an_item_without_translations_adds_the_key_last(tmp_path):
    root = _archive(tmp_path, "state: Original  # kept\nlanguage: en\n")
    _deposit(tmp_path, root, "--translation-of", LINKED, "--language", "pt")
    after = root.joinpath(*LINKED.split("/"), "item.yaml").read_text(encoding="utf-8")
    assert after == f"state: Original  # kept\nlanguage: en\ntranslations:\n  pt: {NEW}\n"


@pytest.mark.parametrize(
    ("text", "indents"),
    [
        ("a:\n- x\nb:\n  c: 1\n", "a:\n- x\nb:\n  c: 1\nnew: 1\n"),
        ("a:\n    - x\nb:\n    c: 1\n", "a:\n    - x\nb:\n    c: 1\nnew: 1\n"),
        ("a:\n  -   x\n", "a:\n  -   x\nnew: 1\n"),
    ],
)
def test_indentation_is_kept(text, indents):
    assert rewritten(text.encode(), lambda raw: raw.__setitem__("new", 1)) == indents


def test_what_any_descriptor_read_refuses_is_refused_before_the_round_trip():
    deep = b"state: " + b"[" * 100 + b"]" * 100 + b"\n"
    with pytest.raises(DescriptorError) as error:
        rewritten(deep, lambda raw: None)
    assert "nest" in error.value.found
    with pytest.raises(DescriptorError):
        rewritten(b"state: Original\nstate: Copy\n", lambda raw: None)  # a duplicate key
