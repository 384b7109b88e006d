"""A metadata format survives translation steps (archive-format.md, relations).

`8JMKD3MGP7W/3EPGUE5`'s metadata `…27.58` is Portuguese, with `formats: {oai_dc:
oai_dc.xml}`; its English translation `…27.59` has no oai_dc record.  So
`.metadata(oai_dc).translation(pt)` is the item itself, in the same format (its
oai_dc.xml, not its free-format metadata.cgi), and `.metadata(oai_dc).translation(en)`
names `…27.59` but has no URL: that item has no record in the format asked.
"""

from __future__ import annotations

import pytest

from archive_factory import write_archive, write_item
from ibistatic.archive.load import load_archives
from ibistatic.core.identifiers import ibi_key
from ibistatic.core.properties import property_list, property_pairs
from ibistatic.core.relations import parse_modifier, parse_relation, relation_to_verb_list
from ibistatic.core.resolution import resolve
from node_resolver import NODE, node_resolve
from site_helpers import build

M16D = "http://mtc-m16d.sid.inpe.br/col/sid.inpe.br/mtc-m19/2013/"
OAI_DC_PT = M16D + "09.04.12.27.58/doc/oai_dc.xml"


def answer(sample_loaded, relation: str) -> dict:
    pairs = property_list(
        sample_loaded.view("mtc-m16d"),
        ibi_key("8JMKD3MGP7W/3EPGUE5"),
        relations=[parse_relation(relation)],
        urlkey=lambda: "1",
    )
    return dict(property_pairs(pairs))


def test_translation_to_the_item_itself_keeps_the_format(sample_loaded):
    pairs = answer(sample_loaded, ".metadata(oai_dc).translation(pt)")
    assert pairs["url.metadata(oai_dc).translation(pt)"] == OAI_DC_PT
    assert pairs["ibi.metadata(oai_dc).translation(pt)"] == (
        "rep",
        "sid.inpe.br/mtc-m19/2013/09.04.12.27.58",
    )
    # without the format, the free-format metadata
    plain = answer(sample_loaded, ".metadata.translation(pt)")
    assert plain["url.metadata.translation(pt)"] == M16D + "09.04.12.27.58/doc/metadata.cgi"


def test_translation_to_another_item_asks_its_record_of_that_format(sample_loaded):
    pairs = answer(sample_loaded, ".metadata(oai_dc).translation(en)")
    assert pairs["ibi.metadata(oai_dc).translation(en)"] == (
        "rep",
        "sid.inpe.br/mtc-m19/2013/09.04.12.27.59",
    )
    assert "url.metadata(oai_dc).translation(en)" not in pairs  # it has no oai_dc record


def test_translation_with_a_record_of_that_format(tmp_path):
    a = write_archive(tmp_path / "a", "a.example.org", "example.org/service/2020/01.01.00.00")
    rep = "example.org/rep/2020/01.02.03."
    files = {"m.html": "m", "dc.xml": "<dc/>"}
    write_item(a, rep + "04", state="Original", metadata=rep + "05")
    write_item(
        a,
        rep + "05",
        state="Original",
        content_type="Metadata",
        language="pt",
        files=files,
        target="m.html",
        formats={"oai_dc": "dc.xml"},
        translations={"en": rep + "06"},
    )
    write_item(
        a,
        rep + "06",
        state="Original",
        content_type="Metadata",
        language="en",
        files=files,
        target="m.html",
        formats={"oai_dc": "dc.xml"},
    )
    views = load_archives([a], "https://ibi.example.org/").views()
    result = resolve(views, rep + "04", relation_to_verb_list(parse_modifier(":(oai_dc)+(en)")))
    assert result.url == "http://a.example.org/col/example.org/rep/2020/01.02.03.06/doc/dc.xml"


@pytest.mark.parametrize(
    "modifier, url, alert",
    [
        (":(oai_dc)+(pt)", OAI_DC_PT, None),
        (":(oai_dc)+(pt-BR)", OAI_DC_PT, None),
        (":(oai_dc)", OAI_DC_PT, None),
        (":+(en)", M16D + "09.04.12.27.59/doc/metadata.html", None),
        # the IBI of …27.59 is not followed: asked again, it would give the free format
        (":(oai_dc)+(en)", None, "unavailable"),
    ],
)
def test_resolution_keeps_the_format(sample_loaded, modifier, url, alert):
    result = resolve(
        sample_loaded.views(),
        "8JMKD3MGP7W/3EPGUE5",
        relation_to_verb_list(parse_modifier(modifier)),
    )
    assert (result.url, result.alert) == (url, alert)


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_browser_resolver_keeps_the_format(tmp_path):
    site = build(tmp_path)
    requests = [
        "8JMKD3MGP7W/3EPGUE5:(oai_dc)+(pt)",
        "8JMKD3MGP7W/3EPGUE5:(oai_dc)+(en)",
        "8JMKD3MGP7W/3EPGUE5:+(en)",
    ]
    pt, en, free = node_resolve(site, requests)
    assert (pt["url"], en["url"], en["alert"]) == (OAI_DC_PT, None, "unavailable")
    assert free["url"] == M16D + "09.04.12.27.59/doc/metadata.html"
