"""Write a synthetic publishing project: ``ibistatic.yaml`` and two Archives.

    python benchmarks/make_archive.py OUTPUT_DIR --items N [--seed S]

``archive-a`` holds N items in a realistic mix (see ``MIX``): plain Data items, some
with an IBIp and some with inline Dublin Core, in en/pt/es/pt-BR; translations linked
both ways; edition chains of 2-3 items; Metadata items named by ``metadata``; Deleted
items.  ``archive-b`` holds copies (state Copy, same descriptor and bytes) of about 5%
of archive-a's items.  Everything comes from one seeded ``random.Random`` and explicit
timestamps, so the same arguments give a byte-identical tree.

Other benchmarks and tests call :func:`make_project` (or :func:`generate` for the
counts).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

__all__ = ["MIX", "Totals", "generate", "make_project", "main"]

SITE_URL = "https://ibi.example.org/"
ARCHIVES = ("archive-a", "archive-b")

#: share of archive-a's items of each kind; the rest are plain Data items (~72%)
MIX = {"translation": 0.10, "edition": 0.08, "metadata": 0.07, "deleted": 0.03}
#: share of archive-a's items that archive-b holds copies of
COPY_SHARE = 0.05

# Identification subsystems: the two port forms ("@" pre-2010, "." recommended) appear.
PREFIXES = (
    "sid.inpe.br/mtc-m21",
    "sid.inpe.br/mtc-m21c",
    "sid.inpe.br/mtc-m22@80",
    "dpi.inpe.br/plutao.8080",
)
LANGUAGES = ("en", "pt", "es", "pt-BR")
IBIP_PREFIX = "8JMKD3MGP8W/"
IBIP_DIGITS = "23456789ABCDEFGHJKLMNPQRSTU"
# 27**6 is the first 7-digit IBIp suffix: every generated IBIp has the same length.
IBIP_FIRST = 27**6
# 2015-01-01T00:00:00Z; a 37 s step makes most suffixes carry seconds, some not.
EPOCH = 1420070400
STEP = 37
PROGRESS_EVERY = 10_000

FILLER = (
    "This file stands in for the content of a deposited document. It exists so "
    "that the repository has a default file to point to; its bytes are plain text "
    "whatever its extension says. Synthetic archives exercise crawling, descriptor "
    "loading, property lists and the site writer at scale.\n"
)
TITLE_WORDS = (
    "Relatório",
    "técnico",
    "Report",
    "orbit",
    "Informe",
    "satélite",
    "imagery",
    "calibration",
    "clima",
    "dados",
    "sensor",
    "modelo",
    "análise",
    "campaign",
)


@dataclass(frozen=True)
class Totals:
    """What one run wrote: items per kind, copies, files, and seconds spent."""

    kinds: dict[str, int]
    copies: int
    files: int
    seconds: float

    @property
    def items(self) -> int:
        return sum(self.kinds.values())


@dataclass
class _Item:
    """One planned item of archive-a (mutable while links are drawn)."""

    index: int
    kind: str
    repository: str
    timestamp: str
    ibip: str | None = None
    language: str | None = None
    translations: dict[str, str] = field(default_factory=dict)
    next_edition: str | None = None
    metadata: str | None = None
    describes: "_Item | None" = None
    dublin_core: dict[str, object] = field(default_factory=dict)
    target: str | None = None
    document: str = "document.txt"

    @property
    def state(self) -> str:
        return "Deleted" if self.kind == "deleted" else "Original"


# ------------------------------------------------------------------ names and dates


def _suffix(seconds: int) -> str:
    """``suffix = year "/" month "." day "." hour "." minute ["." second]``."""
    t = time.gmtime(seconds)
    text = f"{t.tm_year:04d}/{t.tm_mon:02d}.{t.tm_mday:02d}.{t.tm_hour:02d}.{t.tm_min:02d}"
    return text + (f".{t.tm_sec:02d}" if t.tm_sec else "")


def _iso(seconds: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def _ibip_suffix(number: int) -> str:
    """Base-27 digits of the IBIp alphabet (identification system, Table 7.6)."""
    digits = []
    while True:
        number, digit = divmod(number, 27)
        digits.append(IBIP_DIGITS[digit])
        if not number:
            return "".join(reversed(digits))


class _Minter:
    """Hands out unique repository names and IBIps from counters."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.count = 0
        self.ibips = IBIP_FIRST + len(ARCHIVES)  # the first ones name the services

    def repository(self) -> tuple[str, int]:
        seconds = EPOCH + self.count * STEP
        self.count += 1
        return f"{self.rng.choice(PREFIXES)}/{_suffix(seconds)}", seconds

    def ibip(self) -> str:
        self.ibips += 1
        return IBIP_PREFIX + _ibip_suffix(self.ibips - 1)


