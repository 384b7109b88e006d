"""The hosts' own engines, on loopback, for the host-profile tests (docs/hosting.md).

- :func:`netlify_answers`: Netlify's redirect engine (``@netlify/redirects``, what
  ``netlify dev`` runs) over a built site's ``_redirects``, every path in one node
  process; a page on disk is a static file, as Netlify serves it (a rule not forced is
  shadowed by it).
- :class:`Wrangler`: ``wrangler pages dev`` (Cloudflare's workerd and asset server)
  serving a built site with its ``_worker.js``, offline: no metrics, no update check,
  no ``Request.cf`` download.
- :func:`ask`: one GET that does not follow redirects (status, Location, Vary).
- :func:`expected`: what ``ibistatic serve`` answers for a request (the same resolver
  and HTTP rule), the oracle every engine is compared with.

The npm packages are pinned in ``scripts/test.sh`` (``NPM_PACKAGES``) and installed into
``.node/``; a test skips, saying so, only where node or the package is absent.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from ibistatic.core.http import http_answer
from ibistatic.errors import IbistaticError

ROOT = Path(__file__).resolve().parent.parent
NODE_MODULES = ROOT / ".node" / "node_modules"
NODE = shutil.which("node") or shutil.which("nodejs")
NETLIFY_ENGINE = NODE_MODULES / "@netlify" / "redirects" / "dist" / "main.js"
WRANGLER = NODE_MODULES / "wrangler" / "bin" / "wrangler.js"
START_TIMEOUT = 90.0


def missing(*needed: Path) -> str | None:
    """Why an engine cannot run here, or None."""
    if NODE is None:
        return "node is not installed (scripts/test.sh installs it)"
    for path in needed:
        if not path.exists():
            return f"{path.relative_to(ROOT)} is missing (scripts/test.sh installs it into .node/)"
    return None


NETLIFY_SCRIPT = r"""
import fs from "node:fs";
import path from "node:path";
const [engine, site, asked] = process.argv.slice(1);
const { RedirectsHandler } = await import(engine);
const handler = new RedirectsHandler({
  configRedirects: [], projectDir: site, publicDir: site, jwtRoleClaim: "", jwtSecret: "",
});
// Netlify serves a file at the path, or the index.html of a folder there
function staticFile(url) {
  const decoded = decodeURIComponent(url.pathname);
  for (const candidate of [decoded, path.join(decoded, "index.html")]) {
    const file = path.join(site, candidate);
    if (fs.existsSync(file) && fs.statSync(file).isFile()) return file;
  }
  return null;
}
async function getStaticFile(request) {
  const file = staticFile(new URL(request.url));
  return file === null ? undefined : async () => new Response(fs.readFileSync(file), { status: 200 });
}
const out = [];
for (const requestPath of JSON.parse(fs.readFileSync(asked, "utf8"))) {
  const request = new Request("http://localhost" + requestPath);
  const match = await handler.match(request);
  const page = staticFile(new URL(request.url)) !== null;
  if (!match) { out.push({ path: requestPath, matched: false, page }); continue; }
  const response = await handler.handle(request, match, getStaticFile);
  out.push({
    path: requestPath, matched: true, page, force: match.force, ruleStatus: match.statusCode,
    target: match.targetRelative, status: response ? response.status : null,
    location: response ? response.headers.get("location") : null,
  });
}
process.stdout.write(JSON.stringify(out));
"""


def netlify_answers(site: Path, paths: list[str]) -> list[dict]:
    """What Netlify's engine does with each path (as the browser sends it) of `site`."""
    # the paths in a file: node reads a large piped stdin with EAGAIN
    with tempfile.NamedTemporaryFile("w", suffix=".json", encoding="utf-8") as asked:
        json.dump(paths, asked)
        asked.flush()
        command = [NODE, "--input-type=module", "-e", NETLIFY_SCRIPT, "--", str(NETLIFY_ENGINE)]
        result = subprocess.run(
            [*command, str(site), asked.name],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    if result.returncode != 0:
        raise RuntimeError(f"node exited with {result.returncode}: {result.stderr[-3000:]}")
    return json.loads(result.stdout)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Wrangler:
    """``wrangler pages dev SITE`` on 127.0.0.1, started once, stopped on exit."""

    def __init__(self, site: Path, work: Path) -> None:
        self.site = site
        self.work = work  # wrangler's home and log (it writes .wrangler/ in its cwd)
        self.port = 0
        self.log = work / "wrangler.log"

    @contextlib.contextmanager
    def running(self):
        self.port = free_port()
        environment = {
            **os.environ,
            "HOME": str(self.work),
            "XDG_CONFIG_HOME": str(self.work / "config"),
            "WRANGLER_SEND_METRICS": "false",  # no telemetry
            "WRANGLER_HIDE_BANNER": "true",  # no update check
            "CLOUDFLARE_CF_FETCH_ENABLED": "false",  # no Request.cf download
            "CI": "1",  # never a login prompt
            "NO_COLOR": "1",
        }
        command = [
            NODE,
            str(WRANGLER),
            "pages",
            "dev",
            str(self.site),
            "--ip",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--inspector-port",
            str(free_port()),
            "--compatibility-date",
            "2024-09-01",
        ]
        with open(self.log, "wb") as log:
            process = subprocess.Popen(
                command, cwd=self.work, env=environment, stdout=log, stderr=subprocess.STDOUT
            )
        try:
            self._wait(process)
            yield self
        finally:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=15)

    def _wait(self, process: subprocess.Popen) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"wrangler exited with {process.returncode}:\n{self.tail()}")
            try:
                status, _, _ = ask(self.port, "/index/manifest.json")
                if status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"wrangler did not answer within {START_TIMEOUT} s:\n{self.tail()}")

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:] if self.log.exists() else ""


