"""The standard's facts, in one place (the resolution report and the identification standard).

Every table, character class and word of the standard that code needs is defined here
once: the Python modules import them, and the site build writes them into
``assets/facts.js`` (:func:`browser_facts`) for the in-browser resolver, so that no
table is copied by hand into JavaScript.  Only data lives here (no algorithms), and
this module imports nothing of ibistatic, so anything may import it cheaply.

Regular-expression pieces are written in the syntax both Python's ``re`` and
JavaScript's ``RegExp`` read the same way (character classes, ``(?:``, ``{n,}``); the
one difference, named groups, is written ``(?P<name>`` and the browser turns it into
``(?<name>``.
"""

from __future__ import annotations

__all__ = [
    "WORD_PATTERN",
    "LAST_WORD_PATTERN",
    "IBIP_DIGIT_CLASS",
    "IBIP_PORT_SEPARATORS",
    "IBIP_FRACTION_SEPARATORS",
    "REPOSITORY_PATTERN",
    "IBIP_PATTERN",
    "LANGUAGES",
    "COUNTRIES",
    "FORMATS",
    "KINDS",
    "LASTEDITION",
    "TRANSLATION",
    "METADATA",
    "MODIFIER_SYMBOLS",
    "RELATION_SYMBOLS",
    "VERB_NAMES",
    "FILE_LIST_VERB",
    "STEP_NOUNS",
    "RELATION_HEADS",
    "RELATION_TAILS",
    "URL_SHAPES",
    "ARCHIVE_FILES",
    "DOC_FOLDER",
    "REQUIRED_STATUS",
    "VERB_LIST",
    "ORIGINAL",
    "STATES",
    "PATH_CHARACTER_CLASS",
    "QUERY_CHARACTER_CLASS",
    "URL_PATH_SAFE",
    "PRECOMPUTED_PATTERN",
    "ALERT_MESSAGES",
    "ALERT_TEXTS",
    "BROWSER_ALERT_TITLES",
    "ALERTS",
    "MAX_HOPS",
    "HOP_LIMIT_MESSAGE",
    "CHAIN_KEPT",
    "CHAIN_HEAD",
    "CHAIN_TAIL",
    "CHAIN_GAP",
    "ANSWER_ROW_FIELDS",
    "DC_ELEMENTS",
    "has_open_translation",
    "browser_facts",
]

# ---------------------------------------------------------------------------------------
# Grammar pieces: IBIs (Tables 6.1 and 7.1, Algorithms 5-7)

#: word = ALPHANUM | (ALPHANUM *(ALPHANUM | "-") ALPHANUM)
WORD_PATTERN = r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
#: last-word = ALPHA | (ALPHA *(ALPHANUM | "-") ALPHANUM)
LAST_WORD_PATTERN = r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
#: digit of an IBIp (Table 7.6): 2-9 and the letters but I, O, V, W, X, Y, Z, either case
IBIP_DIGIT_CLASS = r"[2-9A-HJ-NP-Ua-hj-np-u]"
IBIP_PORT_SEPARATORS = "WXwx"  # Algorithm 5: W after an IPv4, X after an IPv6
IBIP_FRACTION_SEPARATORS = "Ww"  # Algorithm 6: W before the coded fraction

#: repository = prefix "/" suffix ; prefix = subdomain "/" word [("." | "@") port] ;
#: suffix = year "/" month "." day "." hour "." minute ["." second]
REPOSITORY_PATTERN = (
    rf"(?P<subdomain>(?:{WORD_PATTERN}\.)*{LAST_WORD_PATTERN}\.?)/(?P<word>{WORD_PATTERN})"
    r"(?:(?P<separator>[.@])(?P<port>[0-9]+))?"
    r"/(?P<suffix>[0-9]{4,}/[0-9]{2}\.[0-9]{2}\.[0-9]{2}\.[0-9]{2}(?:\.[0-9]{2}(?:\.[0-9]+)?)?)"
)
#: IBIp = prefix "/" suffix ; prefix = 1*digit ("W" | "X") *digit ; suffix = 1*digit ["W" 1*digit]
IBIP_PATTERN = (
    rf"(?P<prefix>{IBIP_DIGIT_CLASS}+[{IBIP_PORT_SEPARATORS}]{IBIP_DIGIT_CLASS}*)"
    rf"/(?P<suffix>{IBIP_DIGIT_CLASS}+(?:[{IBIP_FRACTION_SEPARATORS}]{IBIP_DIGIT_CLASS}+)?)"
)

