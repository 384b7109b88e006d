"""Sites with every page type for the tests of the pages for people (and the screenshots).

:func:`build_showcase` builds the bundled sample plus two small Archives that add what the
sample lacks: a conflict (two Archives claim the original), copies without an original, a
deleted item with a ``reason:`` and a site identity, with the interface language given.
:data:`PAGE_TYPES` names one page of each type in it, by path.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from archive_factory import write_archive, write_item
from site_helpers import SAMPLE, SITE_URL

CONFLICT = "example.org/conflict/2020/01.01.00.00"
ORPHAN = "example.org/orphan/2020/01.01.00.00"
GONE = "example.org/gone/2020/01.01.00.00"
PT_ITEM = "sid.inpe.br/mtc-m19/2014/01.02.17.23.57"  # language: pt in the sample
EN_ITEM = "sid.inpe.br/mtc-m19/2013/09.04.12.30.12"  # language: en in the sample

IDENTITY = {
    "institution": "Instituto Nacional de Pesquisas Espaciais",
    "institution-url": "https://www.gov.br/inpe/",
    "contact": "biblioteca@inpe.example",
    "persistence-policy": "INPE keeps these links working and never reuses an identifier.",
    "persistence-policy-url": "https://ibi.example.org/policy.html",
}

#: page type -> its path in the showcase site (one of each, in each language: a page
#: about an item speaks the item's language, the others the site's)
PAGE_TYPES = {
    "landing": "index.html",
    "404": "404.html",
    "record": f"record/{PT_ITEM}/index.html",
    "record-en": f"record/{EN_ITEM}/index.html",
    "tombstone": f"record/{GONE}/index.html",
    "tombstone-en": "record/sid.inpe.br/mtc-m19/2011/05.10.18.31/index.html",
    "metadata": f"metadata/{PT_ITEM}/index.html",
    "metadata-en": f"metadata/{EN_ITEM}/index.html",
    "file-list": f"files/{PT_ITEM}/index.html",
    "file-list-en": f"files/{EN_ITEM}/index.html",
    "alert-deleted": f"{GONE}/index.html",
    "alert-deleted-en": "sid.inpe.br/mtc-m19/2011/05.10.18.31/index.html",
    "record-conflict": f"record/{CONFLICT}/index.html",
    "alert-unavailable": "sid.inpe.br/mtc-m19/2013/09.04.12.27.58:/index.html",
    "alert-unavailable-en": "sid.inpe.br/mtc-m19/2013/09.04.12.27.59:/index.html",
    "search": "search/index.html",
    "list": "search/list/1/index.html",
}

#: what the scripts write, by the URL (after the site's) that makes them write it:
#: 404.html resolving in the browser, the search page running a query
SCRIPTED = {
    "not-found": "8JMKD3MGP8W/22222!",
    "bad-url": "8jmkd3mgp8w/35mmll8?ibiurl.verblist=x",
    "unavailable": "8JMKD3MGP8W/35MMLL8:+(es)",
    "search": "search/?q=ascii",
}


def write_showcase_archives(root: Path) -> list[Path]:
    """Two Archives beside the sample's: a conflict, an orphan copy, a tombstone."""
    first = write_archive(
        root / "showcase-a", "a.example.org", "example.org/service/2020/01.01.00.00"
    )
    second = write_archive(
        root / "showcase-b", "b.example.org", "example.org/service/2020/01.01.00.01"
    )
    for archive in (first, second):
        write_item(
            archive,
            CONFLICT,
            {"report.pdf": "%PDF-1.4 the same report\n"},
            state="Original",
            dublin_core={"title": "A report claimed twice", "creator": ["Silva, Ana"]},
        )
    write_item(second, ORPHAN, state="Copy", dublin_core={"title": "Only a copy"})
    gone = write_item(
        first,
        GONE,
        state="Deleted",
        timestamp="2021-03-04T05:06:07Z",
        language="pt-BR",
        reason="Retirado a pedido dos autores: <duplicado> & substituído.",
        dublin_core={"title": "Relatório retirado"},
    )
    for path in (gone / "doc").iterdir():
        path.unlink()
    return [first, second]


def write_showcase_config(directory: Path, language: str = "en", **extra) -> Path:
    archives = [SAMPLE / "mtc-m16c", SAMPLE / "mtc-m16d"] + write_showcase_archives(directory)
    config = {
        "site-url": SITE_URL,
        "archives": [str(Path(a).resolve()) for a in archives],
        "output": "site",
        "language": language,
        **IDENTITY,
        **extra,
    }
    path = directory / "ibistatic.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    return path


def build_showcase(directory: Path, language: str = "en", **extra) -> Path:
    """The showcase built into `directory`/site with the interface `language`."""
    from ibistatic.config import load_config
    from ibistatic.site.build import build_site

    config = load_config(write_showcase_config(directory, language, **extra))
    report = build_site(config)
    assert not [p for p in report.problems if p.severity == "error" and "conflict" not in str(p)]
    return config.output