# ------------------------------------------------------------------ planning


def _counts(items: int) -> dict[str, int]:
    counts = {kind: round(items * share) for kind, share in MIX.items()}
    if counts["edition"] == 1:  # a chain needs two editions
        counts["edition"] = 0
    plain = items - sum(counts.values())
    # Tiny projects: every translation and metadata item needs its own plain item.
    for kind in ("translation", "metadata"):
        counts[kind] = min(counts[kind], plain)
    counts["plain"] = items - sum(counts.values())
    return counts


def _chain_lengths(editions: int, rng: random.Random) -> list[int]:
    lengths = []
    while editions:
        length = editions if editions in (2, 3) else 2 if editions == 4 else rng.choice((2, 3))
        lengths.append(length)
        editions -= length
    return lengths


def _units(counts: dict[str, int], rng: random.Random) -> list[tuple[str, int]]:
    """Kinds in deposit order; an edition chain is one unit so its items are adjacent."""
    units = [
        (kind, 1)
        for kind in ("plain", "translation", "metadata", "deleted")
        for _ in range(counts[kind])
    ]
    units += [("edition", length) for length in _chain_lengths(counts["edition"], rng)]
    rng.shuffle(units)
    return units


def _new_item(kind: str, minter: _Minter, rng: random.Random) -> _Item:
    repository, seconds = minter.repository()
    # Last update some time after the label was given (up to a month).
    item = _Item(0, kind, repository, _iso(seconds + rng.randrange(2_592_000)))
    if kind in ("plain", "translation", "edition"):
        item.ibip = minter.ibip() if rng.random() < 0.4 else None
        item.language = rng.choice(LANGUAGES) if rng.random() < 0.95 else None
        item.document = rng.choice(("document.pdf", "document.txt"))
        # Leave some targets implicit: the only file of doc/ is the default.
        item.target = item.document if rng.random() < 0.8 else None
    elif kind == "metadata":
        item.target = "metadata.html"
    elif kind == "deleted":
        item.ibip = minter.ibip() if rng.random() < 0.2 else None
    return item


def _plan_items(items: int, rng: random.Random) -> list[_Item]:
    minter = _Minter(rng)
    planned: list[_Item] = []
    for kind, length in _units(_counts(items), rng):
        chain = [_new_item(kind, minter, rng) for _ in range(length)]
        for older, newer in zip(chain, chain[1:]):
            older.next_edition = _reference(newer, rng)
            newer.language = older.language
        planned.extend(chain)
    for index, item in enumerate(planned):
        item.index = index
    return planned


def _reference(item: _Item, rng: random.Random) -> str:
    """Either IBI form (archive-format.md allows both) when the item has an IBIp."""
    return item.ibip if item.ibip and rng.random() < 0.5 else item.repository


def _other_language(language: str, rng: random.Random) -> str:
    primary = language.split("-")[0]
    return rng.choice([tag for tag in LANGUAGES if tag.split("-")[0] != primary])


def _link_translations(planned: list[_Item], rng: random.Random) -> None:
    translations = [item for item in planned if item.kind == "translation"]
    bases = [item for item in planned if item.kind == "plain" and item.language]
    for translation, base in zip(
        translations, rng.sample(bases, min(len(bases), len(translations)))
    ):
        translation.language = _other_language(base.language, rng)
        translation.translations[base.language] = _reference(base, rng)
        base.translations[translation.language] = _reference(translation, rng)


def _link_metadata(planned: list[_Item], rng: random.Random) -> None:
    described = [item for item in planned if item.kind == "metadata"]
    plain = [item for item in planned if item.kind == "plain"]
    for metadata, item in zip(described, rng.sample(plain, min(len(plain), len(described)))):
        item.metadata = _reference(metadata, rng)
        metadata.describes = item


def _add_dublin_core(planned: list[_Item], rng: random.Random) -> None:
    for item in planned:
        if item.kind in ("plain", "translation") and rng.random() < 0.3:
            words = rng.sample(TITLE_WORDS, 3)
            item.dublin_core = {
                "title": f"{' '.join(words).capitalize()} nº {item.index}",
                "creator": [f"Author {rng.randrange(500)}, A."],
                "date": item.timestamp[:10],
                "language": item.language or "en",
                "type": "Text",
            }