# ---------------------------------------------------------------------------------------
# Table A.1: languages and countries

# "idioma", transcribed line by line (ten codes a line, as printed) and checked against
# ISO 639-1: the OCR'd "pbh", "or", "ecr", "k1", the second "ku", "1b", "s1"... are bh,
# br, cr, kl, kw, lb, sl.  The table is the 2011 list: it has "sh" but not "mo".
LANGUAGES: frozenset[str] = frozenset(
    """
    aa ab ae af ak am an ar as av
    ay az ba be bg bh bi bm bn bo
    br bs ca ce ch co cr cs cu cv
    cy da de dv dz ee el en eo es
    et eu fa ff fi fj fo fr fy ga
    gd gl gn gu gv ha he hi ho hr
    ht hu hy hz ia id ie ig ii ik
    io is it iu ja jv ka kg ki kj
    kk kl km kn ko kr ks ku kv kw
    ky la lb lg li ln lo lt lu lv
    mg mh mi mk ml mn mr ms mt my
    na nb nd ne ng nl nn no nr nv
    ny oc oj om or os pa pi pl ps
    pt qu rm rn ro ru rw sa sc sd
    se sg sh si sk sl sm sn so sq
    sr ss st su sv sw ta te tg th
    ti tk tl tn to tr ts tt tw ty
    ug uk ur uz ve vi vo wa wo xh
    yi yo za zh zu
    """.split()
)

# "pais": ISO 3166-1 alpha-2 as of 2011 (249 codes, with BQ, CW, SS and SX; without
# AN).  OCR slips such as "ME" for MF and "Ilell" for PN fixed against ISO.
COUNTRIES: frozenset[str] = frozenset(
    """
    AD AE AF AG AI AL AM AO AQ AR
    AS AT AU AW AX AZ BA BB BD BE
    BF BG BH BI BJ BL BM BN BO BQ
    BR BS BT BV BW BY BZ CA CC CD
    CF CG CH CI CK CL CM CN CO CR
    CU CV CW CX CY CZ DE DJ DK DM
    DO DZ EC EE EG EH ER ES ET FI
    FJ FK FM FO FR GA GB GD GE GF
    GG GH GI GL GM GN GP GQ GR GS
    GT GU GW GY HK HM HN HR HT HU
    ID IE IL IM IN IO IQ IR IS IT
    JE JM JO JP KE KG KH KI KM KN
    KP KR KW KY KZ LA LB LC LI LK
    LR LS LT LU LV LY MA MC MD ME
    MF MG MH MK ML MM MN MO MP MQ
    MR MS MT MU MV MW MX MY MZ NA
    NC NE NF NG NI NL NO NP NR NU
    NZ OM PA PE PF PG PH PK PL PM
    PN PR PS PT PW PY QA RE RO RS
    RU RW SA SB SC SD SE SG SH SI
    SJ SK SL SM SN SO SR SS ST SV
    SX SY SZ TC TD TF TG TH TJ TK
    TL TM TN TO TR TT TV TW TZ UA
    UG UM US UY UZ VA VC VE VG VI
    VN VU WF WS YE YT ZA ZM ZW
    """.split()
)

# ---------------------------------------------------------------------------------------
# Relations, modifiers and verbs (Tables 6.1, 6.2, 6.4, 6.5, 7.5)

#: formato = "oai_dc": the metadata formats a request may name
FORMATS = ("oai_dc",)
LASTEDITION, TRANSLATION, METADATA = "lastedition", "translation", "metadata"
KINDS = (LASTEDITION, TRANSLATION, METADATA)
MODIFIER_SYMBOLS = {LASTEDITION: "!", TRANSLATION: "+", METADATA: ":"}
RELATION_SYMBOLS = {LASTEDITION: ".lastedition", TRANSLATION: ".translation", METADATA: ".metadata"}
VERB_NAMES = {LASTEDITION: "GetLastEdition", TRANSLATION: "GetTranslation", METADATA: "GetMetadata"}
FILE_LIST_VERB = "GetFileList"
#: what each step returns, in English (Table 6.2)
STEP_NOUNS = {LASTEDITION: "last edition", TRANSLATION: "translation", METADATA: "metadata"}
#: relation = ([u [t]] | [t [u]]) [m [t]]: one of these heads, then one of these tails
RELATION_HEADS = (
    (),
    (LASTEDITION,),
    (LASTEDITION, TRANSLATION),
    (TRANSLATION,),
    (TRANSLATION, LASTEDITION),
)
RELATION_TAILS = ((), (METADATA,), (METADATA, TRANSLATION))


