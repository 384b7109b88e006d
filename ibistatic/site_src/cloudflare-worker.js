/* ibistatic: the Cloudflare Pages worker (advanced mode, docs/hosting.md).
 *
 * Every request comes here first.  A request that is a persistent URL is resolved by
 * resolve.js (the resolver of 404.html, above in this file, with the facts.js it reads)
 * over the site's index, read through the assets binding, and answered as
 * `ibistatic serve` answers it (core/http.py): 302, or 303 for metadata about the item,
 * with Location taken from the index only; 404, 409 or 410 for an alert, with the site's
 * page for it.  The item itself is content-negotiated as serve does it (web/app.py,
 * core/exports.py): an Accept that prefers its BibTeX, RIS, CSL-JSON, JSON-LD or oai_dc
 * gets 303 to that file, and every answer to it says Vary: Accept; ARK's ?info and
 * URLib's ?? are answered too.  Anything else (the pages, the index, the assets) is a
 * static asset; those files of an item's metadata are sent with their types.
 */
const IBISTATIC_BASE = __IBISTATIC_BASE__;
const RECORD_PATH = __IBISTATIC_RECORD_PATH__;
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

/** core/exports._ranges: [type, subtype, q] of the first maxAcceptRanges elements. */
function acceptRanges(header) {
  const ranges = [];
  const token = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
  const range = new RegExp("^\\s*(" + token + ")/(" + token + ")\\s*$");
  const qvalue = /^\s*[qQ]\s*=\s*(0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?)\s*$/;
  header.split(",", FACTS.maxAcceptRanges).forEach(function (element) {
    const parameters = element.split(";");
    const found = range.exec(parameters[0]);
    if (found === null) return;
    let q = 1;
    for (const parameter of parameters.slice(1)) {
      const value = qvalue.exec(parameter);
      if (value !== null) { q = parseFloat(value[1]); break; }
    }
    ranges.push([found[1].toLowerCase(), found[2].toLowerCase(), q]);
  });
  return ranges;
}

/** core/exports._quality: the q of the most specific range matching `mediaType`. */
function quality(mediaType, ranges) {
  const [kind, subtype] = mediaType.split("/");
  let best = 0, specificity = -1;
  for (const [rangeType, rangeSubtype, q] of ranges) {
    let rank = -1;
    if (rangeType === kind && rangeSubtype === subtype) rank = 2;
    else if (rangeType === kind && rangeSubtype === "*") rank = 1;
    else if (rangeType === "*" && rangeSubtype === "*") rank = 0;
    if (rank > specificity) { best = q; specificity = rank; }
  }
  return best;
}

/** core/exports.negotiate: the export Accept names and prefers to text/html (the item),
 *  or null. */
function negotiate(header) {
  if (!header) return null;
  const ranges = acceptRanges(header);
  let chosen = null, best = quality("text/html", ranges);
  const named = new Map();  // only a range that names a type selects its export; first wins
  for (const [kind, subtype, q] of ranges) if (!named.has(kind + "/" + subtype)) named.set(kind + "/" + subtype, q);
  for (const exported of FACTS.exports) {
    const q = Math.max.apply(null, exported.accepts.map(function (t) { return named.get(t) || 0; }));
    if (q > best) { chosen = exported; best = q; }
  }
  return chosen;
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

/** `question(index)` over the index read through the assets binding, each shard it
 *  needs fetched (resolve.js's NeedShard); null when the site has no index. */
async function overIndex(env, origin, question) {
  if (MANIFEST === null) MANIFEST = await assetJson(env, origin, IBISTATIC_BASE + "index/manifest.json");
  if (MANIFEST === null) return null;
  const index = new RESOLVER.Index(MANIFEST, {});
  for (;;) {
    try {
      return question(index);
    } catch (error) {
      if (!(error instanceof RESOLVER.NeedShard)) throw error;
      index.shards[error.file] = await shard(env, origin, error.file);
    }
  }
}

/** resolve.js's resolveRequest, reading the index through the assets binding. */
async function resolve(env, origin, request, languages) {
  return overIndex(env, origin, function (index) { return RESOLVER.resolveText(index, request, languages); });
}

/** ArchiveApp._metadata_folder: the folder of the answering item's oai_dc.xml, or null. */
async function metadataFolder(env, origin, resolution) {
  if (!resolution.ibi) return null;
  const records = await overIndex(env, origin, function (index) {
    return index.records(RESOLVER.keyOf(resolution.ibi));
  });
  for (const record of records || []) {
    const xml = (record.urls || {}).oai_dc;
    if (xml && record.archive === resolution.archive) return xml.slice(0, xml.lastIndexOf("/") + 1);
  }
  return null;
}

/** The page shown with an alert: the site's own page at that path, else 404.html
 *  (which Pages serves as "/404": it drops ".html" with a 308). */
async function alertPage(env, request, url, status, headers) {
  let page = await env.ASSETS.fetch(request);
  if (!page.ok) page = await env.ASSETS.fetch(new Request(url.origin + IBISTATIC_BASE + "404"));
  headers.set("Content-Type", "text/html; charset=utf-8");
  return new Response(page.ok || page.status === 404 ? page.body : null, { status: status, headers: headers });
}

/** ArchiveApp._inflected: ARK's ?info is the item's record page (303), when the index
 *  holds the IBI; null otherwise (then the IBI without ?info is answered). */
async function recordPage(env, origin, ibi) {
  const records = await overIndex(env, origin, function (index) {
    return index.records(RESOLVER.keyOf(ibi));
  });
  if (!records || records.length === 0) return null;
  const page = MANIFEST["site-url"] + RECORD_PATH.replace("{key}", RESOLVER.keyOf(records[0].repository));
  return new Response(null, { status: 303, headers: { Location: headerValue(page) } });
}

async function answer(request, env) {
  const url = new URL(request.url);
  if (!url.pathname.startsWith(IBISTATIC_BASE)) return null;
  let text = url.pathname.slice(IBISTATIC_BASE.length) + url.search;
  // the habits of neighbouring schemes (ArchiveApp._inflected): URLib's ?? is the
  // item's metadata (the ":" modifier), ARK's ?info its record page
  if (text.endsWith("??")) {
    text = text.slice(0, -2) + ":";
  } else if (text.endsWith("?info") && text !== "?info") {
    text = text.slice(0, -"?info".length);
    const page = await recordPage(env, url.origin, text);
    if (page !== null) return page;
  }
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
    let location = resolution.url;
    let status = steps.some(function (s) { return s.kind === "metadata"; }) ? 303 : 302;
    if (steps.length === 0) { // the item itself: ArchiveApp._negotiated
      headers.set("Vary", "Accept");
      const exported = negotiate(request.headers.get("Accept"));
      const folder = exported === null ? null : await metadataFolder(env, url.origin, resolution);
      if (folder !== null) { location = folder + exported.name; status = 303; }
    }
    headers.set("Location", headerValue(location));
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
    return typed(new URL(request.url).pathname, await env.ASSETS.fetch(request));
  },
};

/** A file of an item's metadata (core.exports) with its type: the asset server knows
 *  none of .bib, .ris, .jsonld, and sends csl.json as plain JSON. */
function typed(path, response) {
  const name = path.slice(path.lastIndexOf("/") + 1);
  const exported = FACTS.exports.find(function (e) { return e.name === name; });
  if (exported === undefined || !response.ok) return response;
  const headers = new Headers(response.headers);
  headers.set("Content-Type", exported.contentType);
  return new Response(response.body, { status: response.status, headers: headers });
}
