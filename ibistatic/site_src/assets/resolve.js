/* ibistatic: the in-browser resolver of the static site (docs/site.md).
 *
 * 404.html runs it for every persistent URL no page was written for (other case
 * spellings, modifiers not emitted, file paths, ?ibiurl.* queries, "+" negotiated from
 * navigator.languages); redirect pages run it when their URL carries a query.
 *
 * It is a port of ibistatic/core/urls.py (the persistent-URL grammar) and of
 * ibistatic/core/resolution.py + properties.py (the resolution process over the
 * Archives' property lists), reading the JSON index: index/manifest.json and only the
 * shards of the keys it asks about.  It redirects ONLY to a URL string taken from an
 * index record's `urls` (never to anything built from the request); otherwise it shows
 * what went wrong.  Keep it in step with the Python code: tests/test_site_browser.py
 * compares both over the same URLs.
 */
(function (root) {
  "use strict";

  // ------------------------------------------------------------------------------
  // Grammar (core/identifiers.py, core/languages.py, core/relations.py, core/urls.py)

  // repository = prefix "/" suffix ; prefix = subdomain "/" word [("." | "@") port]
  // subdomain = *(word ".") last-word ["."] ; suffix = year "/" month "." day "." hour
  // "." minute ["." second] ; second = 2DIGIT ["." fraction]
  const WORD = "[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?";
  const LAST_WORD = "[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?";
  const REPOSITORY = new RegExp(
    "(?:" + WORD + "\\.)*" + LAST_WORD + "\\.?/" + WORD + "(?:[.@][0-9]+)?" +
    "/[0-9]{4,}/[0-9]{2}\\.[0-9]{2}\\.[0-9]{2}\\.[0-9]{2}(?:\\.[0-9]{2}(?:\\.[0-9]+)?)?", "y");
  // IBIp = prefix "/" suffix ; prefix = 1*digit ("W" | "X") *digit ; suffix = 1*digit
  // ["W" 1*digit] ; digit = 2-9 and the letters but I O V W X Y Z (core/identifiers.IBIP)
  const IBIP = /[2-9A-HJ-NP-Ua-hj-np-u]+[WXwx][2-9A-HJ-NP-Ua-hj-np-u]*\/[2-9A-HJ-NP-Ua-hj-np-u]+(?:[Ww][2-9A-HJ-NP-Ua-hj-np-u]+)?(?![2-9A-HJ-NP-UWXa-hj-np-uwx])/y;
  // Words printed before an IBI by urlib.net, the Archives and citations (core/urls.SHAPES),
  // and an Archive's address of an item's files, col/<IBI>/doc/<file>.
  const SHAPES = ["ibi/", "rep/", "rep-/", "goto/", "goto-/", "ibi:"];
  const ARCHIVE_FILES = "col/";
  const DOC_FOLDER = "/doc";
  // path-absolute characters (RFC 3986 pchar and "/")
  const PATH_CHARACTER = /[A-Za-z0-9\-._~%!$&'()*+,;=:@/]/;
  // query caractere: printable ASCII but space, "#", "&" and "="
  const QUERY_CHARACTER = /[\x21\x22\x24\x25\x27-\x3c\x3e-\x7e]/;
  const HEXDIG2 = /^[0-9A-Fa-f]{2}$/;

  // Table A.1 (core/languages.py LANGUAGES and COUNTRIES; a test checks they agree).
  const LANGUAGES = new Set((
    "aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs " +
    "cu cv cy da de dv dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha " +
    "he hi ho hr ht hu hy hz ia id ie ig ii ik io is it iu ja jv ka kg ki kj kk kl km kn " +
    "ko kr ks ku kv kw ky la lb lg li ln lo lt lu lv mg mh mi mk ml mn mr ms mt my na nb " +
    "nd ne ng nl nn no nr nv ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd " +
    "se sg sh si sk sl sm sn so sq sr ss st su sv sw ta te tg th ti tk tl tn to tr ts tt " +
    "tw ty ug uk ur uz ve vi vo wa wo xh yi yo za zh zu").split(" "));
  const COUNTRIES = new Set((
    "AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN " +
    "BO BQ BR BS BT BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ " +
    "DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL " +
    "GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM " +
    "JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME " +
    "MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP " +
    "NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD " +
    "SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO " +
    "TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW").split(" "));

  const KINDS = ["lastedition", "translation", "metadata"];
  const MODIFIER = { lastedition: "!", translation: "+", metadata: ":" };
  const VERBS = { lastedition: "GetLastEdition", translation: "GetTranslation", metadata: "GetMetadata" };
  const FILE_LIST_VERB = "GetFileList";
  const FORMAT = "oai_dc";
  // relation = ([u [t]] | [t [u]]) [m [t]]: every prefix of its 15 shapes.
  const PREFIXES = (function () {
    const heads = ["", "u", "ut", "t", "tu"];
    const tails = ["", "m", "mt"];
    const set = new Set();
    heads.forEach(function (h) {
      tails.forEach(function (t) {
        const shape = h + t;
        for (let n = 0; n <= shape.length; n++) set.add(shape.slice(0, n));
      });
    });
    return set;
  })();
  const LETTER = { lastedition: "u", translation: "t", metadata: "m" };

  function SyntaxProblem(text, position, expected) {
    this.text = text;
    this.position = position;
    this.expected = expected;
  }

  function fail(text, position, expected) {
    throw new SyntaxProblem(text, position, expected);
  }

  function shapeOf(steps) {
    return steps.map(function (s) { return LETTER[s.kind]; }).join("");
  }

  function allowedAfter(steps, kind) {
    return PREFIXES.has(shapeOf(steps) + LETTER[kind]);
  }

  function sameStep(a, b) {
    return a.kind === b.kind && a.param === b.param;
  }

  /** IBI = repository | IBIp: the longest one at text[start:] (core/identifiers.match_ibi). */
  function matchIbi(text, start) {
    let best = null;
    [["repository", REPOSITORY], ["ibip", IBIP]].forEach(function (pair) {
      pair[1].lastIndex = start;
      const found = pair[1].exec(text);
      if (found && (best === null || found[0].length > best.text.length)) {
        best = { form: pair[0], text: found[0] };
      }
    });
    if (best === null) fail(text, start, "an IBI (a repository name or an IBIp)");
    best.key = best.form === "ibip" ? best.text.toUpperCase() : best.text.toLowerCase();
    return [best, start + best.text.length];
  }

  /** language-tag = idioma ["-" pais] (core/languages.match_language_tag). */
  function matchLanguageTag(text, start) {
    const language = text.slice(start, start + 2);
    if (!/^[a-z]{2}$/.test(language)) fail(text, start, "a lower-case letter (ISO 639-1 language code)");
    if (!LANGUAGES.has(language)) fail(text, start, "an ISO 639-1 language code (Table A.1)");
    if (text[start + 2] !== "-") return [language, start + 2];
    const country = text.slice(start + 3, start + 5);
    if (!/^[A-Z]{2}$/.test(country)) fail(text, start + 3, "an upper-case letter (ISO 3166-1 country code)");
    if (!COUNTRIES.has(country)) fail(text, start + 3, "an ISO 3166-1 country code (Table A.1)");
    return [language + "-" + country, start + 5];
  }

  /** ["(" idioma ["-" pais] ")"] after a translation, ["(" formato ")"] after metadata. */
  function matchParameter(text, start, kind) {
    if (kind === "lastedition" || text[start] !== "(") return [{ kind: kind, param: null }, start];
    let param, end;
    if (kind === "translation") {
      [param, end] = matchLanguageTag(text, start + 1);
    } else {
      if (!text.startsWith(FORMAT, start + 1)) fail(text, start + 1, "'oai_dc'");
      [param, end] = [FORMAT, start + 1 + FORMAT.length];
    }
    if (text[end] !== ")") fail(text, end, "')'");
    return [{ kind: kind, param: param }, end + 1];
  }

  /** One step u | t | m spelled with `symbols`, or null when none starts at `start`. */
  function matchStep(text, start, symbols) {
    for (const kind of KINDS) {
      if (text.startsWith(symbols[kind], start)) return matchParameter(text, start + symbols[kind].length, kind);
    }
    return null;
  }

  /** mdf = ([u [t]] | [t [u]]) [m [t]], ending at the end or before "/" or "?". */
  function matchModifier(text, start) {
    const steps = [];
    let position = start;
    for (;;) {
      const found = matchStep(text, position, MODIFIER);
      if (found === null && (position === text.length || text[position] === "/" || text[position] === "?")) {
        return [steps, position];
      }
      if (found === null || !allowedAfter(steps, found[0].kind)) {
        fail(text, position, "a modifier ('!', '+', ':'), '/', '?' or the end");
      }
      steps.push(found[0]);
      position = found[1];
    }
  }

  function utf8Size(lead) {
    if (lead >= 0xc2 && lead <= 0xdf) return 2;
    if (lead >= 0xe0 && lead <= 0xef) return 3;
    if (lead >= 0xf0 && lead <= 0xf4) return 4;
    return 1;
  }

  const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });

  /** %hh decoded: UTF-8 where the bytes are UTF-8, ISO-8859-1 byte by byte elsewhere;
   *  each character with the index in the raw text where it starts. */
  function decodeBytes(bytes, offsets, out) {
    let index = 0;
    while (index < bytes.length) {
      let size = utf8Size(bytes[index]);
      let char;
      try {
        if (index + size > bytes.length) throw new Error("short");
        char = STRICT_UTF8.decode(new Uint8Array(bytes.slice(index, index + size)));
      } catch (error) {
        char = String.fromCharCode(bytes[index]);
        size = 1;
      }
      out.push([char, offsets[index]]);
      index += size;
    }
  }

  /** text[start:end] decoded, and the raw index of each decoded character and of the end. */
  function decodePercent(text, start, end) {
    const out = [];
    let bytes = [];
    let offsets = [];
    let position = start;
    while (position < end) {
      if (text[position] !== "%") {
        decodeBytes(bytes, offsets, out);
        bytes = [];
        offsets = [];
        out.push([text[position], position]);
        position += 1;
        continue;
      }
      if (!HEXDIG2.test(text.slice(position + 1, Math.min(position + 3, end)))) {
        fail(text, position, "'%' followed by two hexadecimal digits");
      }
      bytes.push(parseInt(text.slice(position + 1, position + 3), 16));
      offsets.push(position);
      position += 3;
    }
    decodeBytes(bytes, offsets, out);
    return {
      text: out.map(function (o) { return o[0]; }).join(""),
      positions: out.map(function (o) { return o[1]; }).concat([end]),
    };
  }

  /** [path-absolute] up to "?" or the end: the decoded file path without its "/". */
  function matchPath(text, start) {
    if (text[start] !== "/") return ["", start];
    let end = start;
    while (end < text.length && text[end] !== "?") {
      if (!PATH_CHARACTER.test(text[end])) fail(text, end, "a path character or '?'");
      end += 1;
    }
    const decoded = decodePercent(text, start + 1, end);
    const path = decoded.text;
    let offset = 0;
    for (const segment of path.split("/")) {
      if (segment === "." || segment === "..") fail(text, decoded.positions[offset], "a file name (not '.' or '..')");
      offset += segment.length + 1;
    }
    for (let index = 0; index < path.length; index++) {
      const code = path.charCodeAt(index);
      if (code < 0x20 || code === 0x7f) fail(text, decoded.positions[index], "a file name character");
    }
    return [path, end];
  }

  function queryRun(text, start) {
    let position = start;
    while (position < text.length && QUERY_CHARACTER.test(text[position])) position += 1;
    if (position < text.length && text[position] !== "&" && text[position] !== "=") {
      fail(text, position, "a query character ('#', space and non-ASCII are written %hh)");
    }
    return position;
  }

  /** pergunta = [par *("&" par)] ; par = nome "=" valor (core/pairlists.match_query). */
  function matchQuery(text, start) {
    const pairs = [];
    let position = start;
    while (position < text.length) {
      if (pairs.length) position += 1;
      const equals = queryRun(text, position);
      if (equals === position) fail(text, position, "a pair name");
      if (text[equals] !== "=") fail(text, equals, "'='");
      const end = queryRun(text, equals + 1);
      if (end < text.length && text[end] !== "&") fail(text, end, "'&' or end of query");
      const value = decodePercent(text, equals + 1, end);
      pairs.push({ name: decodePercent(text, position, equals).text, value: value.text, positions: value.positions, start: position });
      position = end;
    }
    return pairs;
  }

  /** lista-de-verbos = [verbo *("+" verbo)], united with the modifier's steps (Table 6.6). */
  function parseVerbList(text, after) {
    const own = [];
    let fileList = false;
    let position = 0;
    while (text) {
      let end;
      if (text.startsWith(FILE_LIST_VERB, position)) {
        fileList = true;
        end = position + FILE_LIST_VERB.length;
      } else {
        const found = matchStep(text, position, VERBS);
        if (found === null || !allowedAfter(own.map(function (o) { return o.step; }), found[0].kind)) {
          fail(text, position, "a verb (GetLastEdition, GetTranslation, GetMetadata, GetFileList)");
        }
        own.push({ step: found[0], position: position });
        end = found[1];
      }
      if (end === text.length) break;
      if (text[end] !== "+" && text[end] !== " ") fail(text, end, "'+', ' ' or end of verb list");
      position = end + 1;
    }
    const steps = after.slice();
    own.forEach(function (o) {
      if (after.some(function (s) { return sameStep(s, o.step); })) return;
      if (!allowedAfter(steps, o.step.kind)) fail(text, o.position, "a verb allowed after the modifier's verbs");
      steps.push(o.step);
    });
    return { steps: steps, fileList: fileList };
  }

  function onePair(pairs, text, name) {
    const found = pairs.filter(function (p) { return p.name === name; });
    if (found.length > 1) fail(text, found[1].start, "one " + name + " pair only");
    return found.length ? found[0] : null;
  }

  /** URL-persistente = IBI [mdf] [path-absolute] ["?" pergunta], after the base. */
  function parseRequest(text) {
    const shape = SHAPES.concat([ARCHIVE_FILES]).find(function (word) { return text.startsWith(word); }) || "";
    const [ibi, afterIbi] = matchIbi(text, shape.length);
    let modifier = [];
    let afterModifier = afterIbi;
    if (shape === ARCHIVE_FILES) {
      if (!text.startsWith(DOC_FOLDER + "/", afterIbi)) fail(text, afterIbi, "'/doc/' (an Archive's files are col/<IBI>/doc/<file>)");
      afterModifier = afterIbi + DOC_FOLDER.length;
    } else {
      [modifier, afterModifier] = matchModifier(text, afterIbi);
    }
    const [filepath, afterPath] = matchPath(text, afterModifier);
    const pairs = afterPath < text.length ? matchQuery(text, afterPath + 1) : [];
    const status = onePair(pairs, text, "ibiurl.requireditemstatus");
    if (status !== null && status.value !== "Original") {
      let differs = 0;
      while (differs < status.value.length && status.value[differs] === "Original"[differs]) differs += 1;
      fail(text, status.positions[differs], "'Original'");
    }
    const verbPair = onePair(pairs, text, "ibiurl.verblist");
    let verbs = { steps: modifier, fileList: false };
    if (verbPair !== null) {
      try {
        verbs = parseVerbList(verbPair.value, modifier);
      } catch (error) {
        if (error instanceof SyntaxProblem) fail(text, verbPair.positions[error.position], error.expected);
        throw error;
      }
    }
    return {
      ibi: ibi, shape: shape, modifier: modifier, steps: verbs.steps, fileList: verbs.fileList,
      filepath: filepath, requiredStatus: status !== null ? "Original" : "",
    };
  }

  function relationText(steps) {
    return steps.map(function (s) { return "." + s.kind + (s.param !== null ? "(" + s.param + ")" : ""); }).join("");
  }

  function modifierText(steps) {
    return steps.map(function (s) { return MODIFIER[s.kind] + (s.param !== null ? "(" + s.param + ")" : ""); }).join("");
  }

  const RELATION_STEP = /\.(lastedition|translation|metadata)(?:\(([^)]*)\))?/g;

  function parseRelation(text) {
    const steps = [];
    text.replace(RELATION_STEP, function (all, kind, param) {
      steps.push({ kind: kind, param: param === undefined ? null : param });
      return all;
    });
    return steps;
  }

  // ------------------------------------------------------------------------------
  // The index (index/records.py): FNV-1a shards, loaded on demand

  function fnv1a(text) {
    let hash = 0x811c9dc5;
    for (const byte of new TextEncoder().encode(text)) {
      hash ^= byte;
      hash = Math.imul(hash, 0x01000193);
    }
    return hash >>> 0;
  }

  function shardName(key, digits) {
    return (fnv1a(key) % Math.pow(16, digits)).toString(16).padStart(digits, "0");
  }

  /** Thrown when the resolution needs a shard not loaded yet: fetch it, then retry. */
  function NeedShard(name) {
    this.name = name;
  }

  function Index(manifest, shards) {
    this.digits = manifest["shard-digits"];
    this.shards = shards || {};
    const index = this;
    this.views = manifest.archives.map(function (a) {
      return {
        name: a.name, address: a.address, declared: Boolean(a["relations-declared"]),
        relations: a.relations.map(parseRelation), index: index,
      };
    });
  }

  Index.prototype.records = function (key) {
    const name = shardName(key, this.digits);
    if (!Object.prototype.hasOwnProperty.call(this.shards, name)) throw new NeedShard(name);
    const shard = this.shards[name];
    return Object.prototype.hasOwnProperty.call(shard, key) ? shard[key] : [];
  };

  function viewItem(view, key) {
    return view.index.records(key).find(function (r) { return r.archive === view.name; }) || null;
  }

  function isIbip(text) {
    return text.indexOf(".") < 0; // a repository name always has month.day
  }

  function keyOf(text) {
    return isIbip(text) ? text.toUpperCase() : text.toLowerCase();
  }

  function formsOf(text) {
    return [isIbip(text) ? "ibip" : "rep", text];
  }

  function itemForms(item) {
    return item.ibip ? ["rep", item.repository, "ibip", item.ibip] : ["rep", item.repository];
  }

  function formatFile(item, name) {
    const found = (item.formats || []).find(function (f) { return f[0] === name; });
    return found ? found[1] : null;
  }

  // ------------------------------------------------------------------------------
  // Property lists (core/properties.py): what one Archive answers about one IBI

  function tagLanguage(tag) {
    return tag.split("-")[0].toLowerCase();
  }

  function translationTarget(item, language) {
    const wanted = language.toLowerCase();
    const candidates = [];
    if (item.language) candidates.push([item.language, null]);
    (item.translations || []).forEach(function (t) { candidates.push(t); });
    for (const exact of [true, false]) {
      for (const [tag, ibi] of candidates) {
        const t = tag.toLowerCase();
        const hit = exact ? t === wanted : (t === tagLanguage(wanted) || tagLanguage(t) === wanted);
        if (hit) return ibi === null ? { self: true } : { self: false, ibi: ibi };
      }
    }
    return null;
  }

  /** properties._reference: the item `ibi` names, its target or its file of `format`. */
  function reference(view, ibi, format) {
    const target = viewItem(view, keyOf(ibi));
    let file = null;
    if (target !== null) file = format === null ? target.target || null : formatFile(target, format);
    return { forms: formsOf(ibi), item: target, file: file, format: format };
  }

  /** properties._self_by_language: the item itself, same file (a format reached is kept). */
  function selfByLanguage(current) {
    const item = current.item;
    return { forms: ["rep", item.repository], item: item, file: current.file, format: current.format };
  }

  function step(view, current, st) {
    const item = current.item;
    if (current.inline) return st.kind === "translation" && st.param === null ? current : null;
    if (item === null || item.state === "Deleted") return null;
    if (st.kind === "lastedition") return item["next-edition"] ? null : current;
    if (st.kind === "translation") {
      if (st.param === null) return item.language ? null : selfByLanguage(current);
      const found = translationTarget(item, st.param);
      if (found === null) return null;
      return found.self ? selfByLanguage(current) : reference(view, found.ibi, current.format);
    }
    if (item.metadata) return reference(view, item.metadata, st.param);
    if (item["dublin-core"]) return { forms: null, item: null, inline: st.param || "metadata", owner: item };
    return null;
  }

  function follow(view, item, relation) {
    let current = { forms: itemForms(item), item: item, file: item.target || null, format: null };
    for (const st of relation) {
      current = step(view, current, st);
      if (current === null) return null;
    }
    return current;
  }

  /** The URL of `file` of `item`, read from the record's urls (a query kept from the record). */
  function fileUrl(item, file) {
    const urls = item.urls || {};
    if (file === item.target && urls.target) return urls.target;
    const cut = file.indexOf("?");
    const path = cut < 0 ? file : file.slice(0, cut);
    const files = urls.files || {};
    if (!Object.prototype.hasOwnProperty.call(files, path)) return null;
    return files[path] + (cut < 0 ? "" : file.slice(cut));
  }

  function relatedUrl(related, filepath, fileList) {
    if (related.inline) {
      if (fileList || filepath) return null;
      return (related.owner.urls || {})[related.inline === "oai_dc" ? "oai_dc" : "metadata"] || null;
    }
    const item = related.item;
    if (item === null || item.state === "Deleted") return null;
    const urls = item.urls || {};
    if (fileList) return urls.list || null;
    if (filepath) {
      const files = urls.files || {};
      return (item.files || []).indexOf(filepath) >= 0 && Object.prototype.hasOwnProperty.call(files, filepath) ? files[filepath] : null;
    }
    return related.file === null ? null : fileUrl(item, related.file);
  }

  /** Algorithm 2 (MONTARLISTADEURL) narrowed to `relations`; null when the IBI is unknown. */
  function propertyList(view, key, filepath, fileList, relations) {
    const item = viewItem(view, key);
    if (item === null) return null;
    const answer = Object.create(null);
    answer.archiveaddress = view.address;
    if (item.state === "Deleted") {
      answer.ibi = itemForms(item);
      answer.state = item.state;
      answer.timestamp = item.timestamp;
      return answer;
    }
    if (item["next-edition"]) answer["ibi.nextedition"] = formsOf(item["next-edition"]);
    for (const relation of relations) {
      const related = follow(view, item, relation);
      if (related === null) continue;
      const suffix = relationText(relation);
      if (related.forms !== null) answer["ibi" + suffix] = related.forms;
      const url = relatedUrl(related, filepath, fileList);
      if (url !== null) {
        const described = related.inline ? related.owner : related.item;
        answer["url" + suffix] = url;
        answer["contenttype" + suffix] = related.inline ? "Metadata" : (described["content-type"] || "Data");
        answer["state" + suffix] = described.state;
        answer["timestamp" + suffix] = described.timestamp;
      }
    }
    return answer;
  }

  // ------------------------------------------------------------------------------
  // The resolution process (core/resolution.py)

  const MAX_HOPS = 64;
  const MESSAGES = {
    "not-found": "no Archive holds this IBI",
    "deleted": "the item was deleted",
    "conflict": "two or more Archives claim the original: they are under suspicion; an investigation is needed",
    "no-original": "no Archive holds the original of this item",
    "unavailable": "no Archive can answer this relation of the item",
    "loop": "the chain of editions or translations loops",
  };

  function alert(name, chain, known) {
    return Object.assign({ url: null, alert: name, archive: null, state: null, ibi: null, chain: chain.slice(), message: MESSAGES[name] }, known || {});
  }

  function patternMatches(relation, pattern) {
    if (relation.length !== pattern.length) return false;
    return relation.every(function (have, i) {
      const want = pattern[i];
      return have.kind === want.kind && (have.param === want.param || (want.kind === "translation" && want.param === null));
    });
  }

  function sameRelation(a, b) {
    return a.length === b.length && a.every(function (s, i) { return sameStep(s, b[i]); });
  }

  function isOpen(relation) {
    return relation.some(function (s) { return s.kind === "translation" && s.param === null; });
  }

  /** The relations the request needs: the wanted one and its prefixes (to follow). */
  function wantedRelations(view, steps) {
    const prefixes = [[]];
    for (let n = 1; n <= steps.length; n++) prefixes.push(steps.slice(0, n));
    const open = prefixes.filter(isOpen);
    if (!view.declared && !open.length) return prefixes; // the default set is the whole grammar
    // a declared subset limits what the Archive answers; an open "+" is made concrete
    // with the languages the Archive holds
    const chosen = view.relations.filter(function (r) {
      return prefixes.some(function (p) { return patternMatches(r, p); });
    });
    if (view.declared) return chosen;
    const concrete = prefixes.filter(function (p) { return !isOpen(p); });
    return concrete.concat(chosen.filter(function (r) {
      return !concrete.some(function (p) { return sameRelation(p, r); });
    }));
  }

  function firstForm(forms) {
    return Array.isArray(forms) && forms.length >= 2 ? forms[1] : null;
  }

  function has(answer, name) {
    return Object.prototype.hasOwnProperty.call(answer, name);
  }

  /** core/languages.match_language: exact tag, its language part, then the same language. */
  function matchLanguage(preferences, candidates) {
    for (const preference of preferences) {
      const wanted = preference.toLowerCase();
      if (wanted === "*") {
        if (candidates.length) return candidates[0];
        continue;
      }
      const language = wanted.split("-")[0];
      const tiers = [
        function (t) { return t === wanted; },
        function (t) { return t === language; },
        function (t) { return t.split("-")[0] === language; },
      ];
      for (const tier of tiers) {
        const found = candidates.find(function (c) { return tier(c.toLowerCase()); });
        if (found !== undefined) return found;
      }
    }
    return null;
  }

  /** Each language-less translation step made concrete from what `answer` offers. */
  function chooseLanguages(steps, answer, preferences) {
    steps = steps.slice();
    for (let index = 0; index < steps.length; index++) {
      const st = steps[index];
      if (st.kind !== "translation" || st.param !== null) continue;
      const head = relationText(steps.slice(0, index)) + ".translation(";
      const offered = new Set();
      Object.keys(answer).forEach(function (name) {
        ["ibi", "url"].forEach(function (kind) {
          if (name.startsWith(kind + head)) offered.add(name.slice(kind.length + head.length).split(")")[0]);
        });
      });
      if (!offered.size) {
        const whole = relationText(steps.slice(0, index + 1));
        if (has(answer, "ibi" + whole) || has(answer, "url" + whole)) continue;
        return null;
      }
      const chosen = matchLanguage(preferences, Array.from(offered).sort());
      if (chosen === null) {
        steps.splice(index, 1);
        return chooseLanguages(steps, answer, preferences);
      }
      steps[index] = { kind: "translation", param: chosen };
    }
    return steps;
  }

  function nextRequest(answer, steps) {
    const own = (firstForm(answer.ibi) || "").toLowerCase();
    for (let length = steps.length; length > 0; length--) {
      const prefix = steps.slice(0, length);
      if (prefix.some(function (s) { return s.kind === "translation" && s.param === null; })) continue;
      // the format cannot be asked again: the IBI gives the free format
      if (prefix.some(function (s) { return s.kind === "metadata" && s.param !== null; })) continue;
      const target = firstForm(answer["ibi" + relationText(prefix)]);
      if (target === null || (length === steps.length && target.toLowerCase() === own)) continue;
      return { ibi: target, steps: steps.slice(length) };
    }
    if (steps.length && steps[0].kind === "lastedition" && has(answer, "ibi.nextedition")) {
      return { ibi: firstForm(answer["ibi.nextedition"]), steps: steps };
    }
    return null;
  }

  /** The first answer that satisfies the request decides (resolution._from_answers):
   *  its URL, else the IBI it gives to follow; null when no answer gives either. */
  function fromAnswers(answers, steps, languages) {
    for (const [view, answer] of answers) {
      const concrete = chooseLanguages(steps, answer, languages);
      if (concrete !== null) {
        const suffix = relationText(concrete);
        if (has(answer, "url" + suffix)) {
          return {
            url: answer["url" + suffix], alert: null, archive: view.name, state: answer["state" + suffix] || null,
            ibi: firstForm(answer["ibi" + suffix]), contentType: answer["contenttype" + suffix] || null, relation: suffix,
          };
        }
      }
      const next = nextRequest(answer, concrete !== null ? concrete : steps);
      if (next !== null) return next;
    }
    return null;
  }

  /** resolution.resolve over `index` (synchronous: throws NeedShard for a missing shard). */
  function resolveParsed(index, request, languages) {
    let key = request.ibi.key;
    let text = request.ibi.text;
    let steps = request.steps;
    const chain = [];
    const visited = new Set();
    for (let hop = 0; hop < MAX_HOPS; hop++) {
      const seen = key + "\n" + relationText(steps);
      if (visited.has(seen)) return alert("loop", chain.concat([text]));
      visited.add(seen);
      chain.push(text);
      let answers = [];
      for (const view of index.views) {
        const answer = propertyList(view, key, request.filepath, request.fileList, wantedRelations(view, steps));
        if (answer !== null) answers.push([view, answer]);
      }
      if (!answers.length) return alert("not-found", chain);
      if (request.requiredStatus === "Original") {
        // a double claim alerts only when the original is asked for (§6.2)
        const originals = answers.filter(function (a) { return a[1].state === "Original"; });
        if (!originals.length) return alert("no-original", chain, { ibi: text });
        if (originals.length > 1) return alert("conflict", chain, { ibi: text });
        answers = originals;
      }
      const live = answers.filter(function (a) { return a[1].state !== "Deleted"; });
      if (!live.length) {
        const [view, answer] = answers[0];
        return alert("deleted", chain, { archive: view.name, state: "Deleted", ibi: firstForm(answer.ibi) || text });
      }
      const outcome = fromAnswers(live, steps, languages);
      if (outcome === null) return alert("unavailable", chain, { ibi: text });
      if (outcome.url !== undefined) return Object.assign(outcome, { chain: chain });
      key = keyOf(outcome.ibi);
      text = outcome.ibi;
      steps = outcome.steps;
    }
    return alert("loop", chain);
  }

  // ------------------------------------------------------------------------------
  // In the browser: fetch what is needed, then redirect or explain

  async function fetchJson(url) {
    const response = await fetch(url, { credentials: "same-origin" });
    if (response.status === 404) return null;
    if (!response.ok) throw new Error(url + ": HTTP " + response.status);
    return response.json();
  }

  /** Resolve `request` (text after the site's base path), loading shards as needed. */
  async function resolveRequest(base, request, languages, loaded) {
    const parsed = parseRequest(request);
    // `loaded` ({manifest, shards}) lets a caller resolving many requests fetch each file once.
    const manifest = loaded && loaded.manifest ? loaded.manifest : await fetchJson(base + "index/manifest.json");
    if (manifest === null) throw new Error("the site has no index/manifest.json");
    if (loaded) loaded.manifest = manifest;
    const index = new Index(manifest, loaded && loaded.shards);
    for (;;) {
      try {
        return { parsed: parsed, resolution: resolveParsed(index, parsed, languages) };
      } catch (error) {
        if (!(error instanceof NeedShard)) throw error;
        index.shards[error.name] = (await fetchJson(base + "index/shards/" + error.name + ".json")) || {};
      }
    }
  }

  /** Only absolute http(s) URLs from the index are followed (never javascript:, data:...). */
  function safeUrl(url) {
    return typeof url === "string" && /^https?:\/\/[^\s]+$/i.test(url);
  }

  function withFragment(url, hash) {
    return hash && url.indexOf("#") < 0 ? url + hash : url;
  }

  function browserLanguages() {
    const list = navigator.languages && navigator.languages.length ? navigator.languages : [navigator.language || ""];
    return Array.from(list).filter(function (tag) { return tag && tag !== "*"; });
  }

  function requestOf(base) {
    const path = location.pathname;
    const rest = path.startsWith(base) ? path.slice(base.length) : path.replace(/^\/+/, "");
    return rest + location.search;
  }

  function element(tag, text, attributes) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = text;
    Object.keys(attributes || {}).forEach(function (name) { node.setAttribute(name, attributes[name]); });
    return node;
  }

  function describeSteps(steps) {
    if (!steps.length) return "the item itself";
    const nouns = { lastedition: "last edition", translation: "translation", metadata: "metadata" };
    return steps.slice().reverse().map(function (s) { return nouns[s.kind] + (s.param ? " (" + s.param + ")" : ""); }).join(" of the ");
  }

  const TITLES = {
    "not-found": "Not found",
    "deleted": "Deleted item",
    "conflict": "Conflicting originals",
    "no-original": "No original",
    "unavailable": "Not available",
    "loop": "Loop",
    "bad-url": "Not a persistent URL",
    "error": "Resolution failed",
  };

  /** Replace the page's <main> with an explanation; every value goes in as text. */
  function explain(main, kind, message, request, details) {
    main.setAttribute("data-alert", kind);
    main.setAttribute("data-state", "done");
    const body = document.getElementById("ibistatic-result") || main;
    body.textContent = "";
    document.title = TITLES[kind] + " — " + request;
    body.appendChild(element("h1", TITLES[kind]));
    body.appendChild(element("p", message, { class: "alert", role: "alert" }));
    const list = element("dl");
    details.forEach(function (pair) {
      list.appendChild(element("dt", pair[0]));
      list.appendChild(element("dd", pair[1]));
    });
    body.appendChild(list);
    const search = document.getElementById("ibistatic-search");
    const input = search ? search.querySelector("input[name=q]") : null;
    if (input && !input.value) input.defaultValue = details.length && details[0][0] === "IBI" ? details[0][1] : request;
  }

  function syntaxDetails(error) {
    const caret = " ".repeat(error.position) + "^";
    return [["Request", error.text], ["Where", caret], ["Expected", error.expected + " at character " + (error.position + 1)]];
  }

  function resolutionDetails(parsed, resolution) {
    const details = [["IBI", parsed.ibi.text], ["Form", parsed.ibi.form === "ibip" ? "IBIp" : "repository name"]];
    if (parsed.steps.length) details.push(["Asked for", describeSteps(parsed.steps)]);
    if (parsed.filepath) details.push(["File", parsed.filepath]);
    if (parsed.fileList) details.push(["Verb", "GetFileList"]);
    if (parsed.requiredStatus) details.push(["Required status", parsed.requiredStatus]);
    if (resolution.chain && resolution.chain.length) details.push(["Tried", resolution.chain.join(" → ")]);
    if (resolution.archive) details.push(["Archive", resolution.archive]);
    return details;
  }

  /** The entry point of 404.html and of redirect pages that carry a query. */
  async function run(config) {
    const main = document.getElementById("ibistatic");
    const base = location.pathname.startsWith(config.base) ? config.base : "/";
    const request = requestOf(base);
    main.setAttribute("data-state", "resolving");
    let outcome;
    try {
      outcome = await resolveRequest(base, request, browserLanguages());
    } catch (error) {
      if (error instanceof SyntaxProblem) {
        explain(main, "bad-url", "This is not a persistent URL: it does not follow the IBI grammar.", request, syntaxDetails(error));
      } else {
        explain(main, "error", "The index could not be read: " + error.message, request, []);
      }
      return;
    }
    const resolution = outcome.resolution;
    if (resolution.url !== null && safeUrl(resolution.url)) {
      main.setAttribute("data-state", "redirecting");
      location.replace(withFragment(resolution.url, location.hash));
      return;
    }
    const kind = resolution.alert || "unavailable";
    explain(main, kind, MESSAGES[kind] || "", request, resolutionDetails(outcome.parsed, resolution));
  }

  const api = {
    run: run, parseRequest: parseRequest, resolveParsed: resolveParsed, resolveRequest: resolveRequest,
    Index: Index, NeedShard: NeedShard, SyntaxProblem: SyntaxProblem, fnv1a: fnv1a, shardName: shardName,
    matchLanguage: matchLanguage, modifierText: modifierText, safeUrl: safeUrl,
    LANGUAGES: LANGUAGES, COUNTRIES: COUNTRIES,
  };
  root.ibistatic = api;
  if (typeof module !== "undefined" && module.exports) module.exports = api;

  if (typeof document !== "undefined") {
    const config = document.getElementById("ibistatic-config");
    if (config && config.getAttribute("data-run") === "404") run(JSON.parse(config.textContent));
  }
})(typeof window !== "undefined" ? window : globalThis);