def ask(port: int, path: str, headers: dict | None = None) -> tuple[int, str | None, str | None]:
    """GET `path` (as the browser sends it) without following a redirect."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", path, headers=headers or {})
        response = connection.getresponse()
        response.read()
        return response.status, response.getheader("Location"), response.getheader("Vary")
    finally:
        connection.close()


def expected(resolver, request: str, accept_language: str | None = None):
    """(status, Location) ``ibistatic serve`` answers for `request` (the text after the
    site's path); None for a request that is no persistent URL."""
    try:
        result = resolver.resolve(request, accept_language)
    except IbistaticError:
        return None
    answer = http_answer(result, result.asked)
    return answer.status, answer.location


NETLIFY_SERVER = r"""
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
const [engine, site, port] = process.argv.slice(1);
const { RedirectsHandler } = await import(engine);
const handler = new RedirectsHandler({
  configRedirects: [], projectDir: site, publicDir: site, jwtRoleClaim: "", jwtSecret: "",
});
function staticFile(url) {
  let decoded;
  try { decoded = decodeURIComponent(url.pathname); } catch (error) { return null; }
  for (const candidate of [decoded, path.join(decoded, "index.html")]) {
    const file = path.join(site, candidate);
    if (file.startsWith(site) && fs.existsSync(file) && fs.statSync(file).isFile()) return file;
  }
  return null;
}
async function getStaticFile(request) {
  const file = staticFile(new URL(request.url));
  return file === null ? undefined : async () => new Response(fs.readFileSync(file), { status: 200 });
}
async function answer(request) {
  const match = await handler.match(request);
  if (match) {
    const response = await handler.handle(request, match, getStaticFile);
    // Netlify gives a rewrite the rule's status (the dev engine leaves that to its server)
    if (response && !match.redirect && match.statusCode !== 200) {
      return new Response(response.body, { status: match.statusCode });
    }
    if (response) return response;
  }
  const file = staticFile(new URL(request.url));
  if (file !== null) return new Response(fs.readFileSync(file), { status: 200 });
  return new Response(fs.readFileSync(path.join(site, "404.html")), { status: 404 });
}
http.createServer(async (incoming, outgoing) => {
  const request = new Request("http://localhost" + incoming.url, { headers: incoming.headers });
  const response = await answer(request);
  const headers = {};
  response.headers.forEach((value, name) => { headers[name] = value; });
  outgoing.writeHead(response.status, headers);
  outgoing.end(Buffer.from(await response.arrayBuffer()));
}).listen(Number(port), "127.0.0.1", () => console.log("ready"));
"""


@contextlib.contextmanager
def netlify_server(site: Path):
    """Netlify's engine as ``netlify dev`` runs it: rules, then files, then 404.html;
    yields its port."""
    port = free_port()
    process = subprocess.Popen(
        [
            NODE,
            "--input-type=module",
            "-e",
            NETLIFY_SERVER,
            "--",
            str(NETLIFY_ENGINE),
            str(site),
            str(port),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        if process.stdout.readline().strip() != "ready":
            raise RuntimeError(f"the Netlify engine did not start: {process.stderr.read()[-3000:]}")
        yield port
    finally:
        process.terminate()
        process.wait(timeout=15)
