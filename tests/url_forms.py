"""The shared table of persistent URL forms that every host test asks its host's engine.

Two sites: the bundled sample, and a synthetic pair of Archives built for the hard
cases the sample lacks (file names with ``+``, ``%``, ``&``, ``=``, spaces and accents;
a repository with a port; a conflict and an orphan copy, 409; a deleted item, 410;
three languages; an edition chain; metadata with oai_dc, 303).  For each, :func:`url_table` lists every form of
:func:`ibistatic.deploycheck.url_forms` (every precomputed form, every other modifier
composition, other case spellings, ``/ibi/`` forms, file paths, ``?ibiurl.`` queries,
``+`` with Accept-Language, deleted and unknown IBIs) plus the hand-written forms of
:data:`EXTRA`, each with the answer ``ibistatic resolve`` gives (status, Location).

Use from a host test::

    from url_forms import build_sample_site, url_table
    site = build_sample_site(tmp_path / "sample")       # site-url http://127.0.0.1:8080/
    for case in url_table(site):
        status, location = ask(port, "/" + case.target, case.accept_language)
        assert (status, location) == (case.status, case.location), case

``case.target`` follows the site's path, percent-encoded as a client sends it (with its
query); send ``Accept-Language: case.accept_language`` when it is not None.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from archive_factory import write_archive, write_item
from ibistatic.deploycheck import UrlForm, expected_answer, url_forms
from ibistatic.resolver import Resolver
from site_helpers import build

#: the site URL both sites are built for (a host test serves them on any port: every
#: Location points into the Archives or, for file lists and metadata pages, to this)
SITE_URL = "http://127.0.0.1:8080/"

#: forms written by hand, as the README and INPE's citations write them (kind, target,
#: Accept-Language); each must be answered like any other
EXTRA = (
    UrlForm("modifier", "8JMKD3MGP8W/35MMLL8!:(oai_dc)"),  # the README's example
    UrlForm("modifier", "8JMKD3MGP8W/35MME4E+(pt)"),
    UrlForm("modifier", "8JMKD3MGP7W/3EPGUE5!+(en):(oai_dc)"),
    UrlForm("ibi-prefix", "ibi/8JMKD3MGP8W/35MMLL8"),
    UrlForm("query", "LK47B6W/362SFKH?ibiurl.verblist=GetFileList"),
    UrlForm("query", "LK47B6W/362SFKH/reference.bib?ibiurl.requireditemstatus=Original"),
    UrlForm("file", "LK47B6W/362SFKH/Relat%C3%B3rio%20t%C3%A9cnico.txt"),
    UrlForm("language", "8JMKD3MGP8W/35MME4E+", "pt-BR,pt;q=0.9,en;q=0.5"),
    UrlForm("deleted", "sid.inpe.br/mtc-m19/2011/05.10.18.31"),
    UrlForm("unknown", "8JMKD3MGP8W/3333333"),
)

SYNTH = "example.org/synth"
#: file names a host must pass through: + % & = spaces, accents, a folder
HARD_FILES = {
    "a+b (1).pdf": "plus and parentheses\n",
    "100% sure & x=y.txt": "percent, ampersand, equals\n",
    "résumé ü.txt": "accents\n",
    "sub dir/ñ.txt": "a folder with a space\n",
}


class UrlCase(NamedTuple):
    """A row of the table: the request and the answer ``ibistatic resolve`` gives."""

    kind: str
    target: str
    accept_language: str | None
    status: int
    location: str | None

    @property
    def id(self) -> str:
        language = f" [{self.accept_language}]" if self.accept_language else ""
        return f"{self.kind}:{self.target}{language}"


def build_sample_site(directory: Path, modifiers="default", hosts=()) -> Path:
    """The bundled sample built into `directory`/site for SITE_URL (and `hosts`)."""
    return build(Path(directory), site_url=SITE_URL, modifiers=modifiers, hosts=hosts)


def write_synthetic_archives(directory: Path) -> tuple[Path, Path]:
    """Two Archives with the cases the sample lacks (see the module's docstring)."""
    first = write_archive(directory / "synth-a", "synth-a.example.org", f"{SYNTH}/2019/01.01.00.00")
    second = write_archive(
        directory / "synth-b", "synth-b.example.org", f"{SYNTH}/2019/02.02.00.00"
    )
    write_item(
        first,
        f"{SYNTH}/2020/01.01.00.00",
        HARD_FILES,
        state="Original",
        ibip="J8LNKB5R7W/3ABCDE",
        target="a+b (1).pdf",
        language="en",
        translations={"pt": f"{SYNTH}/2020/01.01.00.01", "es": f"{SYNTH}/2020/01.01.00.02"},
        next_edition=f"{SYNTH}/2021/01.01.00.00",
        metadata=f"{SYNTH}/2020/01.01.00.09",
    )
    write_item(
        first,
        f"{SYNTH}/2020/01.01.00.09",
        {"metadata.xml": "<metadata/>\n", "oai dc+1.xml": "<oai_dc/>\n"},
        state="Original",
        content_type="Metadata",
        target="metadata.xml",
        formats={"oai_dc": "oai dc+1.xml"},
    )
    for minute, language in (("01", "pt"), ("02", "es")):
        write_item(
            first,
            f"{SYNTH}/2020/01.01.00.{minute}",
            state="Original",
            language=language,
            translations={"en": f"{SYNTH}/2020/01.01.00.00"},
        )
    write_item(first, f"{SYNTH}/2021/01.01.00.00", state="Original", language="en")
    write_item(first, f"{SYNTH}@8080/2020/05.05.00.00", state="Original", ibip="J8LNKB5R7W/3ABCDF")
    write_item(first, f"{SYNTH}/2020/02.02.00.00", {}, state="Deleted")
    for archive in (first, second):  # two Archives claim the original: a conflict
        write_item(archive, f"{SYNTH}/2020/03.03.00.00", state="Original")
    write_item(second, f"{SYNTH}/2020/04.04.00.00", state="Copy")  # no original anywhere
    return first, second


def build_synthetic_site(directory: Path, modifiers="default", hosts=()) -> Path:
    """The synthetic Archives built into `directory`/site for SITE_URL (and `hosts`)."""
    directory = Path(directory)
    archives = write_synthetic_archives(directory / "archives")
    return build(directory, archives, site_url=SITE_URL, modifiers=modifiers, hosts=hosts)


def url_table(site: Path, extra=EXTRA) -> list[UrlCase]:
    """Every form of deploycheck.url_forms over `site`'s index, and those of `extra`
    that name an IBI the site holds or none at all, each with resolve's answer."""
    resolver = Resolver(site)
    forms = url_forms(resolver.index)
    known = {(form.target, form.accept_language) for form in forms}
    held = {form.target.split("/")[0].lower() for form in forms}
    for form in extra:
        first = form.target.split("/")[0].lower()
        if (form.target, form.accept_language) not in known and first in held:
            forms.append(form)
    return [
        UrlCase(form.kind, form.target, form.accept_language, *expected_answer(resolver, form))
        for form in forms
    ]
