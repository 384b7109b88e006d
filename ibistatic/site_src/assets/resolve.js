/* ibistatic: the in-browser resolver of the static site (docs/site.md).
 *
 * 404.html runs it for every persistent URL no page was written for (other case
 * spellings, modifiers not emitted, file paths, query pairs, "+" negotiated from
 * navigator.languages); redirect pages run it when their URL carries a query, and use
 * its language matching for a bare "+".
 *
 * It is a port of what must run in the browser: the persistent-URL grammar with its
 * error messages (core/identifiers.py, languages.py, relations.py, pairlists.py,
 * urls.py), the resolution process over the index (core/resolution.py, properties.py)
 * and the lookup of the build's precomputed answers first (resolver.py).  Every table
 * of the standard (Table A.1, the IBI grammar's character classes, the modifiers,
 * verbs, alerts...) comes from assets/facts.js, which the build writes from
 * core/facts.py: none is copied here.  It redirects ONLY to a URL string taken from the
 * index (never to anything built from the request); otherwise it shows what went
 * wrong.  tests/test_browser_parity.py checks its answers and error messages equal
 * Python's over some 10,000 requests.
 */
(function (root) {
  "use strict";

  const FACTS = root.ibistaticFacts || (typeof require === "function" ? require("./facts.js") : null);
  if (!FACTS) throw new Error("ibistatic: load assets/facts.js before assets/resolve.js");

  /** A regular expression written for Python's re (core/facts.py) as a RegExp. */
  function pattern(source, flags) {
    return new RegExp(source.replace(/\(\?P</g, "(?<"), flags || "");
  }

  // ------------------------------------------------------------------------------
  // Python's spelling of values in messages (repr) and of errors (errors.IbiSyntaxError)

  const PY_ESCAPES = { "\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r" };

  function isPrintable(char) {
    const code = char.codePointAt(0);
    return !(code < 0x20 || (code >= 0x7f && code <= 0xa0) || code === 0xad || code === 0x2028 || code === 0x2029);
  }

  function hex(code, width) {
    return code.toString(16).padStart(width, "0");
  }

  /** Python's repr of a str. */
  function repr(text) {
    const quote = text.indexOf("'") >= 0 && text.indexOf('"') < 0 ? '"' : "'";
    let out = "";
    for (const char of text) {
      const code = char.codePointAt(0);
      if (PY_ESCAPES[char]) out += PY_ESCAPES[char];
      else if (char === quote) out += "\\" + char;
      else if (isPrintable(char)) out += char;
      else out += code < 0x100 ? "\\x" + hex(code, 2) : code < 0x10000 ? "\\u" + hex(code, 4) : "\\U" + hex(code, 8);
    }
    return quote + out + quote;
  }

  /** errors.IbiSyntaxError: text that breaks a grammar, where, and what was expected. */
  function SyntaxProblem(text, position, expected, what, hint) {
    this.text = text;
    this.position = Math.max(0, Math.min(position, text.length));
    this.expected = expected;
    this.what = what || "IBI";
    this.hint = hint || "";
  }

  SyntaxProblem.prototype.found = function () {
    return this.position >= this.text.length ? "end of input" : repr(this.text[this.position]);
  };

  /** The message the command line prints, caret and hint included. */
  SyntaxProblem.prototype.message = function () {
    const shown = Array.from(this.text).map(function (c) { return isPrintable(c) ? c : "?"; }).join("");
    return "invalid " + this.what + " " + repr(this.text) + ": expected " + this.expected +
      " at character " + (this.position + 1) + ", found " + this.found() + "\n" +
      "    " + shown + "\n    " + " ".repeat(this.position) + "^" +
      (this.hint ? "\n    hint: " + this.hint : "");
  };

  function fail(text, position, expected, what, hint) {
    throw new SyntaxProblem(text, position, expected, what, hint);
  }

  function either(items) {
    if (items.length <= 1) return items.join("") || "nothing more";
    return items.slice(0, -1).join(", ") + " or " + items[items.length - 1];
  }

  // ------------------------------------------------------------------------------
  // IBI = repository | IBIp (core/identifiers.py): a recursive descent that remembers the
  // farthest position where the text stopped fitting, so errors point where Python's do

  const WORD_CHARACTERS = /[A-Za-z0-9-]*/y;
  const DIGITS = /[0-9]*/y;
  const IBIP_DIGITS = pattern(FACTS.ibipDigit + "*", "y");
  const LETTER = "a letter";
  const A_DIGIT = "a digit";
  const IBIP_DIGIT = "an IBIp digit (2-9, A-H, J-N, P-U)";

  function isAlpha(char) {
    return /^[A-Za-z]$/.test(char);
  }

  function Cursor(text, pos) {
    this.text = text;
    this.pos = pos;
    this.farthest = pos;
    this.expected = [];
  }

  Cursor.prototype.peek = function () {
    return this.text.slice(this.pos, this.pos + 1);
  };

  Cursor.prototype.expect = function (pos) {
    if (pos > this.farthest) {
      this.farthest = pos;
      this.expected = [];
    }
    if (pos !== this.farthest) return;
    for (let i = 1; i < arguments.length; i++) {
      if (this.expected.indexOf(arguments[i]) < 0) this.expected.push(arguments[i]);
    }
  };

  Cursor.prototype.take = function (char) {
    if (this.peek() === char) {
      this.pos += 1;
      return true;
    }
    this.expect(this.pos, repr(char));
    return false;
  };

  Cursor.prototype.run = function (regex) {
    regex.lastIndex = this.pos;
    const found = regex.exec(this.text)[0];
    this.pos += found.length;
    return found;
  };

  Cursor.prototype.error = function (what) {
    return new SyntaxProblem(this.text, this.farthest, either(this.expected), what);
  };

  function word(cur) {
    const start = cur.pos;
    const run = cur.run(WORD_CHARACTERS);
    const found = run.replace(/-+$/, "");
    if (!found || found[0] === "-") {
      cur.pos = start;
      cur.expect(start, LETTER, A_DIGIT);
      return null;
    }
    cur.expect(start + run.length, LETTER, A_DIGIT, "'-'");
    cur.pos = start + found.length; // a trailing hyphen is not part of the word
    return found;
  }

  function subdomain(cur) {
    const start = cur.pos;
    const labels = [];
    let label;
    while ((label = word(cur)) !== null) {
      labels.push(label);
      if (!cur.take(".")) break;
    }
    if (!labels.length || !isAlpha(labels[labels.length - 1][0])) {
      cur.pos = start;
      return null;
    }
    return cur.text.slice(start, cur.pos);
  }

  function someDigits(cur) {
    const digits = cur.run(DIGITS);
    cur.expect(cur.pos, A_DIGIT);
    return digits || null;
  }

  function prefix(cur) {
    const start = cur.pos;
    const sub = subdomain(cur);
    const found = sub !== null && cur.take("/") ? word(cur) : null;
    if (found === null) {
      cur.pos = start;
      return null;
    }
    const mark = cur.pos;
    if (cur.peek() === "." || cur.peek() === "@") {
      cur.pos += 1;
      if (someDigits(cur) !== null) return true;
      cur.pos = mark;
    }
    cur.expect(mark, "'.'", "'@'");
    return true;
  }

  function fixedDigits(cur, count) {
    const start = cur.pos;
    for (let i = 0; i < count; i++) {
      if (!/^[0-9]$/.test(cur.peek())) {
        cur.expect(cur.pos, A_DIGIT);
        cur.pos = start;
        return null;
      }
      cur.pos += 1;
    }
    return cur.text.slice(start, cur.pos);
  }

  function year(cur) {
    const start = cur.pos;
    const digits = cur.run(DIGITS);
    cur.expect(cur.pos, A_DIGIT);
    if (digits.length < 4) {
      cur.pos = start;
      return null;
    }
    return digits;
  }

  function second(cur) {
    if (fixedDigits(cur, 2) === null) return null;
    const mark = cur.pos;
    if (cur.take(".") && someDigits(cur) === null) cur.pos = mark;
    return true;
  }

  function suffix(cur) {
    const start = cur.pos;
    let fits = year(cur) !== null && cur.take("/") && fixedDigits(cur, 2) !== null;
    for (let i = 0; i < 3; i++) fits = fits && cur.take(".") && fixedDigits(cur, 2) !== null;
    if (!fits) {
      cur.pos = start;
      return null;
    }
    const mark = cur.pos;
    if (cur.take(".") && second(cur) === null) cur.pos = mark;
    return true;
  }

  function repository(cur) {
    const start = cur.pos;
    const fits = prefix(cur) !== null && cur.take("/") && suffix(cur) !== null;
    if (!fits) {
      cur.pos = start;
      return null;
    }
    return { form: "repository", text: cur.text.slice(start, cur.pos) };
  }

  function ibipDigits(cur) {
    const digits = cur.run(IBIP_DIGITS);
    cur.expect(cur.pos, IBIP_DIGIT);
    return digits || null;
  }

  function ibipSeparator(cur, separators) {
    if (cur.peek() && separators.indexOf(cur.peek()) >= 0) {
      cur.pos += 1;
      return true;
    }
    const upper = Array.from(separators).filter(function (c) { return c !== c.toLowerCase(); });
    cur.expect.apply(cur, [cur.pos].concat(upper.map(repr)));
    return false;
  }

  function ibipPrefix(cur) {
    const start = cur.pos;
    if (ibipDigits(cur) === null || !ibipSeparator(cur, FACTS.ibipPortSeparators)) {
      cur.pos = start;
      return null;
    }
    cur.run(IBIP_DIGITS);
    cur.expect(cur.pos, IBIP_DIGIT);
    return true;
  }

  function ibipSuffix(cur) {
    if (ibipDigits(cur) === null) return null;
    const mark = cur.pos;
    if (ibipSeparator(cur, FACTS.ibipFractionSeparators) && ibipDigits(cur) === null) cur.pos = mark;
    return true;
  }

  function ibip(cur) {
    const start = cur.pos;
    const fits = ibipPrefix(cur) !== null && cur.take("/") && ibipSuffix(cur) !== null;
    if (!fits) {
      cur.pos = start;
      return null;
    }
    return { form: "ibip", text: cur.text.slice(start, cur.pos) };
  }

  function looksLikeIbip(text, start) {
    const head = text.slice(start).split("/")[0];
    return /^[2-9A-HJ-NP-UWXa-hj-np-uwx]+$/.test(head) && /[2-9WXwx]/.test(head);
  }

  /** The error of the form that got farther; on a tie, the form the text looks like. */
  function blame(rep, ip, start) {
    if (ip.farthest > rep.farthest || (ip.farthest === rep.farthest && looksLikeIbip(ip.text, start))) {
      return ip.error("IBI");
    }
    return rep.error("IBI");
  }

  function withKey(found) {
    found.key = found.form === "ibip" ? found.text.toUpperCase() : found.text.toLowerCase();
    return found;
  }

  /** identifiers.match_ibi: the longest IBI at text[start:] and the index after it. */
  function matchIbi(text, start) {
    const repCur = new Cursor(text, start);
    const ibipCur = new Cursor(text, start);
    const candidates = [[repository(repCur), repCur], [ibip(ibipCur), ibipCur]].filter(function (c) { return c[0] !== null; });
    if (!candidates.length) throw blame(repCur, ibipCur, start);
    const best = candidates.length > 1 && candidates[1][1].pos > candidates[0][1].pos ? candidates[1] : candidates[0];
    return [withKey(best[0]), best[1].pos];
  }

  // ------------------------------------------------------------------------------
  // language-tag = idioma ["-" pais] (core/languages.py), Table A.1 from facts.js

  const LANGUAGES = new Set(FACTS.languages);
  const COUNTRIES = new Set(FACTS.countries);

  function twoLetters(text, start, letters, expected, what) {
    for (const position of [start, start + 1]) {
      if (position >= text.length || !letters.test(text[position])) fail(text, position, expected, what);
    }
  }

  function matchLanguageTag(text, start, what) {
    twoLetters(text, start, /^[a-z]$/, "a lower-case letter (ISO 639-1 language code)", what);
    const language = text.slice(start, start + 2);
    if (!LANGUAGES.has(language)) fail(text, start, "an ISO 639-1 language code (Table A.1)", what);
    if (text[start + 2] !== "-") return [{ tag: language, country: false }, start + 2];
    twoLetters(text, start + 3, /^[A-Z]$/, "an upper-case letter (ISO 3166-1 country code)", what);
    const country = text.slice(start + 3, start + 5);
    if (!COUNTRIES.has(country)) fail(text, start + 3, "an ISO 3166-1 country code (Table A.1)", what);
    return [{ tag: language + "-" + country, country: true }, start + 5];
  }

  // ------------------------------------------------------------------------------
  // Relations in their three spellings (core/relations.py)

  const KINDS = FACTS.kinds;
  const MODIFIER = FACTS.modifierSymbols;
  const RELATION = FACTS.relationSymbols;
  const VERBS = FACTS.verbNames;
  const FILE_LIST_VERB = FACTS.fileListVerb;
  const FORMAT = FACTS.formats[0];
  // relation = ([u [t]] | [t [u]]) [m [t]]: every prefix of its 15 shapes
  const PREFIXES = new Set();
  FACTS.relationHeads.forEach(function (head) {
    FACTS.relationTails.forEach(function (tail) {
      const shape = head.concat(tail);
      for (let n = 0; n <= shape.length; n++) PREFIXES.add(shape.slice(0, n).join(","));
    });
  });

  function kindsOf(steps) {
    return steps.map(function (s) { return s.kind; });
  }

  function allowedAfter(kinds) {
    return KINDS.filter(function (kind) { return PREFIXES.has(kinds.concat([kind]).join(",")); });
  }

  function sameStep(a, b) {
    return a.kind === b.kind && a.param === b.param;
  }

  /** What may come after the steps `kinds` (the last one `last`), for a message. */
  function expectedAfter(kinds, symbols, last, ends) {
    const options = [];
    if (last && last.kind !== "lastedition" && last.param === null) options.push("'('");
    allowedAfter(kinds).forEach(function (kind) { options.push(repr(symbols[kind])); });
    return either(options.concat(ends));
  }

  /** ["(" idioma ["-" pais] ")"] after a translation, ["(" formato ")"] after metadata. */
  function matchParameter(text, start, kind, what) {
    if (kind === "lastedition" || text[start] !== "(") return [{ kind: kind, param: null }, start];
    let param, end, expected;
    if (kind === "translation") {
      const [tag, after] = matchLanguageTag(text, start + 1, what);
      [param, end, expected] = [tag.tag, after, tag.country ? "')'" : "'-' or ')'"];
    } else {
      if (!text.startsWith(FORMAT, start + 1)) fail(text, start + 1, repr(FORMAT), what);
      [param, end, expected] = [FORMAT, start + 1 + FORMAT.length, "')'"];
    }
    if (text[end] !== ")") fail(text, end, expected, what);
    return [{ kind: kind, param: param }, end + 1];
  }

  /** One step u | t | m spelled with `symbols`, or null when none starts at `start`. */
  function matchStep(text, start, symbols, what) {
    for (const kind of KINDS) {
      if (text.startsWith(symbols[kind], start)) return matchParameter(text, start + symbols[kind].length, kind, what);
    }
    return null;
  }

  /** relations._steps: steps ending at the end of `text` or before one of `stops`. */
  function matchSteps(text, start, symbols, what, stops) {
    const steps = [];
    let position = start;
    for (;;) {
      const found = matchStep(text, position, symbols, what);
      const kinds = kindsOf(steps);
      if (found === null && (position === text.length || stops.indexOf(text[position]) >= 0)) return [steps, position];
      if (found === null || allowedAfter(kinds).indexOf(found[0].kind) < 0) {
        const ends = stops.map(repr).concat(["end of " + what]);
        fail(text, position, expectedAfter(kinds, symbols, steps[steps.length - 1], ends), what);
      }
      steps.push(found[0]);
      position = found[1];
    }
  }

  function spell(steps, symbols) {
    return steps.map(function (s) { return symbols[s.kind] + (s.param !== null ? "(" + s.param + ")" : ""); });
  }

  function relationText(steps) {
    return spell(steps, RELATION).join("");
  }

  function modifierText(steps) {
    return spell(steps, MODIFIER).join("");
  }

  function parseRelation(text) {
    return matchSteps(text, 0, RELATION, "relation", [])[0];
  }

  /** relations._verb_list: the verbs filling `text`, and where each step starts. */
  function verbList(text, what) {
    const steps = [];
    const positions = [];
    let fileList = false;
    let position = 0;
    while (text) {
      let verb = null;
      let end;
      if (text.startsWith(FILE_LIST_VERB, position)) {
        fileList = true;
        end = position + FILE_LIST_VERB.length;
      } else {
        const kinds = kindsOf(steps);
        const found = matchStep(text, position, VERBS, what);
        if (found === null || allowedAfter(kinds).indexOf(found[0].kind) < 0) {
          fail(text, position, expectedAfter(kinds, VERBS, null, [repr(FILE_LIST_VERB)]), what);
        }
        [verb, end] = found;
        steps.push(verb);
        positions.push(position);
      }
      if (end === text.length) break;
      if (text[end] !== "+" && text[end] !== " ") {
        const open = verb !== null && verb.kind !== "lastedition" && verb.param === null;
        fail(text, end, (open ? "'(', " : "") + "'+', ' ' or end of verb list", what);
      }
      position = end + 1;
    }
    return { steps: steps, positions: positions, fileList: fileList };
  }

  /** relations.parse_verb_list with `after`: the union of Table 6.6. */
  function parseVerbList(text, after) {
    const own = verbList(text, "verb list");
    const steps = after.slice();
    own.steps.forEach(function (st, i) {
      if (after.some(function (s) { return sameStep(s, st); })) return;
      const kinds = kindsOf(steps);
      if (allowedAfter(kinds).indexOf(st.kind) < 0) {
        const expected = expectedAfter(kinds, VERBS, null, [repr(FILE_LIST_VERB)]) +
          " after the modifier's verbs " + spell(after, VERBS).join("+");
        fail(text, own.positions[i], expected, "verb list");
      }
      steps.push(st);
    });
    return { steps: steps, fileList: own.fileList };
  }

  // ------------------------------------------------------------------------------
  // %hh and queries (core/pairlists.py)

  const HEXDIG2 = /^[0-9A-Fa-f]{2}$/;
  const QUERY_CHARACTER = pattern("^" + FACTS.queryCharacter + "$");
  const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });

  function utf8Size(lead) {
    if (lead >= 0xc2 && lead <= 0xdf) return 2;
    if (lead >= 0xe0 && lead <= 0xef) return 3;
    if (lead >= 0xf0 && lead <= 0xf4) return 4;
    return 1;
  }

  /** UTF-8 where the bytes are UTF-8, ISO-8859-1 byte by byte elsewhere. */
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

  /** pairlists.decode_percent: text[start:end] decoded, as characters (code points),
   *  and the raw index of each and of the end. */
  function decodePercent(text, start, end, what) {
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
        fail(text, position, "'%' followed by two hexadecimal digits", what);
      }
      bytes.push(parseInt(text.slice(position + 1, position + 3), 16));
      offsets.push(position);
      position += 3;
    }
    decodeBytes(bytes, offsets, out);
    return {
      chars: out.map(function (o) { return o[0]; }),
      text: out.map(function (o) { return o[0]; }).join(""),
      positions: out.map(function (o) { return o[1]; }).concat([end]),
    };
  }

  function queryChars(text, start, what) {
    let position = start;
    while (position < text.length && QUERY_CHARACTER.test(text[position])) position += 1;
    if (position < text.length && text[position] !== "&" && text[position] !== "=") {
      fail(text, position, "a query character ('#', space and non-ASCII are written %hh)", what);
    }
    return position;
  }

  /** pairlists.match_query: pergunta = [par *("&" par)] ; par = nome "=" valor. */
  function matchQuery(text, start, what) {
    const pairs = [];
    let position = start;
    while (position < text.length) {
      if (pairs.length) position += 1; // the '&' that ended the previous pair
      const equals = queryChars(text, position, what);
      if (equals === position) fail(text, position, "a pair name", what);
      if (text[equals] !== "=") fail(text, equals, "'='", what);
      const name = decodePercent(text, position, equals, what).text;
      const end = queryChars(text, equals + 1, what);
      if (end < text.length && text[end] !== "&") fail(text, end, "'&' or end of query", what);
      const value = decodePercent(text, equals + 1, end, what);
      pairs.push({ name: name, value: value.text, chars: value.chars, positions: value.positions, start: position });
      position = end;
    }
    return pairs;
  }

  // ------------------------------------------------------------------------------
  // URL-persistente = base IBI [mdf] [path-absolute] ["?" pergunta] (core/urls.py)

  const WHAT = "persistent URL";
  const SHAPES = FACTS.urlShapes;
  const ARCHIVE_FILES = FACTS.archiveFiles;
  const DOC_FOLDER = FACTS.docFolder;
  const PATH_CHARACTER = pattern("^" + FACTS.pathCharacter + "$");
  const SCHEME_AUTHORITY = /[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#\s]*/y;
  const DOI = /^(?:doi:\s*|https?:\/\/(?:dx\.)?doi\.org\/)?(10\.[0-9]{4,9}\/\S+)$/i;
  const SERIES_CODE = /-[A-Za-z]{2,5}(?![A-Za-z0-9])/y;

  function base(url) {
    SCHEME_AUTHORITY.lastIndex = 0;
    const scheme = SCHEME_AUTHORITY.exec(url);
    if (scheme === null) return ["", 0];
    const end = scheme[0].length;
    if (url[end] !== "/") fail(url, end, "'/'", WHAT);
    return [url.slice(0, end + 1), end + 1];
  }

  function laterIbi(url, start) {
    const path = url.slice(start).split("?")[0];
    for (let offset = 0; offset < path.length; offset++) {
      if (path[offset] !== "/") continue;
      try {
        return [start + offset + 1, matchIbi(url, start + offset + 1)[0]];
      } catch (error) {
        if (!(error instanceof SyntaxProblem)) throw error;
      }
    }
    return null;
  }

  /** urls._ibi: the IBI, named as part of the persistent URL in errors. */
  function urlIbi(url, start) {
    try {
      return matchIbi(url, start);
    } catch (error) {
      if (!(error instanceof SyntaxProblem)) throw error;
      const later = laterIbi(url, start);
      if (later === null) fail(url, error.position, error.expected, WHAT);
      const words = SHAPES.concat([ARCHIVE_FILES]).join(", ");
      fail(url, start, "an IBI, or one of the words " + words + " before it", WHAT,
        "an IBI begins at character " + (later[0] + 1) + ": " + later[1].text);
    }
  }

  function docFolder(url, start) {
    const wanted = DOC_FOLDER + "/";
    if (!url.startsWith(wanted, start)) {
      let matched = 0;
      while (url.startsWith(wanted.slice(0, matched + 1), start)) matched += 1;
      fail(url, start + matched, "'/doc/' (an Archive's files are col/<IBI>/doc/<file>)", WHAT);
    }
    return start + DOC_FOLDER.length;
  }

  /** [path-absolute] up to "?" or the end: the decoded file path without its "/". */
  function pathAbsolute(url, start) {
    if (url[start] !== "/") return ["", start];
    let end = start;
    while (end < url.length && url[end] !== "?") {
      if (!PATH_CHARACTER.test(url[end])) fail(url, end, "a path character or '?' (spaces and non-ASCII are written %hh)", WHAT);
      end += 1;
    }
    const decoded = decodePercent(url, start + 1, end, WHAT);
    const chars = decoded.chars;
    let offset = 0;
    decoded.text.split("/").forEach(function (segment) {
      if (segment === "." || segment === "..") fail(url, decoded.positions[offset], "a file name (not '.' or '..')", WHAT);
      offset += Array.from(segment).length + 1;
    });
    chars.forEach(function (char, index) {
      const code = char.codePointAt(0);
      if (code < 0x20 || code === 0x7f) fail(url, decoded.positions[index], "a file name character", WHAT);
    });
    return [decoded.text, end];
  }

  function onePair(pairs, url, name) {
    const found = pairs.filter(function (p) { return p.name === name; });
    if (found.length > 1) fail(url, found[1].start, "one " + name + " pair only", WHAT);
    return found.length ? found[0] : null;
  }

  function requiredStatus(url, pairs) {
    const pair = onePair(pairs, url, FACTS.requiredStatus);
    if (pair === null) return "";
    if (pair.value !== FACTS.original) {
      const original = Array.from(FACTS.original);
      let differs = 0;
      while (differs < pair.chars.length && differs < original.length && pair.chars[differs] === original[differs]) differs += 1;
      fail(url, pair.positions[differs], repr(FACTS.original), WHAT);
    }
    return FACTS.original;
  }

  function urlVerbs(url, pairs, modifier) {
    const pair = onePair(pairs, url, FACTS.verbList);
    if (pair === null) return { steps: modifier, fileList: false };
    try {
      return parseVerbList(pair.value, modifier);
    } catch (error) {
      if (!(error instanceof SyntaxProblem)) throw error;
      // a verb list's positions are in UTF-16 units; the pair's, per code point
      const index = Array.from(pair.value.slice(0, error.position)).length;
      fail(url, pair.positions[index], error.expected, WHAT);
    }
  }

  function parseUrl(text) {
    const url = text.split("#")[0]; // a fragment is the client's: never sent
    let [, position] = base(url);
    const shape = SHAPES.concat([ARCHIVE_FILES]).find(function (w) { return url.startsWith(w, position); }) || "";
    position += shape.length;
    const [ibi, afterIbi] = urlIbi(url, position);
    let modifier = [];
    if (shape === ARCHIVE_FILES) {
      position = docFolder(url, afterIbi);
    } else {
      [modifier, position] = matchSteps(url, afterIbi, MODIFIER, WHAT, ["/", "?"]);
    }
    const [filepath, afterPath] = pathAbsolute(url, position);
    const pairs = afterPath < url.length ? matchQuery(url, afterPath + 1, WHAT) : [];
    const status = requiredStatus(url, pairs);
    const verbs = urlVerbs(url, pairs, modifier);
    return {
      ibi: ibi, shape: shape, modifier: modifier, steps: verbs.steps, fileList: verbs.fileList,
      filepath: filepath, requiredStatus: status,
    };
  }

  function ibiStarts(text) {
    const head = text.split("?")[0];
    const starts = [0];
    for (let i = 0; i < head.length; i++) if (":< ".indexOf(head[i]) >= 0) starts.push(i + 1);
    return starts;
  }

  /** urls.hint: what text that is no persistent URL probably is ("" if nothing). */
  function hint(text) {
    const stripped = text.trim();
    const doi = DOI.exec(stripped);
    if (doi !== null) return doi[1] + " is a DOI, not an IBI: it resolves at https://doi.org/" + doi[1];
    const found = [];
    for (const start of ibiStarts(text)) {
      let ibi, end;
      try {
        [ibi, end] = matchIbi(text, start);
      } catch (error) {
        if (!(error instanceof SyntaxProblem)) throw error;
        continue;
      }
      SERIES_CODE.lastIndex = end;
      const series = SERIES_CODE.exec(text);
      if (series !== null) return repr(series[0]) + " is a catalog's series code, not part of the IBI: the IBI is " + ibi.text;
      found.push(ibi.text);
    }
    if (found.length && found[0] !== stripped) return "the IBI in it is " + found[0];
    let named;
    try {
      named = parseUrl(text).ibi.text;
    } catch (error) {
      if (!(error instanceof SyntaxProblem)) throw error;
      return "";
    }
    return named !== stripped ? "this is a persistent URL; the IBI it names is " + named : "";
  }

  /** resolver._iri_to_uri: spaces and non-ASCII percent-encoded as UTF-8. */
  function iriToUri(text) {
    if (/^[\x00-\x7f]*$/.test(text) && text.indexOf(" ") < 0) return text;
    return Array.from(text).map(function (char) {
      const code = char.codePointAt(0);
      if (code > 0x20 && code < 0x7f) return char;
      return Array.from(new TextEncoder().encode(char)).map(function (b) { return "%" + hex(b, 2).toUpperCase(); }).join("");
    }).join("");
  }

  /** urls.parse_persistent_url (no base: the request is the text after the site's). */
  function parseRequest(text) {
    const url = iriToUri(text);
    try {
      return parseUrl(url);
    } catch (error) {
      if (!(error instanceof SyntaxProblem) || error.hint) throw error;
      throw new SyntaxProblem(url, error.position, error.expected, error.what, hint(url));
    }
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

  /** Thrown when the resolution needs a file of the index not loaded yet ("shards/0a",
   *  "answers/0a"): fetch index/<file>.json, then retry. */
  function NeedShard(file) {
    this.file = file;
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

  /** The value of `key` in the shard of kind `kind` ("shards", "answers"), or `none`. */
  Index.prototype.lookup = function (kind, key, none) {
    const file = kind + "/" + shardName(key, this.digits);
    if (!Object.prototype.hasOwnProperty.call(this.shards, file)) throw new NeedShard(file);
    const shard = this.shards[file];
    return Object.prototype.hasOwnProperty.call(shard, key) ? shard[key] : none;
  };

  /** The item records of `key` (canonical), one per Archive holding it. */
  Index.prototype.records = function (key) {
    return this.lookup("shards", key, []);
  };

  /** The precomputed answers of `key`: modifier text -> answer row (core/outcome.py). */
  Index.prototype.answers = function (key) {
    return this.lookup("answers", key, {});
  };

  function viewItem(view, key) {
    return view.index.records(key).find(function (r) { return r.archive === view.name; }) || null;
  }

  /** sharding.canonical_key: a repository name has four '/'-separated parts, an IBIp two. */
  function isIbip(text) {
    return text.split("/").length < 4;
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
      return (related.owner.urls || {})[related.inline === FORMAT ? FORMAT : "metadata"] || null;
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

  const MESSAGES = FACTS.alertMessages;

  /** outcome.kept_chain: the whole chain up to chainKept IBIs, else its first and last
   *  few around one entry that counts those left out (no answer grows with a chain). */
  function keptChain(chain) {
    if (chain.length <= FACTS.chainKept) return chain.slice();
    const leftOut = chain.length - FACTS.chainHead - FACTS.chainTail;
    return chain.slice(0, FACTS.chainHead)
      .concat([FACTS.chainGap.replace("{}", String(leftOut))], chain.slice(chain.length - FACTS.chainTail));
  }

  function alert(name, chain, known) {
    return Object.assign({ url: null, alert: name, archive: null, state: null, ibi: null, chain: keptChain(chain), message: MESSAGES[name] }, known || {});
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

  /** resolution.resolve over `index` (synchronous: throws NeedShard for a missing shard).
   *  No hop limit: each (IBI, steps) is asked once, and coming back to one is the loop. */
  function resolveParsed(index, request, languages) {
    let key = request.ibi.key;
    let text = request.ibi.text;
    let steps = request.steps;
    const chain = [];
    const visited = new Set();
    for (;;) {
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
      if (outcome.url !== undefined) return Object.assign(outcome, { chain: keptChain(chain), message: "" });
      key = keyOf(outcome.ibi);
      text = outcome.ibi;
      steps = outcome.steps;
    }
  }

  // ------------------------------------------------------------------------------
  // In the browser: fetch what is needed, then redirect or explain

  async function fetchJson(url) {
    const response = await fetch(url, { credentials: "same-origin" });
    if (response.status === 404) return null;
    if (!response.ok) throw new Error(url + ": HTTP " + response.status);
    return response.json();
  }

  // ------------------------------------------------------------------------------
  // The precomputed answers first, as resolver.Resolver does

  const PRECOMPUTED = pattern("^(?:" + FACTS.precomputed + ")$");

  /** outcome.from_row: a precomputed answer for the IBI as `asked` (the chain starts with it). */
  function fromRow(row, asked) {
    const fields = {};
    FACTS.answerFields.forEach(function (name, i) { fields[name] = row[i]; });
    const computedFor = fields.chain;
    const chain = [asked].concat(computedFor.slice(1));
    let ibi = fields.ibi;
    // an alert about the IBI asked itself, in the first round: named as asked
    if (fields.alert && fields.alert !== "deleted" && computedFor.length === 1 && ibi === computedFor[0]) ibi = asked;
    return {
      url: fields.url, alert: fields.alert, archive: fields.archive, address: fields.address,
      state: fields.state, ibi: ibi, contentType: fields.content_type, relation: fields.relation,
      chain: chain, message: fields.alert ? MESSAGES[fields.alert] : "",
    };
  }

  /** The build's answer for `request`, when it is one of the precomputed forms; else null. */
  function precomputed(index, request) {
    const found = PRECOMPUTED.exec(request);
    if (found === null) return null;
    const ibi = found.groups.ibi;
    const row = index.answers(isIbip(ibi) ? ibi.toUpperCase() : ibi.toLowerCase())[found.groups.modifier || ""];
    return row === undefined ? null : fromRow(row, ibi);
  }

  /** Resolver.resolve over `index`: the precomputed answer, else the resolution of the
   *  parsed request (synchronous: throws NeedShard for a file not loaded, SyntaxProblem
   *  for a request that is no persistent URL). */
  function resolveText(index, request, languages) {
    const answer = precomputed(index, request);
    if (answer !== null) return answer;
    return resolveParsed(index, parseRequest(request), languages);
  }

  /** Resolve `request` (text after the site's base path), loading index files as needed. */
  async function resolveRequest(base, request, languages, loaded) {
    // `loaded` ({manifest, shards}) lets a caller resolving many requests fetch each file once.
    const manifest = loaded && loaded.manifest ? loaded.manifest : await fetchJson(base + "index/manifest.json");
    if (manifest === null) throw new Error("the site has no index/manifest.json");
    if (loaded) loaded.manifest = manifest;
    const index = new Index(manifest, loaded && loaded.shards);
    for (;;) {
      try {
        const resolution = resolveText(index, request, languages);
        return { parsed: parsedOrNull(request), resolution: resolution };
      } catch (error) {
        if (!(error instanceof NeedShard)) throw error;
        index.shards[error.file] = (await fetchJson(base + "index/" + error.file + ".json")) || {};
      }
    }
  }

  /** The parsed request, for the details shown with an alert. */
  function parsedOrNull(request) {
    try {
      return parseRequest(request);
    } catch (error) {
      return null;
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

  // The words it writes: the config's "words" (ibistatic/site/i18n.py browser_words, in
  // the site's language: 404.html), else these (redirect and alert pages, as before)
  const ENGLISH = {
    lang: "en",
    titles: FACTS.alertTitles,
    explanations: {},
    labels: {
      ibi: "IBI", form: "Form", asked_for: "Asked for", file: "File", verb: "Verb",
      required_status: "Required status", tried: "Tried", archive: "Archive",
      request: "Request", where: "Where", expected: "Expected", hint: "Hint",
    },
    forms: { ibip: "IBIp", repository: "repository name" },
    steps: {
      itself: "the item itself",
      nouns: FACTS.stepNouns,
      of: Object.fromEntries(FACTS.kinds.map(function (kind) { return [kind, " of the "]; })),
    },
  };

  /** The words of `config`, each part completed with the English one. */
  function wordsOf(config) {
    const given = (config && config.words) || {};
    const words = Object.assign({}, ENGLISH, given);
    ["titles", "explanations", "labels", "forms", "steps"].forEach(function (part) {
      words[part] = Object.assign({}, ENGLISH[part], given[part] || {});
    });
    return words;
  }

  /** The attributes of English text (the resolver's own messages) among `words`. */
  function english(words) {
    return words.lang === "en" ? {} : { lang: "en" };
  }

  /** What the steps return, the outermost first: "metadata of the last edition". */
  function describeSteps(steps, words) {
    const said = words.steps;
    if (!steps.length) return said.itself;
    return steps.slice().reverse().map(function (s, n) {
      const noun = said.nouns[s.kind] + (s.param ? " (" + s.param + ")" : "");
      return n === 0 ? noun : said.of[s.kind] + noun;
    }).join("");
  }

  /** Replace the page's <main> with an explanation; every value goes in as text.
   *  `details`: [label, value, attributes of the value]; `asked`: the IBI asked for. */
  function explain(main, kind, message, request, details, words, asked) {
    main.setAttribute("data-alert", kind);
    main.setAttribute("data-state", "done");
    const body = document.getElementById("ibistatic-result") || main;
    body.textContent = "";
    const title = words.titles[kind] || kind;
    document.title = title + " — " + request;
    body.appendChild(element("h1", title));
    const alertAttributes = Object.assign({ class: "alert", role: "alert" }, english(words));
    body.appendChild(element("p", message, alertAttributes));
    if (words.explanations[kind]) body.appendChild(element("p", words.explanations[kind]));
    const list = element("dl");
    details.forEach(function (row) {
      list.appendChild(element("dt", row[0]));
      list.appendChild(element("dd", row[1], row[2]));
    });
    body.appendChild(list);
    const search = document.getElementById("ibistatic-search");
    const input = search ? search.querySelector("input[name=q]") : null;
    if (input && !input.value) input.defaultValue = asked || request;
  }

  /** The parts of the message the command line prints for the same request. */
  function syntaxDetails(error, words) {
    const caret = " ".repeat(error.position) + "^";
    const said = words.labels;
    const found = error.expected + " at character " + (error.position + 1) + ", found " + error.found();
    const details = [[said.request, error.text], [said.where, caret], [said.expected, found, english(words)]];
    if (error.hint) details.push([said.hint, error.hint, english(words)]);
    return details;
  }

  function resolutionDetails(parsed, resolution, words) {
    const said = words.labels;
    if (parsed === null) return [[said.tried, resolution.chain.join(" → ")]];
    const form = parsed.ibi.form === "ibip" ? words.forms.ibip : words.forms.repository;
    const details = [[said.ibi, parsed.ibi.text], [said.form, form]];
    if (parsed.steps.length) details.push([said.asked_for, describeSteps(parsed.steps, words)]);
    if (parsed.filepath) details.push([said.file, parsed.filepath]);
    if (parsed.fileList) details.push([said.verb, FILE_LIST_VERB]);
    if (parsed.requiredStatus) details.push([said.required_status, parsed.requiredStatus]);
    if (resolution.chain && resolution.chain.length) details.push([said.tried, resolution.chain.join(" → ")]);
    if (resolution.archive) details.push([said.archive, resolution.archive]);
    return details;
  }

  /** The entry point of 404.html and of redirect pages that carry a query. */
  async function run(config) {
    const main = document.getElementById("ibistatic");
    const base = location.pathname.startsWith(config.base) ? config.base : "/";
    const request = requestOf(base);
    const words = wordsOf(config);
    main.setAttribute("data-state", "resolving");
    let outcome;
    try {
      outcome = await resolveRequest(base, request, browserLanguages());
    } catch (error) {
      if (error instanceof SyntaxProblem) {
        const message = "This is not a persistent URL: it does not follow the IBI grammar.";
        explain(main, "bad-url", message, request, syntaxDetails(error, words), words, null);
      } else {
        explain(main, "error", "The index could not be read: " + error.message, request, [], words, null);
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
    const details = resolutionDetails(outcome.parsed, resolution, words);
    const asked = outcome.parsed ? outcome.parsed.ibi.text : null;
    explain(main, kind, MESSAGES[kind] || "", request, details, words, asked);
  }

  const api = {
    run: run, parseRequest: parseRequest, resolveParsed: resolveParsed, resolveText: resolveText,
    resolveRequest: resolveRequest, Index: Index, NeedShard: NeedShard, SyntaxProblem: SyntaxProblem,
    fnv1a: fnv1a, shardName: shardName, keyOf: keyOf, matchLanguage: matchLanguage, modifierText: modifierText,
    relationText: relationText, parseRelation: parseRelation, safeUrl: safeUrl,
    browserLanguages: browserLanguages, englishWords: ENGLISH, wordsOf: wordsOf, describeSteps: describeSteps,
  };
  root.ibistatic = api;
  if (typeof module !== "undefined" && module.exports) module.exports = api;

  if (typeof document !== "undefined") {
    const config = document.getElementById("ibistatic-config");
    if (config && config.getAttribute("data-run") === "404") run(JSON.parse(config.textContent));
  }
})(typeof window !== "undefined" ? window : globalThis);
