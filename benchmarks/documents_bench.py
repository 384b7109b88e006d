"""What publishing the documents inside the site costs (issue 38, site/outputs/documents.py).

    python benchmarks/documents_bench.py [--items 1000] [--kib 256] [--workdir DIR]

A project of one Archive of ``--items`` items, each with one document of ``--kib`` KiB
(distinct bytes), is built four times with ``ibistatic build`` in a child process, with
the Archive's ``file-url`` first pointing at a server of its own (nothing copied), then
into the site (``{site}col/{repository}/doc/{path}``):

1. ``own server, --full``, twice: the baseline, no document in the site (the second
   build also replaces a generation, as every later build does);
2. ``in the site, --full`` (first): every document copied once into the cache, linked;
3. ``in the site, --full`` (again): the copies exist, every document only linked;
4. ``in the site, update``: one document edited, the rest left as they are.

It prints one JSON line per build (wall and CPU seconds) and the bytes of the copies, of
the site (links counted once, as ``du`` counts them) and of the Archive.
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

ROOT = Path(__file__).resolve().parent.parent
SITE_URL = "https://ibi.example.org/"
SERVICE = "example.org/docs/2019/01.01.00.00"


def make_project(folder: Path, items: int, kib: int) -> Path:
    archive = folder / "archives" / "archive"
    if (folder / "ibistatic.yaml").exists():
        return archive
    archive.mkdir(parents=True)
    for number in range(items):
        repository = archive / f"example.org/docs/2020/01.01.{number // 60:02d}.{number % 60:02d}"
        (repository / "doc").mkdir(parents=True)
        (repository / "item.yaml").write_text(
            f"state: Original\ntimestamp: '2020-01-01T00:00:00Z'\ntarget: d{number}.pdf\n"
        )
        data = (number.to_bytes(4, "big") + os.urandom(60)) * (kib * 16)
        (repository / "doc" / f"d{number}.pdf").write_bytes(data)
    (folder / "ibistatic.yaml").write_text(
        f"site-url: {SITE_URL}\narchives: [archives/archive]\noutput: site\n"
    )
    return archive


def set_file_url(archive: Path, file_url: str) -> None:
    (archive / "archive.yaml").write_text(
        f"address: ibi.example.org\nservice-ibi: {SERVICE}\nfile-url: '{file_url}'\n"
    )


def build(folder: Path, *options: str) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "ibistatic", "build", "--quiet", *options],
        cwd=folder,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2)}


def disk_bytes(path: Path) -> int:
    """The bytes `path` holds, each file once however many links it has (as du)."""
    seen, total = set(), 0
    for root, _, files in os.walk(path, followlinks=True):
        for name in files:
            status = os.stat(os.path.join(root, name))
            if (status.st_dev, status.st_ino) not in seen:
                seen.add((status.st_dev, status.st_ino))
                total += status.st_size
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--kib", type=int, default=256)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/ibistatic-documents-bench"))
    args = parser.parse_args()
    folder = args.workdir / f"{args.items}x{args.kib}k"
    archive = make_project(folder, args.items, args.kib)
    runs = []
    set_file_url(archive, "http://files.example.org/col/{repository}/doc/{path}")
    runs.append(("own server, --full (first)", build(folder, "--full")))
    runs.append(("own server, --full (again: a generation to replace)", build(folder, "--full")))
    set_file_url(archive, "{site}col/{repository}/doc/{path}")
    runs.append(("in the site, --full (first: copies)", build(folder, "--full")))
    runs.append(("in the site, --full (again: links)", build(folder, "--full")))
    edited = next(archive.rglob("d0.pdf"))
    edited.write_bytes(os.urandom(args.kib * 1024))
    runs.append(("in the site, update (one document edited)", build(folder)))
    for name, figures in runs:
        print(json.dumps({"build": name, "items": args.items, "kib": args.kib, **figures}))
    sizes = {
        "archive_bytes": disk_bytes(archive),
        "copies_bytes": disk_bytes(folder / ".site.ibistatic-cache" / "documents"),
        "site_bytes": disk_bytes(folder / "site"),
        "site_and_copies_bytes": disk_bytes(folder / ".site.ibistatic"),
    }
    print(json.dumps(sizes))


if __name__ == "__main__":
    main()
