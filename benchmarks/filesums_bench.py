"""What the kept SHA-256 sums (archive.filesums) save a full build, with real-sized files.

    python benchmarks/filesums_bench.py [--items 500] [--megabytes 4] [--workdir DIR]

The synthetic project of ``make_archive.py`` has documents of a few hundred bytes, so
its builds never show the cost of the file lists' checksums.  This one makes a small
project, grows every document of ``doc/`` to ``--megabytes`` MB (INPE's PDFs are a few
MB each), builds it once, then times ``ibistatic build --full`` in a child process twice:

- ``sums read again``: the cache folder's ``file-sums.pickle`` removed first, so every
  document is read and hashed (what every full build did before the sums were kept);
- ``sums kept``: the same build again, with the sums the first one kept.

Figures are printed, never asserted (benchmarks/README.md).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_archive  # noqa: E402  (beside this script)

ROOT = Path(__file__).resolve().parent.parent
BLOCK = bytes(range(256)) * 4096  # 1 MiB that no compression or sparse file shortens


def grow_documents(project: Path, megabytes: int) -> tuple[int, int]:
    """Every file under a doc/ of `project` made `megabytes` MB long (its own text first,
    so no two are alike); returns (files, bytes)."""
    files = size = 0
    for directory, _, names in os.walk(project):
        if os.path.basename(directory) != "doc":
            continue
        for name in names:
            path = os.path.join(directory, name)
            with open(path, "r+b") as file:
                head = file.read()
                file.seek(0)
                file.write(head)
                for _ in range(megabytes):
                    file.write(BLOCK[: 1 << 20])
                size += file.tell()
            files += 1
    return files, size


def timed_build(project: Path, output: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of ``ibistatic build --full`` in a child process."""
    environment = dict(os.environ, PYTHONPATH=str(ROOT))
    command = [sys.executable, "-m", "ibistatic", "build", "--full", "--config"]
    command += [str(project / "ibistatic.yaml"), "--output", str(output)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, env=environment)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=500, help="items (default 500)")
    parser.add_argument("--megabytes", type=int, default=4, help="MB a document (default 4)")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/ibistatic-filesums-bench"))
    args = parser.parse_args(argv)
    shutil.rmtree(args.workdir, ignore_errors=True)
    project = make_archive.make_project(args.workdir / "project", args.items)
    files, size = grow_documents(project, args.megabytes)
    print(f"{args.items:,} items: {files:,} documents, {size / 1e9:.2f} GB under doc/")
    time.sleep(2.5)  # past the 2 s in which a file just written is hashed again
    output = args.workdir / "site"
    cache = output.parent / f".{output.name}.ibistatic-cache"
    timed_build(project, output)  # untimed: the crawl cache filled, the site there
    runs = []
    for label in ("sums read again", "sums kept"):
        if label == "sums read again":
            (cache / "file-sums.pickle").unlink(missing_ok=True)
        wall, cpu = timed_build(project, output)
        runs.append(wall)
        print(f"  build --full, {label}: wall {wall:.2f} s, CPU {cpu:.2f} s")
    print(f"  ratio: {runs[0] / runs[1]:.1f}x faster with the sums kept")
    shutil.rmtree(args.workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
