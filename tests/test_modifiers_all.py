"""`modifiers: all` grows linearly with an item's languages (docs/configuration.md)."""

from __future__ import annotations

import pytest

from archive_factory import write_archive, write_item
from ibistatic.archive.load import load_archives
from ibistatic.core.languages import LANGUAGES
from ibistatic.core.relations import modifier_text, parse_modifier
from ibistatic.targets import all_modifiers, page_targets

SITE_URL = "https://ibi.example.org/"
SERVICE = "example.org/a/2020/01.01.00.00"
ORIGINAL = "sid.inpe.br/rep/2020/01.02.03.04"


def _loaded(tmp_path, count: int):
    """An English original with `count` translations, each an item of the Archive."""
    root = write_archive(tmp_path / "a", "a.example.org", SERVICE)
    tags = sorted(LANGUAGES - {"en"})[:count]
    translations = {
        tag: f"sid.inpe.br/rep/2020/02.00.00.{number:02d}" for number, tag in enumerate(tags)
    }
    write_item(
        root,
        ORIGINAL,
        state="Original",
        ibip="8JMKD3MGP8W/ABCDEF",
        language="en",
        translations=translations,
    )
    for tag, repository in translations.items():
        write_item(root, repository, state="Original", language=tag, translations={"en": ORIGINAL})
    loaded = load_archives([root], SITE_URL)
    assert loaded.problems == []
    return loaded


@pytest.mark.parametrize("translations", [0, 1, 3, 12])
def test_pages_per_item_grow_linearly_with_its_languages(tmp_path, translations):
    loaded = _loaded(tmp_path, translations)
    languages = translations + 1
    targets = [t for t in page_targets(loaded, "all") if t.item.repository.text == ORIGINAL]
    assert len(targets) == 2 * (25 + 19 * languages)  # both forms of the IBI
    negotiated = sum(len(t.negotiation) for t in targets)
    assert negotiated == 2 * 19 * languages  # only the pages whose translations are all open
    assert len({t.path for t in targets}) == len(targets)


def test_translations_are_one_language_or_all_open():
    emitted = {modifier_text(r) for r in all_modifiers(["pt", "en"])}
    assert {
        "+(pt):+(pt)",
        "+(en):(oai_dc)+(en)",
        "+:+",
        "!+(en)",
        ":(oai_dc)+(pt)",
        "+(pt)!:+(pt)",
    } <= emitted
    assert not {"+(pt):+(en)", "+:+(pt)", "+(en):+", "!+(pt):+"} & emitted
    # every modifier of the grammar that uses at most one language is emitted, with each format
    for relation in all_modifiers(["pt", "en"]):
        assert len({step.param for step in relation if step.kind == "translation"}) <= 1
        assert parse_modifier(modifier_text(relation)) == relation
