"""The browser resolver run by node over a built site, without a browser: the site's own
``assets/resolve.js`` (with the ``assets/facts.js`` the build wrote beside it) resolves
each request over the index read from disk, precomputed answers first, exactly as the
404 page does.  All requests go to one node process.

Tests that use it skip where node is not installed.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

NODE = shutil.which("node") or shutil.which("nodejs")

NODE_SCRIPT = r"""
const fs = require("fs");
const path = require("path");
const site = process.argv[1];
const api = require(path.join(site, "assets", "resolve.js"));
const manifest = JSON.parse(fs.readFileSync(path.join(site, "index", "manifest.json"), "utf8"));
const index = new api.Index(manifest, {});
const out = [];
for (const [request, languages] of JSON.parse(fs.readFileSync(0, "utf8"))) {
  for (;;) {
    try {
      const r = api.resolveText(index, request, languages);
      out.push({ url: r.url, alert: r.alert, archive: r.archive, state: r.state, ibi: r.ibi,
                 chain: r.chain, message: r.message });
      break;
    } catch (error) {
      if (error instanceof api.NeedShard) {
        const file = path.join(site, "index", error.file + ".json");
        index.shards[error.file] = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, "utf8")) : {};
        continue;
      }
      if (!(error instanceof api.SyntaxProblem)) throw error;
      out.push({ error: error.message(), position: error.position, expected: error.expected });
      break;
    }
  }
}
process.stdout.write(JSON.stringify(out));
"""


def node_answers(site: Path, cases: list[tuple[str, list[str]]]) -> list[dict]:
    """resolve.js's answer to each (request after the site URL, browser languages): the
    resolution's fields, or for a request that is no persistent URL its error (the
    message the command line prints, the caret position, what was expected)."""
    done = subprocess.run(
        [NODE, "-e", NODE_SCRIPT, str(site)],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(done.stdout)


def node_resolve(site: Path, requests: list[str], languages: list[str] = ()) -> list[dict]:
    """resolve.js's resolution of each request (text after the site URL)."""
    return node_answers(site, [(request, list(languages)) for request in requests])
