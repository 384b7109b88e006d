/* ibistatic: the static search (docs/site.md, "Search").
 *
 * The page holds a form and <script type="application/json" id="ibistatic-search-config">
 * {"index": folder of index.json, "links": what the results' links are relative to};
 * index.json's "link" spells them, "{}" standing for the repository key.
 * A query reads index.json, the token files of its words (found by a binary search over
 * the files' first tokens) and the document files of the results it shows: a few small
 * files whatever the size of the site, all from the site itself.  Words are made as
 * ibistatic/search/tokens.py makes them; a word of two characters or more also finds
 * the words it begins, and a word with "/" is an IBI, looked up whole.  Every result
 * is written with textContent: a title is shown as written, never read as markup.
 */
(function (root) {
  "use strict";

  const MAX_TOKEN = 40; // tokens.py MAX_TOKEN
  const PREFIX_FILES = 3; // a prefix reading more token files than this is looked up whole
  const PAGE = 20; // results shown at a time
  // The words it writes: the config's "words" (ibistatic/site/i18n.py search_words, in
  // the site's language), else these
  const ENGLISH = {
    searching: "Searching…",
    matches_one: "{n} item matches “{q}”.",
    matches: "{n} items match “{q}”.",
    no_match: "No item matches “{q}”.",
    search_failed: "The search failed:",
    deleted: "(deleted)",
  };

  /** `template` with "{n}" and "{q}" replaced (each once: a query may hold either). */
  function fill(template, n, query) {
    return template.replace("{n}", () => String(n)).replace("{q}", () => query);
  }

  /** The status line of `count` results of `query`. */
  function statusLine(words, count, query) {
    const template = count === 0 ? words.no_match : count === 1 ? words.matches_one : words.matches;
    return fill(template, count, query);
  }

  function normalize(text) {
    return text.toLowerCase().normalize("NFKD").replace(/\p{M}/gu, "");
  }

  function words(text) {
    return (normalize(text).match(/[\p{L}\p{N}]+/gu) || []).map(
      (word) => Array.from(word).slice(0, MAX_TOKEN).join(""));
  }

  /** The terms of a query: [{token, prefix}], every one of which a result must match. */
  function terms(query) {
    const found = [];
    for (const part of query.split(/\s+/)) {
      if (!part) continue;
      if (part.includes("/")) {
        const ibi = normalize(part.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]+\//i, "")).replace(/\/+$/, "");
        if (ibi) found.push({ token: ibi, prefix: true });
        continue;
      }
      for (const word of words(part)) found.push({ token: word, prefix: Array.from(word).length >= 2 });
    }
    return found;
  }

  // Sets of document numbers, or of the numbers NOT in the set (neg): what a token
  // held by most documents is written as.
  function union(a, b) {
    if (!a.neg && !b.neg) return { neg: false, ids: new Set([...a.ids, ...b.ids]) };
    if (a.neg && b.neg) return { neg: true, ids: new Set([...a.ids].filter((n) => b.ids.has(n))) };
    const [pos, neg] = a.neg ? [b, a] : [a, b];
    return { neg: true, ids: new Set([...neg.ids].filter((n) => !pos.ids.has(n))) };
  }

  function intersection(a, b) {
    if (!a.neg && !b.neg) return { neg: false, ids: new Set([...a.ids].filter((n) => b.ids.has(n))) };
    if (a.neg && b.neg) return { neg: true, ids: new Set([...a.ids, ...b.ids]) };
    const [pos, neg] = a.neg ? [b, a] : [a, b];
    return { neg: false, ids: new Set([...pos.ids].filter((n) => !neg.ids.has(n))) };
  }

  function decode(entry) {
    const ids = new Set();
    let number = 0;
    for (const gap of entry[1]) { number += gap; ids.add(number); }
    return { neg: entry[2] === 1, ids };
  }

  class Search {
    constructor(config, fetcher) {
      this.folder = new URL(config.index, root.location ? root.location.href : undefined);
      this.links = new URL(config.links, root.location ? root.location.href : undefined);
      this.fetcher = fetcher || ((url) => fetch(url));
      this.cache = new Map();
    }

    json(relative) {
      if (!this.cache.has(relative)) {
        const url = new URL(relative, this.folder);
        this.cache.set(relative, this.fetcher(url.href).then((response) => {
          if (!response.ok) throw new Error("the search index could not be read: HTTP " + response.status + " for " + url.pathname);
          return response.json();
        }));
      }
      return this.cache.get(relative);
    }

    /** The index of the last token file whose first token is at most `token` (-1: none). */
    fileOf(chunks, token) {
      let low = 0, high = chunks.length - 1, found = -1;
      while (low <= high) {
        const middle = (low + high) >> 1;
        if (chunks[middle][0] <= token) { found = middle; low = middle + 1; } else high = middle - 1;
      }
      return found;
    }

    async matches(index, term) {
      const first = Math.max(0, this.fileOf(index.chunks, term.token));
      let last = this.fileOf(index.chunks, term.token + "\uffff");
      const prefix = term.prefix && last - first < PREFIX_FILES;
      if (!prefix) last = first;
      let found = { neg: false, ids: new Set() };
      for (let n = first; n <= last && n >= 0; n++) {
        for (const entry of await this.json("t/" + index.chunks[n][1] + ".json")) {
          if (entry[0] === term.token || (prefix && entry[0].startsWith(term.token))) found = union(found, decode(entry));
        }
      }
      return found;
    }

    /** The numbers of the documents matching every term of `query`, newest first. */
    async run(query) {
      const index = await this.json("index.json");
      const wanted = terms(query);
      if (!wanted.length) return [];
      let result = null;
      for (const term of wanted) {
        const found = await this.matches(index, term);
        result = result ? intersection(result, found) : found;
      }
      const numbers = [];
      for (let n = index.documents - 1; n >= 0; n--) if (result.ids.has(n) !== result.neg) numbers.push(n);
      return numbers;
    }

    async documents(numbers) {
      const index = await this.json("index.json");
      const per = index["per-file"];
      return Promise.all(numbers.map(async (n) => (await this.json("d/" + Math.floor(n / per) + ".json"))[n % per]));
    }
  }

  function element(tag, className, text) {
    const made = document.createElement(tag);
    if (className) made.className = className;
    if (text !== undefined) made.textContent = text;
    return made;
  }

  function resultItem(search, link, doc, words) {
    const [key, title, ibi, year, creators, state] = doc;
    const item = element("li");
    const anchor = element("a", "title", title);
    anchor.href = new URL(link.replace("{}", key), search.links).href;
    item.append(anchor, " ", element("span", "ibi", ibi), " ", element("span", "year", year));
    if (creators.length) item.append(" ", element("span", "creators", creators.join("; ")));
    if (state === "Deleted") item.append(" ", element("span", "state", words.deleted));
    return item;
  }

  async function showPage(search, numbers, shown, parts) {
    const words = parts.words;
    const page = numbers.slice(shown, shown + PAGE);
    const link = (await search.json("index.json")).link;
    for (const doc of await search.documents(page)) parts.list.append(resultItem(search, link, doc, words));
    parts.more.hidden = shown + PAGE >= numbers.length;
    return shown + page.length;
  }

  async function start() {
    const config = JSON.parse(document.getElementById("ibistatic-search-config").textContent);
    const parts = {
      input: document.getElementById("ibistatic-q"),
      status: document.getElementById("ibistatic-search-status"),
      list: document.getElementById("ibistatic-search-results"),
      more: document.getElementById("ibistatic-search-more"),
      words: Object.assign({}, ENGLISH, config.words || {}),
    };
    // the catalog's page names it "query": mkdocs' theme opens its own search on "?q="
    const query = new URLSearchParams(root.location.search).get(config.param || "q") || "";
    parts.input.value = query;
    if (!query.trim()) return;
    const search = new Search(config);
    parts.status.textContent = parts.words.searching;
    try {
      const numbers = await search.run(query);
      parts.status.textContent = statusLine(parts.words, numbers.length, query);
      let shown = await showPage(search, numbers, 0, parts);
      parts.more.addEventListener("click", async () => { shown = await showPage(search, numbers, shown, parts); });
      document.getElementById("ibistatic-search").dataset.state = "done";
    } catch (error) {
      // the reason is the script's own, in English: marked so on a page in another language
      parts.status.textContent = parts.words.search_failed + " ";
      parts.status.append(element("span", null, error.message));
      if (!/^en\b/.test(document.documentElement.lang)) parts.status.lastChild.lang = "en";
      document.getElementById("ibistatic-search").dataset.state = "failed";
    }
  }

  root.ibistaticSearch = { normalize, words, terms, union, intersection, Search, statusLine, ENGLISH };
  if (typeof module !== "undefined" && module.exports) module.exports = root.ibistaticSearch;
  if (typeof document !== "undefined" && document.getElementById("ibistatic-search-config")) {
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start); else start();
  }
})(typeof window !== "undefined" ? window : globalThis);
