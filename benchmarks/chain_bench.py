"""Build times of long edition chains and of items with many languages (issue 36).

    python benchmarks/chain_bench.py [--chains 100,1000,5000,10000]
                                     [--languages 10,40,100,200] [--workdir DIR]
                                     [--profile KIND:N]

Each case is a project of one Archive written by :func:`make_chain_project` (N items,
item k's ``next-edition`` is item k+1; ``modifiers: default``) or
:func:`make_languages_project` (one item in ``en`` with N translations, each its own
item naming the first back; ``modifiers: all``, so the first item has a page per
language and its ``+`` pages carry an answer per language), built with
``ibistatic build --full --quiet`` in a child process of its own.  It prints one JSON
line per case: the items, the wall seconds of the build, the CPU seconds of the build and
its workers (steadier where others share the machine), and the milliseconds per item (a
flat column is linear growth).  ``--profile chain:1000`` prints cProfile's top functions
of that build too.  ``answers`` says whether the site answers as it must (the first
edition's ``!``: the last edition; ``+(L)``: the translation in L).  Projects are kept
in ``--workdir`` and reused.  Tests import the two
writers (tests/test_long_chains.py).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

__all__ = ["chain_name", "language_tags", "make_chain_project", "make_languages_project"]

SITE_URL = "https://ibi.example.org/"
ADDRESS = "chain.example.org"
SERVICE = "example.org/chain-service/2020/01.01.00.00"
#: 2020-01-01T00:00:00Z: item k's repository name is this plus k minutes
EPOCH = 1577836800


def chain_name(k: int, prefix: str = "example.org/chain") -> str:
    """The repository name of item `k`: one minute apart, so that every name is unique
    and a valid date (the suffix grammar has no room for a counter)."""
    t = time.gmtime(EPOCH + 60 * k)
    return f"{prefix}/{t.tm_year:04d}/{t.tm_mon:02d}.{t.tm_mday:02d}.{t.tm_hour:02d}.{t.tm_min:02d}"


def language_tags(count: int) -> list[str]:
    """`count` distinct language tags of the schema (ISO 639-1, optionally ``-`` and an
    ISO 3166-1 country), never ``en`` (the item's own): plain codes first, then each code
    with each country, in a fixed order."""
    from ibistatic.core.facts import COUNTRIES, LANGUAGES

    codes = sorted(LANGUAGES - {"en"})
    tags = codes + [f"{code}-{country}" for country in sorted(COUNTRIES) for code in codes]
    if count > len(tags):
        raise ValueError(f"at most {len(tags)} tags")
    return tags[:count]


def _write_project(directory: Path, items: dict[str, str], modifiers: str) -> Path:
    """An ibistatic.yaml and Archive `archive` holding `items` (repository -> item.yaml)."""
    archive = directory / "archive"
    archive.mkdir(parents=True, exist_ok=True)
    (archive / "archive.yaml").write_text(
        f"address: {ADDRESS}\nservice-ibi: {SERVICE}\n", encoding="utf-8"
    )
    for repository, text in items.items():
        folder = archive.joinpath(*repository.split("/"))
        (folder / "doc").mkdir(parents=True, exist_ok=True)
        (folder / "item.yaml").write_text(text, encoding="utf-8")
        (folder / "doc" / "document.txt").write_text(f"{repository}\n", encoding="utf-8")
    config = directory / "ibistatic.yaml"
    config.write_text(
        f"site-url: {SITE_URL}\narchives:\n  - {archive}\noutput: {directory / 'site'}\n"
        f"modifiers: {modifiers}\n",
        encoding="utf-8",
    )
    return config


def make_chain_project(directory: Path, length: int, modifiers: str = "default") -> Path:
    """A project whose Archive holds a chain of `length` editions; its ibistatic.yaml."""
    items = {}
    for k in range(length):
        text = "state: Original\ntimestamp: '2020-01-01T00:00:00Z'\ntarget: document.txt\n"
        if k + 1 < length:
            text += f"next-edition: {chain_name(k + 1)}\n"
        items[chain_name(k)] = text
    return _write_project(Path(directory), items, modifiers)


def make_languages_project(directory: Path, languages: int, modifiers: str = "default") -> Path:
    """A project whose first item (in ``en``) has `languages` translations, each an item
    in its own tag that names the first as its ``en`` translation; its ibistatic.yaml."""
    tags = language_tags(languages)
    first = chain_name(0, "example.org/tongues")
    head = "state: Original\ntimestamp: '2020-01-01T00:00:00Z'\ntarget: document.txt\n"
    lines = [head + "language: en\ntranslations:\n"]
    items = {}
    for k, tag in enumerate(tags, start=1):
        name = chain_name(k, "example.org/tongues")
        # quoted: YAML 1.1 reads a bare no (Norwegian) as false
        lines.append(f"  '{tag}': {name}\n")
        items[name] = head + f"language: '{tag}'\ntranslations:\n  en: {first}\n"
    items[first] = "".join(lines)
    return _write_project(Path(directory), items, modifiers)


def _build(config: Path, profile: bool) -> tuple[float, float]:
    """Seconds of one `ibistatic build --full --quiet` in a child process: its wall time,
    and the CPU time of the child and of the workers it forks (the figure to compare on
    a machine others use)."""
    code = (
        "import sys, time\n"
        "from ibistatic.cli import main\n"
        f"argv = ['build', '--config', {str(config)!r}, '--full', '--quiet']\n"
        "start = time.perf_counter()\n"
        "if PROFILE:\n"
        "    import cProfile, pstats\n"
        "    profiler = cProfile.Profile()\n"
        "    status = profiler.runcall(main, argv)\n"
        "    pstats.Stats(profiler, stream=sys.stderr).sort_stats('cumulative')"
        ".print_stats(40)\n"
        "else:\n"
        "    status = main(argv)\n"
        "print(time.perf_counter() - start)\n"
        "sys.exit(status)\n"
    ).replace("PROFILE", str(profile))
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    if profile:
        sys.stderr.write(done.stderr)
    if done.returncode != 0:
        sys.stderr.write(done.stderr[-4000:])
        raise SystemExit(f"the build of {config} failed ({done.returncode})")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return float(done.stdout.strip().splitlines()[-1]), cpu


def _answers(kind: str, n: int, site: Path) -> bool:
    """Whether the built site answers as it must: the first edition's ``!`` its last
    edition, the first item's ``+(L)`` its translation in the last language L."""
    from ibistatic.resolver import Resolver

    resolver = Resolver(site)
    if kind == "chain":
        wanted, got = chain_name(n - 1), resolver.resolve(chain_name(0) + "!")
    else:
        first = chain_name(0, "example.org/tongues")
        wanted = chain_name(n, "example.org/tongues")
        got = resolver.resolve(f"{first}+({language_tags(n)[-1]})")
    return got.url == f"http://{ADDRESS}/col/{wanted}/doc/document.txt"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chains", default="100,1000,5000,10000")
    parser.add_argument("--languages", default="10,40,100,200")
    parser.add_argument("--workdir", default="/tmp/ibistatic-chain-bench")
    parser.add_argument("--profile", metavar="KIND:N", help="chain:N or languages:N")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))  # this checkout's ibistatic, as the builds use
    work = Path(args.workdir)
    print(f"tree: {ROOT}")
    cases = [("chain", int(n)) for n in args.chains.split(",") if n]
    cases += [("languages", int(n)) for n in args.languages.split(",") if n]
    if args.profile:
        kind, _, n = args.profile.partition(":")
        cases = [(kind, int(n))]
    for kind, n in cases:
        directory = work / f"{kind}-{n}"
        config = directory / "ibistatic.yaml"
        if not config.exists():
            if kind == "chain":
                make_chain_project(directory, n)
            else:  # every modifier: a page per language, and the `+` pages negotiated
                make_languages_project(directory, n, "all")
        items = n if kind == "chain" else n + 1
        seconds, cpu = _build(config, bool(args.profile))
        line = {"case": kind, "n": n, "items": items, "seconds": round(seconds, 2)}
        line["cpu_seconds"] = round(cpu, 2)
        line["ms_per_item"] = round(1000 * seconds / items, 2)
        line["answers"] = _answers(kind, n, directory / "site")
        print(json.dumps(line), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