def has_open_translation(modifier: str) -> bool:
    """Whether a modifier has a ``+`` without a language, whose answer depends on the
    client's languages."""
    symbol = MODIFIER_SYMBOLS[TRANSLATION]
    return any(modifier[i + 1 : i + 2] != "(" for i, char in enumerate(modifier) if char == symbol)


# ---------------------------------------------------------------------------------------
# Persistent URLs (Tables 6.1, 6.3)

#: Words that urlib.net and the Archives print before an IBI (``/ibi/<IBI>``,
#: ``/rep/<IBI>``, ``/rep-/<IBI>``, ``/goto/<IBI>``, ``/goto-/<IBI>``) and the ``ibi:``
#: of citations.  A repository name could begin with ``rep/`` or ``ibi/`` only if a
#: host name ended in the one-word domain ``rep`` or ``ibi``, and none does.
URL_SHAPES = ("ibi/", "rep/", "rep-/", "goto/", "goto-/", "ibi:")
#: An Archive's address of an item's files: ``col/<IBI>/doc/<file>``.
ARCHIVE_FILES, DOC_FOLDER = "col/", "/doc"
REQUIRED_STATUS = "ibiurl.requireditemstatus"
VERB_LIST = "ibiurl.verblist"
ORIGINAL = "Original"
#: the states of an item (resolution-system §3)
STATES = ("Original", "Copy", "Deleted")
#: path-absolute characters (RFC 3986 §3.3): pchar / "/", pchar = unreserved /
#: pct-encoded / sub-delims / ":" / "@"
PATH_CHARACTER_CLASS = r"[A-Za-z0-9\-._~%!$&'()*+,;=:@/]"
#: a query "caractere": printable ASCII but space, "#", "&" and "="
QUERY_CHARACTER_CLASS = r"[\x21\x22\x24\x25\x27-\x3c\x3e-\x7e]"
#: characters a persistent URL's path keeps as they are (RFC 3986 pchar and "/"): IBI
#: and modifier characters are never percent-encoded
URL_PATH_SAFE = "/:@!$&'()*+,;=-._~"

#: what the build precomputes answers for (the index's answers/): an optional
#: scheme://host/, an IBI of either form, a modifier, nothing else.  Only a key the index
#: holds is answered from it, so this needs to be no stricter than that.
PRECOMPUTED_PATTERN = (
    r"(?:[A-Za-z][A-Za-z0-9+.-]*://[^/?#]+/)?"
    r"(?P<ibi>[2-9A-Za-z]+/[2-9A-Za-z]+"
    r"|[^/?#!+:%\s]+/[^/?#!+:%\s]+/[0-9]{4}/[0-9]{2}\.[0-9]{2}\.[0-9]{2}\.[0-9]{2}(?:\.[0-9]{2}(?:\.[0-9]+)?)?)"
    r"(?P<modifier>[!+:][!+:()a-z_A-Z-]*)?"
)

# ---------------------------------------------------------------------------------------
# Resolution outcomes (resolution-system §8)