def _plan(items: int, seed: int) -> tuple[list[_Item], list[_Item]]:
    """archive-a's items and the subset archive-b copies, all links drawn."""
    rng = random.Random(seed)
    planned = _plan_items(items, rng)
    _link_translations(planned, rng)
    _link_metadata(planned, rng)
    _add_dublin_core(planned, rng)
    live = [item for item in planned if item.kind != "deleted"]
    copies = sorted(
        rng.sample(live, min(len(live), round(items * COPY_SHARE))), key=lambda item: item.index
    )
    return planned, copies


# ------------------------------------------------------------------ writing


def _scalar(value: object) -> str:
    # JSON strings are YAML double-quoted scalars: safe for any title.
    return json.dumps(value, ensure_ascii=False)


def _descriptor(item: _Item, state: str) -> str:
    lines = [f"state: {state}"]
    if item.ibip:
        lines.append(f"ibip: {item.ibip}")
    if item.kind == "metadata":
        lines.append("content-type: Metadata")
    lines.append(f"timestamp: {_scalar(item.timestamp)}")
    if item.target:
        lines.append(f"target: {item.target}")
    if item.kind == "metadata":
        lines += ["formats:", "  oai_dc: oai_dc.xml"]
    if item.language:
        lines.append(f"language: {item.language}")
    if item.translations:
        lines.append("translations:")
        lines += [f"  {tag}: {ibi}" for tag, ibi in sorted(item.translations.items())]
    if item.next_edition:
        lines.append(f"next-edition: {item.next_edition}")
    if item.metadata:
        lines.append(f"metadata: {item.metadata}")
    if item.dublin_core:
        lines.append("dublin-core:")
        lines += [f"  {key}: {_scalar(value)}" for key, value in item.dublin_core.items()]
    return "\n".join(lines) + "\n"


def _document(item: _Item) -> str:
    label = item.repository + (f" ({item.ibip})" if item.ibip else "")
    return (
        f"Synthetic document {item.index} of the ibistatic benchmark archive.\n"
        f"IBI: {label}\nLanguage: {item.language or 'not given'}\n\n{FILLER}"
    )


def _oai_dc(item: _Item) -> str:
    subject = item.describes
    about = subject.repository if subject else item.repository
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<oai_dc:dc xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/" '
        'xmlns:dc="http://purl.org/dc/elements/1.1/">\n'
        f"  <dc:title>Synthetic item {subject.index if subject else item.index}</dc:title>\n"
        f"  <dc:identifier>{SITE_URL}{about}</dc:identifier>\n"
        f"  <dc:date>{item.timestamp[:10]}</dc:date>\n"
        "  <dc:type>Text</dc:type>\n"
        "</oai_dc:dc>\n"
    )


def _metadata_page(item: _Item) -> str:
    about = item.describes.repository if item.describes else item.repository
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>Metadata of {about}</title></head>\n"
        f"<body><h1>Metadata of {about}</h1><p>Synthetic metadata record.</p></body></html>\n"
    )


def _files(item: _Item) -> dict[str, str]:
    if item.kind == "deleted":
        return {}
    if item.kind == "metadata":
        return {"metadata.html": _metadata_page(item), "oai_dc.xml": _oai_dc(item)}
    return {item.document: _document(item)}


def _write_text(path: str, text: str) -> None:
    # newline="" so the bytes are the same on every platform.
    with open(path, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)


def _write_item(archive: str, item: _Item, state: str) -> int:
    """Write one uniform repository; returns the number of files written."""
    directory = os.path.join(archive, *item.repository.split("/"))
    files = _files(item)
    os.makedirs(os.path.join(directory, "doc") if files else directory)
    _write_text(os.path.join(directory, "item.yaml"), _descriptor(item, state))
    for name, text in files.items():
        _write_text(os.path.join(directory, "doc", name), text)
    return 1 + len(files)


def _archive_yaml(letter: str, number: int) -> str:
    return (
        f"address: mtc-m21{letter}.sid.inpe.br\n"
        f"service-ibi: sid.inpe.br/mtc-m21{letter}/2014/12.31.23.59\n"
        f"service-ibip: {IBIP_PREFIX}{_ibip_suffix(IBIP_FIRST + number)}\n"
        "platform-software-ibi: dpi.inpe.br/banon/1998/08.02.08.56\n"
    )


