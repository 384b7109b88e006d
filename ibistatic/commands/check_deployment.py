"""``ibistatic check-deployment BASE_URL``: ask a live deployment every persistent URL form
(or a sample) and compare each answer with the index (ibistatic.deploycheck)."""

from __future__ import annotations

import http.client
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

from ..errors import IbistaticError, UsageError, printable

#: forms asked when --sample is not given (spread over every kind)
DEFAULT_SAMPLE = 1000
MAX_CONCURRENCY = 32
#: the most of a body read (a static host's page is a few kB; 404.html tens)
MAX_BODY = 4 << 20


class DeploymentUnreachable(IbistaticError):
    """The deployment answered nothing at all."""

    exit_code = 2


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "check-deployment",
        help="ask a live deployment the persistent URL forms and compare with the index",
        description="Ask a deployment at BASE_URL (its site URL) for a sample, or all, of "
        "the persistent URL forms of a built index, without following redirects, and "
        "compare each status and Location with what `ibistatic resolve` answers. Prints a "
        "report; exits 1 when any answer differs, 2 when the deployment cannot be reached.",
    )
    parser.add_argument("base_url", metavar="BASE_URL", help="e.g. https://ibi.example.org/")
    parser.add_argument(
        "--sample",
        metavar="N",
        type=_sample,
        default=DEFAULT_SAMPLE,
        help=f"how many forms to ask, spread over every kind, or 'all' (default: {DEFAULT_SAMPLE})",
    )
    parser.add_argument(
        "--index",
        metavar="SITE",
        help="a built site or its index/ folder (default: the configured output)",
    )
    parser.add_argument(
        "--timeout", metavar="S", type=float, default=10.0, help="seconds per request (10)"
    )
    parser.add_argument(
        "--concurrency",
        metavar="N",
        type=int,
        default=4,
        help=f"requests at once, one kept-alive connection each (default 4, at most {MAX_CONCURRENCY})",
    )
    parser.add_argument(
        "--host",
        metavar="PROFILE",
        help="judge by what this host profile can do (docs/hosting.md): github-pages, "
        "netlify and s3 answer with the build's pages, 404.html and rules, the browser "
        "resolving the rest; others (the default) must answer as `ibistatic serve` does",
    )
    parser.set_defaults(func=run)


def _sample(text: str) -> int | None:
    if text == "all":
        return None
    if text.isdigit() and int(text) > 0:
        return int(text)
    import argparse

    raise argparse.ArgumentTypeError(f"expected a positive number or 'all', not {text!r}")


def run(args) -> int:
    from .. import deploycheck
    from ..resolver import Resolver

    base = _base_url(args.base_url)
    if not 1 <= args.concurrency <= MAX_CONCURRENCY:
        raise UsageError(f"--concurrency {args.concurrency}: expected 1 to {MAX_CONCURRENCY}")
    if not args.timeout > 0:
        raise UsageError(f"--timeout {args.timeout}: expected a number of seconds above 0")
    index = args.index or _default_index()
    site = _static_site(args.host, index)
    resolver = Resolver(index)
    forms = deploycheck.url_forms(resolver.index, items=args.sample)
    forms = deploycheck.sample_forms(forms, args.sample)
    expected = [deploycheck.expected_answer(resolver, form) for form in forms]
    asker = Asker(base, args.timeout, bodies=site is not None)
    first = asker.ask(forms[0])
    if isinstance(first, str):
        raise DeploymentUnreachable(printable(f"{base}: unreachable ({first})"))
    with ThreadPoolExecutor(args.concurrency) as pool:
        got = [first, *pool.map(asker.ask, forms[1:])]
    checked = [deploycheck.Checked(*row) for row in zip(forms, expected, got)]
    if site is not None:
        not_found = (site / "404.html").read_bytes()  # _static_site checked it is there
        checked = [
            item._replace(static=deploycheck.static_problem(site, not_found, *item[:3]))
            for item in checked
        ]
    for line in deploycheck.report_lines(base, checked):
        print(printable(line))
    return 0 if all(item.matches for item in checked) else 1


def _static_site(host: str | None, index: str) -> Path | None:
    """The built site a static host serves (to compare its pages), or None when `host`
    is judged as a server."""
    from ..deploycheck import STATIC_HOSTS
    from ..site.hosts import HOST_NAMES

    if host is None:
        return None
    if host not in HOST_NAMES:
        raise UsageError(f"--host {host!r}: expected one of {', '.join(HOST_NAMES)}")
    if host not in STATIC_HOSTS:
        return None
    site = Path(index)
    site = site.parent if site.name == "index" else site
    if not (site / "404.html").is_file():
        raise UsageError(f"--host {host}: --index {index} is no built site (no 404.html)")
    return site


def _base_url(text: str) -> str:
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query:
        raise UsageError(
            printable(
                f"{text!r}: expected the deployment's site URL, e.g. https://ibi.example.org/"
            )
        )
    return text if text.endswith("/") else text + "/"


def _default_index() -> str:
    from ..config import load_config

    return str(load_config().output)


class Asker:
    """GET requests to one deployment: one kept-alive connection per thread, redirects
    not followed; an answer is (status, Location), or why none came."""

    def __init__(self, base: str, timeout: float, bodies: bool = False) -> None:
        from .. import __version__
        from ..deploycheck import Answer, Served

        parts = urlsplit(base)
        self.secure = parts.scheme == "https"
        self.host, self.port = parts.hostname, parts.port
        self.path = parts.path or "/"
        self.timeout = timeout
        self.agent = f"ibistatic-check-deployment/{__version__}"
        self.local = threading.local()
        self.answer = Served if bodies else Answer
        #: keep each body (a static host's page is judged by it), and follow a redirect
        #: that only adds a slash (GitHub Pages sends /IBI to /IBI/)
        self.bodies = bodies

    def _connection(self) -> http.client.HTTPConnection:
        connection = getattr(self.local, "connection", None)
        if connection is None:
            kind = http.client.HTTPSConnection if self.secure else http.client.HTTPConnection
            connection = kind(self.host, self.port, timeout=self.timeout)
            self.local.connection = connection
        return connection

    def _drop(self) -> None:
        connection = getattr(self.local, "connection", None)
        if connection is not None:
            connection.close()
        self.local.connection = None

    def ask(self, form):
        target = self.path + form.target
        answer = self._get(target, form.accept_language)
        if self.bodies and not isinstance(answer, str) and answer.status in (301, 302):
            path, _, query = target.partition("?")
            slashed = path + "/" + (f"?{query}" if query else "")
            if (answer.location or "").endswith(slashed):
                return self._get(slashed, form.accept_language)
        return answer

    def _get(self, target: str, accept_language: str | None):
        headers = {"User-Agent": self.agent}
        if accept_language:
            headers["Accept-Language"] = accept_language
        for attempt in range(2):  # a kept-alive connection the server closed: once more
            try:
                connection = self._connection()
                connection.request("GET", target, headers=headers)
                response = connection.getresponse()
                body = response.read(MAX_BODY + 1)
                if len(body) > MAX_BODY or response.will_close:
                    self._drop()
                found = (response.status, response.getheader("Location"))
                return self.answer(*found, body) if self.bodies else self.answer(*found)
            except (OSError, http.client.HTTPException) as error:
                self._drop()
                if attempt:
                    return f"no answer: {error or type(error).__name__}"
        raise AssertionError("unreachable")  # pragma: no cover
