/* ibistatic: the Cloudflare Pages worker (advanced mode, docs/hosting.md).
 *
 * Every request comes here first.  A request that is a persistent URL is resolved by
 * resolve.js (the resolver of 404.html, above in this file, with the facts.js it reads)
 * over the site's index, read through the assets binding, and answered as
 * `ibistatic serve` answers it (core/http.py): 302, or 303 for metadata about the item,
 * with Location taken from the index only; 404, 409 or 410 for an alert, with the site's
 * page for it.  Anything else (the pages, the index, the assets) is a static asset.
 */
const IBISTATIC_BASE = __IBISTATIC_BASE__;
const RESOLVER = globalThis.ibistatic;
const FACTS = globalThis.ibistaticFacts;
const ALERT_STATUS = {
  "not-found": 404, unavailable: 404, deleted: 410, conflict: 409, "no-original": 409, loop: 409,
};

/** core/languages.parse_accept_language: the ranges by q, ties in header order, q=0 out. */
function acceptLanguages(header) {
  const ranges = [];
  (header || "").split(",").forEach(function (element, order) {
    const found = /^\s*([A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*|\*)\s*(?:;\s*q\s*=\s*(0(?:\.\d{0,3})?|1(?:\.0{0,3})?))?\s*$/.exec(element);
    if (found === null) return;
    const q = found[2] === undefined ? 1 : parseFloat(found[2]);
    if (q > 0) ranges.push({ tag: found[1], q: q, order: order });
  });
  ranges.sort(function (a, b) { return b.q - a.q || a.order - b.order; });
  return ranges.map(function (r) { return r.tag; });
}

/** core/http.header_value: controls, spaces and non-ASCII written %XX (UTF-8). */
function headerValue(text) {
  return text.replace(/[\u0000-\u0020\u007f-\uffff]/g, function (char) {
    try {
      return encodeURIComponent(char);
    } catch (error) {
      return "%EF%BF%BD"; // a lone surrogate: U+FFFD, as Python's "replace" writes it
    }
  });
}

async function assetJson(env, origin, path) {
  const response = await env.ASSETS.fetch(new Request(origin + path));
  if (response.status === 404) return null;
  if (!response.ok) throw new Error(path + ": HTTP " + response.status);
  return response.json();
}

// What this isolate has read of the index: a deployment is immutable (a new one starts
// new isolates), so nothing here goes stale; at most KEPT_SHARDS shards are kept.
const KEPT_SHARDS = 64;
let MANIFEST = null;
const SHARDS = new Map();

async function shard(env, origin, file) {
  if (SHARDS.has(file)) return SHARDS.get(file);
  const read = (await assetJson(env, origin, IBISTATIC_BASE + "index/" + file + ".json")) || {};
  if (SHARDS.size >= KEPT_SHARDS) SHARDS.delete(SHARDS.keys().next().value);
  SHARDS.set(file, read);
  return read;
}

/** resolve.js's resolveRequest, reading the index through the assets binding. */
async function resolve(env, origin, request, languages) {
  if (MANIFEST === null) MANIFEST = await assetJson(env, origin, IBISTATIC_BASE + "index/manifest.json");
  if (MANIFEST === null) return null;
  const index = new RESOLVER.Index(MANIFEST, {});
  for (;;) {
    try {
      return RESOLVER.resolveText(index, request, languages);
    } catch (error) {
      if (!(error instanceof RESOLVER.NeedShard)) throw error;
      index.shards[error.file] = await shard(env, origin, error.file);
    }
  }
}

/** The page shown with an alert: the site's own page at that path, else 404.html
 *  (which Pages serves as "/404": it drops ".html" with a 308). */
async function alertPage(env, request, url, status, headers) {
  let page = await env.ASSETS.fetch(request);
  if (!page.ok) page = await env.ASSETS.fetch(new Request(url.origin + IBISTATIC_BASE + "404"));
  headers.set("Content-Type", "text/html; charset=utf-8");
  return new Response(page.ok || page.status === 404 ? page.body : null, { status: status, headers: headers });
}

async function answer(request, env) {
  const url = new URL(request.url);
  if (!url.pathname.startsWith(IBISTATIC_BASE)) return null;
  const text = url.pathname.slice(IBISTATIC_BASE.length) + url.search;
  let parsed;
  try {
    parsed = RESOLVER.parseRequest(text);
  } catch (error) {
    if (error instanceof RESOLVER.SyntaxProblem) return null; // not a persistent URL
    throw error;
  }
  const steps = parsed.steps;
  const headers = new Headers();
  if (steps.some(function (s) { return s.kind === "translation" && s.param === null; })) {
    headers.set("Vary", "Accept-Language");
  }
  const resolution = await resolve(env, url.origin, text, acceptLanguages(request.headers.get("Accept-Language")));
  if (resolution === null) return null;
  if (resolution.url !== null && RESOLVER.safeUrl(resolution.url)) {
    headers.set("Location", headerValue(resolution.url));
    const status = steps.some(function (s) { return s.kind === "metadata"; }) ? 303 : 302;
    return new Response(null, { status: status, headers: headers });
  }
  const status = ALERT_STATUS[resolution.alert || "unavailable"] || 404;
  return alertPage(env, request, url, status, headers);
}

/** An Archive's file, col/<IBI>/doc/<file>: the site's own copy when it publishes one
 * (site/outputs/documents.py), else a persistent URL like any other. */
async function publishedDocument(request, env) {
  const path = new URL(request.url).pathname.slice(IBISTATIC_BASE.length);
  if (!path.startsWith(FACTS.archiveFiles) || path.indexOf(FACTS.docFolder + "/") === -1) return null;
  let asset = await env.ASSETS.fetch(request);
  // Pages' asset server drops ".html" and "index.html" from a path with a redirect (its
  // pretty URLs): a document answers at the path it was deposited at, or the resolution
  // of that path would send it back there (a loop for index.html)
  const location = asset.headers.get("Location");
  if (asset.status >= 300 && asset.status < 400 && location) {
    const pretty = new URL(location, request.url);
    if (pretty.origin === new URL(request.url).origin) {
      asset = await env.ASSETS.fetch(new Request(pretty, request));
    }
  }
  return asset.ok ? asset : null;
}

export default {
  async fetch(request, env) {
    if (request.method === "GET" || request.method === "HEAD") {
      const published = await publishedDocument(request, env);
      if (published !== null) return published;
      const answered = await answer(request, env);
      if (answered !== null) return answered;
    }
    return env.ASSETS.fetch(request);
  },
};
