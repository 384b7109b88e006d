"""The static search (ibistatic.search) and the mkdocs catalog over a synthetic project.

    python benchmarks/search_bench.py --items 100000 [--workdir DIR] [--seed S] [--catalog]

Generates (or reuses) ``DIR/project-N-sS`` with ``make_archive.py`` and crawls it, then
prints, as JSON lines:

- ``search``: seconds (wall and CPU) to make every search file from the crawl, afresh
  and again after one deposit (what ``watch`` does); files, total bytes, the largest
  token and document files, and the size of ``index.json``;
- ``query``: for each sample query, the bytes a browser downloads, counted as
  ``search.js`` fetches them: ``index.json``, the token files of each word (a prefix's
  range when it is short), and the document files of the first 20 results;
- ``catalog`` (with ``--catalog``): ``build_catalog`` seconds, pages, the catalog's size.

Figures are printed, never asserted: see benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import bisect
import dataclasses
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from ibistatic.archive.load import load_archives  # noqa: E402
from ibistatic.config import load_config  # noqa: E402
from ibistatic.core.identifiers import parse_repository_name  # noqa: E402
from ibistatic.search.index import SearchIndex  # noqa: E402
from ibistatic.search.tokens import words  # noqa: E402

#: then the IBIp suffix of one item and the repository name of another (read from the
#: crawl: the synthetic IBIs depend on the seed)
QUERIES = ["modelo", "relatório 1930", "author 98", "2015"]
PAGE = 20  # search.js PAGE
PREFIX_FILES = 3  # search.js PREFIX_FILES


def _timed(function, *args):
    wall, cpu = time.perf_counter(), time.process_time()
    result = function(*args)
    return result, round(time.perf_counter() - wall, 2), round(time.process_time() - cpu, 2)


def _terms(query: str) -> list[tuple[str, bool]]:
    found = []
    for part in query.split():
        if "/" in part:
            found.append((part.lower(), True))
        else:
            found += [(word, len(word) >= 2) for word in sorted(words([part]))]
    return found


def _query_bytes(files: dict[str, str], query: str) -> dict:
    """What search.js downloads for *query*: bytes, files, results."""
    size = {name: len(text.encode("utf-8")) for name, text in files.items()}
    index = json.loads(files["index.json"])
    firsts = [first.encode("utf-16-be") for first, _ in index["chunks"]]
    fetched = {"index.json"}
    result: set[int] | None = None
    for token, prefix in _terms(query):
        low = max(0, bisect.bisect_right(firsts, token.encode("utf-16-be")) - 1)
        high = bisect.bisect_right(firsts, (token + "\uffff").encode("utf-16-be")) - 1
        if not prefix or high - low >= PREFIX_FILES:
            high = low
        found: set[int] = set()
        for n in range(low, high + 1):
            name = f"t/{index['chunks'][n][1]}.json"
            fetched.add(name)
            for entry in json.loads(files[name]):
                if entry[0] == token or (prefix and high > low and entry[0].startswith(token)):
                    numbers, total = set(), 0
                    for gap in entry[1]:
                        total += gap
                        numbers.add(total)
                    if len(entry) == 3:
                        numbers = set(range(index["documents"])) - numbers
                    found |= numbers
        result = found if result is None else result & found
    shown = sorted(result or (), reverse=True)[:PAGE]
    fetched |= {f"d/{n // index['per-file']}.json" for n in shown}
    return {
        "query": query,
        "results": len(result or ()),
        "files": len(fetched),
        "bytes": sum(size[name] for name in fetched),
    }


def _deposit(holdings: dict) -> dict:
    newest = max((items[0] for items in holdings.values()), key=lambda item: item.timestamp)
    item = dataclasses.replace(
        newest,
        repository=parse_repository_name("sid.inpe.br/mtc-m99/2099/01.01.00.00"),
        timestamp="2099-01-01T00:00:00Z",
        dublin_core=(("title", ("A deposit",)),),
    )
    return {**holdings, item.key: [item]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/ibistatic-bench"))
    parser.add_argument("--catalog", action="store_true", help="also time build_catalog")
    options = parser.parse_args()
    project = options.workdir / f"project-{options.items}-s{options.seed}"
    if not (project / "ibistatic.yaml").exists():
        shutil.rmtree(project, ignore_errors=True)
        subprocess.run(
            [
                sys.executable,
                str(HERE / "make_archive.py"),
                "--items",
                str(options.items),
                "--seed",
                str(options.seed),
                str(project),
            ],
            check=True,
        )
    print(json.dumps({"tree": str(HERE.parent), "project": str(project)}))
    config = load_config(project / "ibistatic.yaml")
    loaded, wall, cpu = _timed(load_archives, config.archives, config.site_url)
    print(json.dumps({"phase": "crawl", "seconds": wall, "cpu": cpu}))
    holdings: dict = {}
    for item in loaded.holdings.all_items():
        holdings.setdefault(item.key, []).append(item)
    index = SearchIndex("record/{}/")
    files, wall, cpu = _timed(index.files, holdings)
    _, again, again_cpu = _timed(index.files, _deposit(holdings))
    sizes = {name: len(text.encode("utf-8")) for name, text in files.items()}
    print(
        json.dumps(
            {
                "phase": "search",
                "documents": len(index.documents),
                "seconds": wall,
                "cpu": cpu,
                "after-a-deposit-seconds": again,
                "after-a-deposit-cpu": again_cpu,
                "files": len(files),
                "bytes": sum(sizes.values()),
                "largest-token-file": max(v for k, v in sizes.items() if k.startswith("t/")),
                "largest-document-file": max(v for k, v in sizes.items() if k.startswith("d/")),
                "index.json": sizes["index.json"],
            }
        )
    )
    middle = index.documents[len(index.documents) // 2]
    with_ibip = next(doc for doc in index.documents if "/" in doc.ibi and doc.ibi.count("/") == 1)
    for query in QUERIES + [with_ibip.ibi.split("/")[1], middle.key]:
        print(json.dumps({"phase": "query", **_query_bytes(files, query)}))
    if options.catalog:
        from ibistatic.catalog.publish import build_catalog

        with tempfile.TemporaryDirectory() as temp:
            out = Path(temp) / "catalog"
            pages, wall, cpu = _timed(build_catalog, config, out, loaded)
            size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
            print(
                json.dumps(
                    {"phase": "catalog", "pages": pages, "seconds": wall, "cpu": cpu, "bytes": size}
                )
            )


if __name__ == "__main__":
    main()