#: the most rounds of requests the network resolver (ibistatic.federation) sends for one
#: resolution: each round asks every Archive over HTTP, and a request's outgoing requests
#: are bounded.  A resolution over local views (a crawl, an index, the browser's index)
#: has no such bound: its walk asks each (IBI, steps) once, and a cycle is found by the
#: IBIs it has asked, so an edition chain of any length answers its last edition.
MAX_HOPS = 64
#: the message of a network resolution that reached MAX_HOPS without an answer (alert
#: ``unavailable``: the resolver could not get the answer; ``loop`` is for cycles only)
HOP_LIMIT_MESSAGE = (
    "the chain of editions or translations is longer than this resolver follows "
    "({} rounds of requests)"
)
#: A resolution's ``chain`` (the IBIs asked, in order) is kept whole up to CHAIN_KEPT
#: IBIs.  A longer one keeps its first CHAIN_HEAD and its last CHAIN_TAIL IBIs, with one
#: entry CHAIN_GAP between them that says how many were left out: an answer's size (the
#: index's precomputed answers, the pages) stays bounded however long the chain is.
CHAIN_KEPT = 64
CHAIN_HEAD = 32
CHAIN_TAIL = CHAIN_KEPT - CHAIN_HEAD - 1
CHAIN_GAP = "({} more)"
#: the order of a resolution's fields in the index's precomputed answers (answers/)
ANSWER_ROW_FIELDS = (
    "url",
    "alert",
    "archive",
    "address",
    "state",
    "ibi",
    "content_type",
    "relation",
    "chain",
)
#: alert -> the one-line message of the resolution (CLI, API, JSON, pages, browser)
ALERT_MESSAGES = {
    "not-found": "no Archive holds this IBI",
    "deleted": "the item was deleted",
    "conflict": "two or more Archives claim the original: they are under suspicion; an investigation is needed",
    "no-original": "no Archive holds the original of this item",
    "unavailable": "no Archive can answer this relation of the item",
    "loop": "the chain of editions or translations loops",
}
ALERTS = tuple(ALERT_MESSAGES)
#: alert -> (title, explanation) shown on alert pages
ALERT_TEXTS = {
    "not-found": ("Not found", "No Archive of this site holds an item with this IBI."),
    "deleted": (
        "Deleted item",
        "The item was removed from its Archive; its IBI is never given to another item.",
    ),
    "conflict": (
        "Conflicting originals",
        "Two or more Archives claim to hold the original of this item, so none of them can be "
        "trusted to vouch for it until the conflict is investigated.",
    ),
    "no-original": (
        "No original",
        "Only copies of this item are known; the request asked for the original.",
    ),
    "unavailable": (
        "Not available",
        "The item exists, but no Archive of this site can answer this relation of it (no such "
        "translation, edition or metadata).",
    ),
    "loop": (
        "Loop",
        "Following the editions, translations or metadata of this item comes back where it started.",
    ),
}
#: the browser's titles: the alerts', and those of its own two failures
BROWSER_ALERT_TITLES = {
    **{alert: title for alert, (title, _) in ALERT_TEXTS.items()},
    "bad-url": "Not a persistent URL",
    "error": "Resolution failed",
}

# ---------------------------------------------------------------------------------------
# Metadata

#: The 15 elements of the Dublin Core Metadata Element Set, in the order of the oai_dc schema.
DC_ELEMENTS = (
    "title",
    "creator",
    "subject",
    "description",
    "publisher",
    "contributor",
    "date",
    "type",
    "format",
    "identifier",
    "source",
    "language",
    "relation",
    "coverage",
    "rights",
)


def browser_facts() -> dict:
    """What the in-browser resolver needs of the above, as JSON (``assets/facts.js``)."""
    from .exports import EXPORTS, MAX_RANGES  # exports reads nothing of this module

    return {
        "ibipDigit": IBIP_DIGIT_CLASS,
        "ibipPortSeparators": IBIP_PORT_SEPARATORS,
        "ibipFractionSeparators": IBIP_FRACTION_SEPARATORS,
        "languages": sorted(LANGUAGES),
        "countries": sorted(COUNTRIES),
        "formats": list(FORMATS),
        "kinds": list(KINDS),
        "modifierSymbols": MODIFIER_SYMBOLS,
        "relationSymbols": RELATION_SYMBOLS,
        "verbNames": VERB_NAMES,
        "fileListVerb": FILE_LIST_VERB,
        "stepNouns": STEP_NOUNS,
        "relationHeads": [list(head) for head in RELATION_HEADS],
        "relationTails": [list(tail) for tail in RELATION_TAILS],
        "urlShapes": list(URL_SHAPES),
        "archiveFiles": ARCHIVE_FILES,
        "docFolder": DOC_FOLDER,
        "requiredStatus": REQUIRED_STATUS,
        "verbList": VERB_LIST,
        "original": ORIGINAL,
        "pathCharacter": PATH_CHARACTER_CLASS,
        "queryCharacter": QUERY_CHARACTER_CLASS,
        "precomputed": PRECOMPUTED_PATTERN,
        "chainKept": CHAIN_KEPT,
        "chainHead": CHAIN_HEAD,
        "chainTail": CHAIN_TAIL,
        "chainGap": CHAIN_GAP,
        "answerFields": list(ANSWER_ROW_FIELDS),
        "alertMessages": ALERT_MESSAGES,
        "alertTitles": BROWSER_ALERT_TITLES,
        # core.exports: the files of an item's metadata the worker negotiates
        "exports": [
            {"name": e.name, "contentType": e.content_type, "accepts": list(e.accepts)}
            for e in EXPORTS
        ],
        "maxAcceptRanges": MAX_RANGES,
    }
