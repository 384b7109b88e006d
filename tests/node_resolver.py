"""The browser resolver (site_src/assets/resolve.js) run by node over a built site's
index read from disk: the same resolveParsed the 404 page runs, without a browser.

Tests that use it skip where node is not installed.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

JS = Path(__file__).resolve().parent.parent / "ibistatic" / "site_src" / "assets" / "resolve.js"
NODE = shutil.which("node") or shutil.which("nodejs")

NODE_SCRIPT = r"""
const fs = require("fs");
const path = require("path");
// node -e: process.argv is [node, ...arguments]
const api = require(process.argv[1]);
const site = process.argv[2];
const manifest = JSON.parse(fs.readFileSync(path.join(site, "index", "manifest.json"), "utf8"));
const index = new api.Index(manifest, {});
const languages = JSON.parse(process.argv[4]);
const out = [];
for (const request of JSON.parse(process.argv[3])) {
  const parsed = api.parseRequest(request);
  for (;;) {
    try { out.push(api.resolveParsed(index, parsed, languages)); break; }
    catch (error) {
      if (!(error instanceof api.NeedShard)) throw error;
      const file = path.join(site, "index", "shards", error.name + ".json");
      index.shards[error.name] = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, "utf8")) : {};
    }
  }
}
process.stdout.write(JSON.stringify(out));
"""


def node_resolve(site: Path, requests: list[str], languages: list[str] = ()) -> list[dict]:
    """resolve.js's resolution of each request (text after the site URL)."""
    done = subprocess.run(
        [NODE, "-e", NODE_SCRIPT, str(JS), str(site), json.dumps(requests), json.dumps(list(languages))],
        capture_output=True, text=True, timeout=60, check=True,
    )
    return json.loads(done.stdout)