def _write_config(root: Path) -> None:
    archives = "".join(f"  - {name}\n" for name in ARCHIVES)
    _write_text(
        str(root / "ibistatic.yaml"), f"site-url: {SITE_URL}\narchives:\n{archives}output: site\n"
    )
    for number, name in enumerate(ARCHIVES):
        (root / name).mkdir()
        _write_text(str(root / name / "archive.yaml"), _archive_yaml(name[-1], number))


def _check_empty(root: Path) -> None:
    # Writing over an older project would mix its items into this one.
    for name in ("ibistatic.yaml", *ARCHIVES):
        if (root / name).exists():
            raise FileExistsError(f"{root / name} already exists; choose an empty OUTPUT_DIR")


def generate(
    path: str | os.PathLike[str],
    items: int,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> Totals:
    """Write the project into ``path`` (created if needed) and return what was written.

    ``progress(done, total)`` is called every 10,000 items of archive-a.
    """
    if items < 0:
        raise ValueError(f"items must be >= 0, not {items}")
    started = time.perf_counter()
    root = Path(path)
    root.mkdir(parents=True, exist_ok=True)
    _check_empty(root)
    planned, copies = _plan(items, seed)
    _write_config(root)
    archive_a, archive_b = (str(root / name) for name in ARCHIVES)
    files = 0
    for done, item in enumerate(planned, start=1):
        files += _write_item(archive_a, item, item.state)
        if progress and done % PROGRESS_EVERY == 0:
            progress(done, items)
    for item in copies:
        files += _write_item(archive_b, item, "Copy")
    kinds = Counter(item.kind for item in planned)
    return Totals(dict(sorted(kinds.items())), len(copies), files, time.perf_counter() - started)


#: written last into a benchmark's project: a project without it is incomplete
MARKER = "bench-project.json"


def ensure_project(workdir: Path, items: int, seed: int) -> Path:
    """``workdir/project-N-sS``, generated unless a complete one is already there (the
    benchmarks share it: crawl_bench.py and build_bench.py can use the same workdir)."""
    project = workdir / f"project-{items}-s{seed}"
    if (project / MARKER).is_file():
        print(f"reusing {project}", flush=True)
        return project
    if project.exists():
        shutil.rmtree(project)  # an interrupted generation
    print(f"generating {items:,} items into {project} ...", flush=True)
    totals = generate(project, items, seed)
    (project / MARKER).write_text(
        json.dumps({"items": items, "seed": seed, "seconds": totals.seconds})
    )
    print(
        f"generated {totals.items:,} items + {totals.copies:,} copies, {totals.files:,} files "
        f"in {totals.seconds:.1f} s",
        flush=True,
    )
    return project


def read_tree(project: Path) -> tuple[int, float]:
    """Read every file of the project once, so that what is measured next finds it in
    the operating system's page cache (a project generated earlier may have been evicted)."""
    started = time.perf_counter()
    files = 0
    for directory, _, names in os.walk(project):
        for name in names:
            with open(os.path.join(directory, name), "rb") as handle:
                handle.read()
            files += 1
    return files, time.perf_counter() - started


def make_project(path: str | os.PathLike[str], items: int, seed: int = 0) -> Path:
    """Write a synthetic project of ``items`` items into ``path``; returns the path."""
    generate(path, items, seed)
    return Path(path)


# ------------------------------------------------------------------ command line


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="make_archive.py",
        description="Write a synthetic ibistatic publishing project (two Archives).",
    )
    parser.add_argument("output", metavar="OUTPUT_DIR", help="directory to create (must be empty)")
    parser.add_argument(
        "--items", type=int, required=True, metavar="N", help="number of items in archive-a"
    )
    parser.add_argument("--seed", type=int, default=0, metavar="S", help="random seed (default 0)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)

    def report(done: int, total: int) -> None:
        print(f"{done:,} / {total:,} items", flush=True)

    try:
        totals = generate(args.output, args.items, args.seed, progress=report)
    except (FileExistsError, ValueError) as error:
        print(f"make_archive.py: error: {error}", file=sys.stderr)
        return 2
    kinds = ", ".join(f"{kind} {count:,}" for kind, count in totals.kinds.items())
    print(
        f"archive-a: {totals.items:,} items ({kinds}); archive-b: {totals.copies:,} copies; "
        f"{totals.files:,} files in {totals.seconds:.2f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
