"""Relations, modifiers and verb lists (ibistatic.core.relations)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ibistatic.core.relations import (
    LASTEDITION,
    METADATA,
    TABLE_6_2,
    TRANSLATION,
    Step,
    VerbList,
    check_relation,
    compositions,
    describe_relation,
    match_modifier,
    modifier_text,
    parse_modifier,
    parse_relation,
    parse_verb_list,
    relation_text,
    relation_to_verb_list,
    verb_list_text,
    verb_list_to_relation,
)
from ibistatic.errors import IbiSyntaxError

U, T, M = Step(LASTEDITION), Step(TRANSLATION), Step(METADATA)


def t(tag):
    return Step(TRANSLATION, tag)


M_DC = Step(METADATA, "oai_dc")


def error_of(function, text, **kwargs):
    with pytest.raises(IbiSyntaxError) as info:
        function(text, **kwargs)
    return str(info.value)


# --- Table 6.2: the 14 modifiers ---------------------------------------------------------

KINDS_OF = {"!": LASTEDITION, "+": TRANSLATION, ":": METADATA}


def grammar_shapes():
    """([u [t]] | [t [u]]) [m [t]], spelled out by hand from Table 6.1."""
    heads = ["", "!", "!+", "+", "+!"]
    tails = ["", ":", ":+"]
    return {head + tail for head in heads for tail in tails} - {""}


def test_table_6_2_is_every_non_empty_shape_of_the_grammar():
    assert len(TABLE_6_2) == 14
    assert {modifier for modifier, _ in TABLE_6_2} == grammar_shapes()


@pytest.mark.parametrize("modifier, meaning", TABLE_6_2)
def test_each_modifier_of_table_6_2_parses(modifier, meaning):
    rel = parse_modifier(modifier)
    assert [step.kind for step in rel] == [KINDS_OF[symbol] for symbol in modifier]
    assert all(step.param is None for step in rel)
    assert modifier_text(rel) == modifier
    assert describe_relation(rel) == meaning


def parameterised(modifier):
    """Every way to parameterise *modifier* with +(pt), +(pt-BR) and :(oai_dc)."""
    options = [
        {"!": ["!"], "+": ["+", "+(pt)", "+(pt-BR)"], ":": [":", ":(oai_dc)"]}[symbol]
        for symbol in modifier
    ]
    return ["".join(choice) for choice in itertools.product(*options)]


PARAMETERISED = [variant for modifier, _ in TABLE_6_2 for variant in parameterised(modifier)]


def test_parameterised_variants_are_many():
    # : 2, :+ 6, ! 1, !+ 3, !: 2, !+: 6, !:+ 6, !+:+ 18, + 3, +! 3, +: 6, +!: 6, +:+ 18, +!:+ 18
    assert len(PARAMETERISED) == 98


@pytest.mark.parametrize("modifier", PARAMETERISED)
def test_each_composition_parses_with_and_without_parameters(modifier):
    rel = parse_modifier(modifier)
    assert modifier_text(rel) == modifier
    assert parse_relation(relation_text(rel)) == rel
    assert parse_verb_list(verb_list_text(VerbList(rel))).steps == rel


def test_parameters_are_kept():
    assert parse_modifier("+(pt-BR)!:(oai_dc)+(en)") == (t("pt-BR"), U, M_DC, t("en"))


MODIFIER_FAILURES = [
    (
        ":!",
        "invalid modifier ':!': expected '(', '+' or end of modifier at character 2, found '!'\n"
        "    :!\n"
        "     ^",
    ),
    (
        "!!",
        "invalid modifier '!!': expected '+', ':' or end of modifier at character 2, found '!'\n"
        "    !!\n"
        "     ^",
    ),
    (
        "+(xx)",
        "invalid modifier '+(xx)': expected an ISO 639-1 language code (Table A.1) at character 3, found 'x'\n"
        "    +(xx)\n"
        "      ^",
    ),
    (
        ":(marc)",
        "invalid modifier ':(marc)': expected 'oai_dc' at character 3, found 'm'\n"
        "    :(marc)\n"
        "      ^",
    ),
]


@pytest.mark.parametrize("text, message", MODIFIER_FAILURES)
def test_modifier_failures_exact(text, message):
    assert error_of(parse_modifier, text) == message


MORE_MODIFIER_FAILURES = [
    # text, position, expected
    ("++", 1, "'(', '!', ':' or end of modifier"),
    ("+!+", 2, "':' or end of modifier"),
    ("!+!", 2, "'(', ':' or end of modifier"),
    ("::", 1, "'(', '+' or end of modifier"),
    (":+:", 2, "'(' or end of modifier"),
    (":+!", 2, "'(' or end of modifier"),
    ("!+:+!", 4, "'(' or end of modifier"),
    ("!(", 1, "'+', ':' or end of modifier"),
    ("+(pt", 4, "'-' or ')'"),
    ("+(pt-BR", 7, "')'"),
    ("+(pt-br)", 5, "an upper-case letter (ISO 3166-1 country code)"),
    ("+(PT)", 2, "a lower-case letter (ISO 639-1 language code)"),
    ("+(pt-XX)", 5, "an ISO 3166-1 country code (Table A.1)"),
    ("+()", 2, "a lower-case letter (ISO 639-1 language code)"),
    (":(oai_dc", 8, "')'"),
    (":(OAI_DC)", 2, "'oai_dc'"),
    ("x", 0, "'!', '+', ':' or end of modifier"),
]


@pytest.mark.parametrize("text, position, expected", MORE_MODIFIER_FAILURES)
def test_more_modifier_failures(text, position, expected):
    with pytest.raises(IbiSyntaxError) as info:
        parse_modifier(text)
    assert (info.value.position, info.value.expected, info.value.what) == (
        position,
        expected,
        "modifier",
    )


def test_empty_modifier_is_the_empty_relation():
    assert parse_modifier("") == ()
    assert modifier_text(()) == ""


def test_match_modifier_stops_before_path_or_query():
    assert match_modifier("X!:(oai_dc)/a.pdf", 1, "persistent URL", ("/", "?")) == ((U, M_DC), 11)
    assert match_modifier("X?q=1", 1, "persistent URL", ("/", "?")) == ((), 1)
    with pytest.raises(IbiSyntaxError) as info:
        match_modifier("X!#", 1, "persistent URL", ("/", "?"))
    assert info.value.expected == "'+', ':', '/', '?' or end of persistent URL"
    assert info.value.position == 2


# --- relations (Table 7.5, Example 7.5) --------------------------------------------------

EXAMPLE_7_5 = [
    (".lastedition", (U,), "last edition"),
    (".translation", (T,), "translation"),
    (".translation(pt-BR)", (t("pt-BR"),), "translation (pt-BR)"),
    (".metadata", (M,), "metadata"),
    (".metadata(oai_dc)", (M_DC,), "metadata (oai_dc)"),
    (".lastedition.translation", (U, T), "translation of the last edition"),
    (".lastedition.translation(pt-BR)", (U, t("pt-BR")), "translation (pt-BR) of the last edition"),
    (".lastedition.metadata", (U, M), "metadata of the last edition"),
    (".lastedition.metadata(oai_dc)", (U, M_DC), "metadata (oai_dc) of the last edition"),
    (".translation(pt-BR).lastedition", (t("pt-BR"), U), "last edition of the translation (pt-BR)"),
    (".translation(en).metadata", (t("en"), M), "metadata of the translation (en)"),
    (".metadata.translation(en)", (M, t("en")), "translation (en) of the metadata"),
    ("", (), "item itself"),
]


@pytest.mark.parametrize("text, rel, meaning", EXAMPLE_7_5)
def test_example_7_5(text, rel, meaning):
    assert parse_relation(text) == rel
    assert relation_text(rel) == text
    assert describe_relation(rel) == meaning


RELATION_FAILURES = [
    (".metadata.lastedition", 9, "'(', '.translation' or end of relation"),
    (".lastedition.lastedition", 12, "'.translation', '.metadata' or end of relation"),
    (".foo", 0, "'.lastedition', '.translation', '.metadata' or end of relation"),
    ("lastedition", 0, "'.lastedition', '.translation', '.metadata' or end of relation"),
    (".metadata(marc)", 10, "'oai_dc'"),
    (".translation(xx)", 13, "an ISO 639-1 language code (Table A.1)"),
    (".lastedition(pt)", 12, "'.translation', '.metadata' or end of relation"),
    (".metadata ", 9, "'(', '.translation' or end of relation"),
]


@pytest.mark.parametrize("text, position, expected", RELATION_FAILURES)
def test_relation_failures(text, position, expected):
    with pytest.raises(IbiSyntaxError) as info:
        parse_relation(text)
    assert (info.value.position, info.value.expected, info.value.what) == (
        position,
        expected,
        "relation",
    )


def test_relation_failure_message_exact():
    assert error_of(parse_relation, ".metadata.lastedition") == (
        "invalid relation '.metadata.lastedition': expected '(', '.translation' or end of "
        "relation at character 10, found '.'\n"
        "    .metadata.lastedition\n"
        "             ^"
    )


def test_check_relation():
    check_relation((U, T, M, T))
    with pytest.raises(IbiSyntaxError) as info:
        check_relation((M, U))
    assert (info.value.text, info.value.position) == (".metadata.lastedition", 9)
    with pytest.raises(IbiSyntaxError) as info:
        check_relation([U])
    assert info.value.expected == "a tuple of Step"
    with pytest.raises(IbiSyntaxError):
        check_relation(("lastedition",))


STEP_FAILURES = [
    (
        ("edition", None),
        "invalid relation step 'edition': expected 'lastedition', 'translation' or "
        "'metadata' at character 1, found 'e'\n    edition\n    ^",
    ),
    (
        ("metadata", "marc"),
        "invalid relation '.metadata(marc)': expected 'oai_dc' at character 11, "
        "found 'm'\n    .metadata(marc)\n              ^",
    ),
    (
        ("translation", "pt-xx"),
        "invalid relation '.translation(pt-xx)': expected an upper-case letter "
        "(ISO 3166-1 country code) at character 17, found 'x'\n"
        "    .translation(pt-xx)\n                    ^",
    ),
    (
        ("lastedition", "pt"),
        "invalid relation '.lastedition(pt)': expected no parameter after "
        ".lastedition at character 13, found '('\n    .lastedition(pt)\n                ^",
    ),
]


@pytest.mark.parametrize("args, message", STEP_FAILURES)
def test_step_is_checked(args, message):
    with pytest.raises(IbiSyntaxError) as info:
        Step(*args)
    assert str(info.value) == message


def test_steps_are_frozen_and_hashable():
    with pytest.raises(AttributeError):
        U.kind = METADATA  # type: ignore[misc]
    assert len({U, Step(LASTEDITION), M, M_DC}) == 3


# --- verb lists (Tables 6.4, 6.5) ---------------------------------------------------------


def test_verb_list_and_relation_are_one():
    vl = parse_verb_list("GetLastEdition GetMetadata(oai_dc)")
    assert verb_list_to_relation(vl) == parse_relation(".lastedition.metadata(oai_dc)")
    assert relation_to_verb_list(parse_relation(".lastedition.metadata(oai_dc)")) == vl
    assert verb_list_text(vl) == "GetLastEdition GetMetadata(oai_dc)"
    assert relation_text(vl.steps) == ".lastedition.metadata(oai_dc)"


VERB_LISTS = [
    ("GetLastEdition+GetMetadata(oai_dc)", (U, M_DC), False, "GetLastEdition GetMetadata(oai_dc)"),
    ("GetLastEdition GetMetadata(oai_dc)", (U, M_DC), False, "GetLastEdition GetMetadata(oai_dc)"),
    ("GetFileList", (), True, "GetFileList"),
    ("GetFileList+GetLastEdition", (U,), True, "GetLastEdition GetFileList"),
    (
        "GetTranslation(pt)+GetFileList+GetMetadata",
        (t("pt"), M),
        True,
        "GetTranslation(pt) GetMetadata GetFileList",
    ),
    ("GetTranslation", (T,), False, "GetTranslation"),
    (
        "GetTranslation(pt-BR)+GetLastEdition+GetMetadata+GetTranslation(en)",
        (t("pt-BR"), U, M, t("en")),
        False,
        "GetTranslation(pt-BR) GetLastEdition GetMetadata GetTranslation(en)",
    ),
    ("", (), False, ""),
]


@pytest.mark.parametrize("text, steps, file_list, canonical", VERB_LISTS)
def test_parse_verb_list(text, steps, file_list, canonical):
    vl = parse_verb_list(text)
    assert vl == VerbList(steps, file_list)
    assert verb_list_text(vl) == canonical
    assert parse_verb_list(verb_list_text(vl, "+")) == vl


VERB_LIST_FAILURES = [
    ("GetMetadata+GetLastEdition", 12, "'GetTranslation' or 'GetFileList'"),
    ("GetMetadata+GetMetadata", 12, "'GetTranslation' or 'GetFileList'"),
    ("GetMetadataX", 11, "'(', '+', ' ' or end of verb list"),
    ("GetLastEdition(", 14, "'+', ' ' or end of verb list"),
    ("GetMetadata(oai_dc)x", 19, "'+', ' ' or end of verb list"),
    ("GetMetadata+", 12, "'GetTranslation' or 'GetFileList'"),
    ("+GetMetadata", 0, "'GetLastEdition', 'GetTranslation', 'GetMetadata' or 'GetFileList'"),
    ("getmetadata", 0, "'GetLastEdition', 'GetTranslation', 'GetMetadata' or 'GetFileList'"),
    ("GetFilelList", 0, "'GetLastEdition', 'GetTranslation', 'GetMetadata' or 'GetFileList'"),
    ("GetMetadata(marc)", 12, "'oai_dc'"),
    ("GetTranslation(xx)", 15, "an ISO 639-1 language code (Table A.1)"),
    ("GetLastEdition  GetMetadata", 15, "'GetTranslation', 'GetMetadata' or 'GetFileList'"),
]


@pytest.mark.parametrize("text, position, expected", VERB_LIST_FAILURES)
def test_verb_list_failures(text, position, expected):
    with pytest.raises(IbiSyntaxError) as info:
        parse_verb_list(text)
    assert (info.value.position, info.value.expected, info.value.what) == (
        position,
        expected,
        "verb list",
    )


def test_verb_list_failure_message_exact():
    assert error_of(parse_verb_list, "GetMetadata+GetLastEdition") == (
        "invalid verb list 'GetMetadata+GetLastEdition': expected 'GetTranslation' or "
        "'GetFileList' at character 13, found 'G'\n"
        "    GetMetadata+GetLastEdition\n"
        "                ^"
    )


UNIONS = [
    # modifier, ibiurl.verblist, union (Table 6.6)
    ("+", "GetMetadata", "GetTranslation GetMetadata"),  # Example 6.8
    ("!:(oai_dc)", "GetLastEdition+GetMetadata(oai_dc)", "GetLastEdition GetMetadata(oai_dc)"),
    ("!", "GetMetadata+GetFileList", "GetLastEdition GetMetadata GetFileList"),
    ("", "GetLastEdition", "GetLastEdition"),
    ("!+", "", "GetLastEdition GetTranslation"),
    ("+", "GetTranslation+GetMetadata", "GetTranslation GetMetadata"),
]


@pytest.mark.parametrize("modifier, verbs, union", UNIONS)
def test_union_of_modifier_and_verb_list(modifier, verbs, union):
    assert verb_list_text(parse_verb_list(verbs, after=parse_modifier(modifier))) == union


def test_union_must_follow_the_grammar():
    with pytest.raises(IbiSyntaxError) as info:
        parse_verb_list("GetLastEdition", after=parse_modifier(":"))
    assert info.value.position == 0
    assert info.value.expected == (
        "'GetTranslation' or 'GetFileList' after the modifier's verbs GetMetadata"
    )


def test_verb_list_checks_its_steps():
    with pytest.raises(IbiSyntaxError):
        VerbList((M, U))


# --- compositions ------------------------------------------------------------------------


def test_compositions_default():
    rels = compositions()
    assert rels[0] == ()
    assert len(rels) == 25  # 15 shapes; the 9 with metadata twice (bare, oai_dc), +1 empty
    assert len(set(rels)) == len(rels)
    assert {
        modifier_text(rel) for rel in rels if all(s.param is None for s in rel)
    } == grammar_shapes() | {""}
    assert (U, M_DC) in rels


def test_compositions_with_languages():
    rels = compositions(["pt", "pt-BR", "pt"], ("oai_dc",))
    assert len(set(rels)) == len(rels)
    expected = {rel for modifier in [""] + PARAMETERISED for rel in [parse_modifier(modifier)]}
    assert set(rels) == expected
    assert len(rels) == 99


def test_compositions_order_follows_table_6_2():
    rels = compositions(formats=())
    assert [modifier_text(rel) for rel in rels] == [""] + [m for m, _ in TABLE_6_2]


def test_compositions_checks_languages():
    with pytest.raises(IbiSyntaxError):
        compositions(["xx"])


@given(st.sampled_from(compositions(["pt", "pt-BR", "en", "fr-CA"])), st.booleans())
def test_three_spellings_round_trip(rel, file_list):
    assert parse_modifier(modifier_text(rel)) == rel
    assert parse_relation(relation_text(rel)) == rel
    vl = VerbList(rel, file_list)
    assert parse_verb_list(verb_list_text(vl)) == vl
    assert parse_verb_list(verb_list_text(vl, "+")) == vl
