"""A resolver network on loopback for tests and the benchmark: archive trees built into
separate sites, `ibistatic serve --join` and `ibistatic resolver` as real processes."""

from __future__ import annotations

import http.client
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import yaml

from archive_factory import write_archive, write_item

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "ibistatic" / "sample_archive"
SERVICE = "J8LNKB5R7W/3FUQHC5"

#: the Archive of §8.1/§8.2 (the sample's mtc-m16c) without the next edition
A_SERVICE = "sid.inpe.br/mtc-m18@80/2008/03.17.15.17"
#: holds the next edition of 8JMKD3MGP8W/35MMLL8 and its metadata, and the Portuguese
#: translation of 8JMKD3MGP8W/35MME4E
B_SERVICE = "sid.inpe.br/mtc-m20/2012/01.01.00.00"
#: claims the original of 8JMKD3MGP8W/35MMLL8, which A holds
LIAR_SERVICE = "liar.example.org/service/2020/01.01.00.00"
#: an Archive that joins and leaves
LEAVER_SERVICE = "leaver.example.org/service/2020/01.01.00.00"
#: registered, but never a real Archive: one down, one hung
DOWN_SERVICE = "down.example.org/service/2020/01.01.00.00"
HUNG_SERVICE = "hung.example.org/service/2020/01.01.00.00"

KEYS = {
    A_SERVICE: "1111111111",
    B_SERVICE: "2222222222-2222222222",
    LIAR_SERVICE: "3333333333",
    LEAVER_SERVICE: "4444444444",
    DOWN_SERVICE: "5555555555",
    HUNG_SERVICE: "6666666666",
}

NEXT = "sid.inpe.br/mtc-m18/2012"  # the next edition and its metadata (§8.2)
PT = "sid.inpe.br/mtc-m18@80/2009/08.25.19.43"  # 8JMKD3MGP8W/35MME4E+(pt)
SHARED = "sid.inpe.br/mtc-m20/2015/03.04.05.06"  # a Copy at A, the Original at B
LEAVER_ITEM = "leaver.example.org/items/2020/05.06.07.08"


def _move(source: Path, target: Path, repository: str) -> None:
    parts = repository.split("/")
    shutil.move(str(source.joinpath(*parts)), str(target.joinpath(*parts[:-1])) + "/")


def make_trees(root: Path) -> dict[str, Path]:
    """The archive trees: {name: directory}."""
    a = root / "trees" / "a"
    shutil.copytree(SAMPLE / "mtc-m16c", a)
    b = write_archive(root / "trees" / "b", "mtc-m20.sid.inpe.br", B_SERVICE)
    (b / "sid.inpe.br" / "mtc-m18").mkdir(parents=True)
    (b / "sid.inpe.br" / "mtc-m18@80" / "2009").mkdir(parents=True)
    _move(a, b, NEXT)
    _move(a, b, PT)
    write_item(a, SHARED, state="Copy", target="shared.pdf", files={"shared.pdf": "copy"})
    write_item(b, SHARED, state="Original", target="shared.pdf", files={"shared.pdf": "orig"})
    liar = write_archive(root / "trees" / "liar", "liar.example.org", LIAR_SERVICE)
    write_item(
        liar,
        "sid.inpe.br/mtc-m18@80/2009/07.21.14.43",
        state="Original",
        ibip="8JMKD3MGP8W/35MMLL8",
        target="forged.pdf",
        files={"forged.pdf": "not the original"},
    )
    leaver = write_archive(root / "trees" / "leaver", "leaver.example.org", LEAVER_SERVICE)
    write_item(leaver, LEAVER_ITEM, state="Original", target="doc.txt", files={"doc.txt": "x"})
    return {"a": a, "b": b, "liar": liar, "leaver": leaver}


def build_site(tree: Path, directory: Path) -> Path:
    """Build one archive tree into `directory`/site with `ibistatic build`."""
    directory.mkdir(parents=True, exist_ok=True)
    config = {"site-url": "https://ibi.example.org/", "archives": [str(tree)], "output": "site"}
    (directory / "ibistatic.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    subprocess.run(
        [sys.executable, "-m", "ibistatic", "build", "--config", str(directory / "ibistatic.yaml")],
        check=True,
        capture_output=True,
        env=environment(),
    )
    return directory / "site"


def write_keys(path: Path, keys: dict[str, str] = KEYS) -> Path:
    entries = [{"archive-service-ibi": s, "registration-key": k} for s, k in keys.items()]
    path.write_text(yaml.safe_dump(entries), encoding="utf-8")
    return path


def environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


class Process:
    """An `ibistatic` command in the background, its stderr collected line by line."""

    def __init__(self, *args: str, python: tuple[str, ...] = ("-m", "ibistatic")) -> None:
        self.args = args
        self.lines: list[str] = []
        self.process = subprocess.Popen(
            [sys.executable, *python, *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=environment(),
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    @classmethod
    def python(cls, *argv: str) -> "Process":
        """`python argv...` (a profiler around ibistatic, say)."""
        return cls(*argv, python=())

    def _read(self) -> None:
        for line in self.process.stderr:
            self.lines.append(line.rstrip("\n"))

    def wait_for(self, pattern: str, timeout: float = 20.0) -> re.Match:
        """The first stderr line matching `pattern` (waits for it)."""
        deadline = time.monotonic() + timeout
        regex = re.compile(pattern)
        while time.monotonic() < deadline:
            for line in list(self.lines):
                match = regex.search(line)
                if match:
                    return match
            if self.process.poll() is not None and not self._reader.is_alive():
                break
            time.sleep(0.02)
        raise AssertionError(f"no line matching {pattern!r} from {self.args}: {self.lines}")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 15.0) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
        self._reader.join(5)
        return code


def start_resolver(keys: Path, *extra: str) -> tuple[Process, int]:
    process = Process("resolver", "--keys", str(keys), "--port", "0", *extra)
    port = int(process.wait_for(r"service at http://127\.0\.0\.1:(\d+)/").group(1))
    return process, port


def start_archive(site: Path, resolver_port: int, key: str, *extra: str) -> tuple[Process, int]:
    """`ibistatic serve --join`; returns once the resolver has answered the inclusion."""
    process = Process(
        "serve",
        "--index",
        str(site),
        "--port",
        "0",
        "--join",
        f"http://127.0.0.1:{resolver_port}/{SERVICE}",
        "--registration-key",
        key,
        *extra,
    )
    port = int(process.wait_for(r"http://127\.0\.0\.1:(\d+)/").group(1))
    process.wait_for(r"resolver")
    return process, port


def get(
    port: int,
    target: str,
    headers: dict | None = None,
    timeout: float = 10.0,
    source: str | None = None,
):
    """(status, headers as a dict of lower-case names, body) of GET `target`, sent from
    the loopback address `source` when given (another client than the resolver)."""
    address = (source, 0) if source else None
    connection = http.client.HTTPConnection(
        "127.0.0.1", port, timeout=timeout, source_address=address
    )
    try:
        connection.request("GET", target, headers=headers or {})
        response = connection.getresponse()
        body = response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, body
    finally:
        connection.close()
