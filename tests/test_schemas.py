"""The declarative schemas of ibistatic.yaml, archive.yaml and item.yaml (ibistatic/schema.py):
unknown keys named with the key they probably meant, every problem of a configuration
collected, the models filled from the schemas, and the documentation's tables made from
them (they cannot drift)."""

from __future__ import annotations

import dataclasses
import importlib.util
import shutil
from pathlib import Path

import pytest

from ibistatic.archive.descriptors import ARCHIVE_SCHEMA, ITEM_SCHEMA, read_archive_info, read_item
from ibistatic.cli import main
from ibistatic.config import CONFIG_SCHEMA, SiteConfig, SiteIdentity, load_config
from ibistatic.core.model import ArchiveInfo, Item
from ibistatic.errors import ConfigError

ROOT = Path(__file__).resolve().parent.parent
REPO = "sid.inpe.br/mtc-m18@80/2009/07.21.13.23"
CONFIG_KEYS = (
    "one of site-url, archives, output, modifiers, catalog, cache, hosts, alert-pages, "
    "redirect-pages, jobs, "
    "language, institution, institution-url, contact, logo, persistence-policy, "
    "persistence-policy-url, templates"
)
ITEM_KEYS = (
    "one of state, ibip, content-type, timestamp, target, language, translations, "
    "next-edition, metadata, formats, dublin-core, transferable, reason"
)
GOOD = "site-url: https://ibi.example.org/\narchives: [archives/mtc-m16c]\n"


def _tables_script():
    spec = importlib.util.spec_from_file_location(
        "schema_tables", ROOT / "scripts" / "schema_tables.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- "did you mean" ------------------------------------------------------------------------

SUGGESTIONS = [
    (CONFIG_SCHEMA, "site_url", "site-url"),  # the same key with '_' for '-'
    (CONFIG_SCHEMA, "Site-URL", "site-url"),
    (CONFIG_SCHEMA, "siteurl", "site-url"),
    (CONFIG_SCHEMA, "outptu", "output"),
    (CONFIG_SCHEMA, "modifier", "modifiers"),
    (CONFIG_SCHEMA, "arhcives", "archives"),
    (CONFIG_SCHEMA, "redirect-files", None),  # removed: accepted and never used
    (CONFIG_SCHEMA, "url", None),
    (ARCHIVE_SCHEMA, "adress", "address"),
    (ARCHIVE_SCHEMA, "file_url", "file-url"),
    (ARCHIVE_SCHEMA, "colour", None),
    (ITEM_SCHEMA, "content_type", "content-type"),
    (ITEM_SCHEMA, "langauge", "language"),
    (ITEM_SCHEMA, "lang", "language"),
    (ITEM_SCHEMA, "translation", "translations"),
    (ITEM_SCHEMA, "dublincore", "dublin-core"),
    (ITEM_SCHEMA, "titel", None),  # 0.6 alike to 'state': no suggestion beats a wrong one
    (ITEM_SCHEMA, "k1", None),
    (ITEM_SCHEMA, 5, None),
    (ITEM_SCHEMA, True, None),
]


@pytest.mark.parametrize(
    "schema, key, meant", SUGGESTIONS, ids=[f"{s.descriptor}-{k}" for s, k, _ in SUGGESTIONS]
)
def test_suggestion(schema, key, meant):
    assert schema.suggestion(key) == meant


def test_item_unknown_key_is_a_warning_that_names_the_likely_key():
    item, problems = read_item(
        "a", REPO, {"state": "Original", "langauge": "en"}, ("r.pdf",), "2020-01-01T00:00:00Z"
    )
    assert item is not None and item.language is None
    assert [str(p) for p in problems] == [
        f"warning: a: {REPO}/item.yaml: langauge: an unknown key; expected {ITEM_KEYS}; did you mean language?"
    ]


def test_archive_unknown_key_with_underscore_is_a_warning_that_names_the_key():
    raw = {
        "address": "x.org",
        "service-ibi": "sid.inpe.br/mtc-m18@80/2008/03.17.15.17",
        "file_url": "https://x.org/{path}",
    }
    info, problems = read_archive_info("a", raw)
    assert info is not None and info.file_url == "http://{address}/col/{repository}/doc/{path}"
    assert [str(p) for p in problems] == [
        "warning: a: archive.yaml: file_url: an unknown key; expected one of address, service-ibi, service-ibip, "
        "platform-software-ibi, file-url, file-list-url, relations, pair-list-charset, "
        "deposit-host, deposit-ip, deposit-port, "
        "deposit-granularity; did you mean file-url?"
    ]


# --- ibistatic.yaml: unknown keys are errors, every problem reported --------------------------


def _config(tmp_path: Path, text: str) -> Path:
    (tmp_path / "archives" / "mtc-m16c").mkdir(parents=True, exist_ok=True)
    path = tmp_path / "ibistatic.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "key, value, meant",
    [
        ("outptu", "x", "; did you mean output?"),
        ("modifier", "all", "; did you mean modifiers?"),
        ("site_url", "", "; did you mean site-url?"),  # with no value: named all the same
        (
            "redirect-files",
            "[nginx]",
            "; redirect-files is no longer read: name the hosts with hosts",
        ),
        ("colour", "blue", ""),
    ],
)
def test_config_unknown_key_is_an_error(tmp_path, key, value, meant):
    path = _config(tmp_path, GOOD + f"{key}: {value}\n")
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    assert str(raised.value) == f"{path}: {key}: an unknown key; expected {CONFIG_KEYS}{meant}"
    assert raised.value.exit_code == 2


def test_config_reports_every_problem_unknown_keys_first(tmp_path, capsys, monkeypatch):
    """The example of docs/configuration.md, as the command line prints it."""
    _config(
        tmp_path,
        "site_url: https://ibi.example.org/\narchives: [archives/mtc-m16c]\ncatalog: 'yes'\n",
    )
    monkeypatch.chdir(tmp_path)
    assert main(["build", "--config", "ibistatic.yaml"]) == 2
    printed = capsys.readouterr().err.splitlines()
    assert printed == [
        f"ibistatic build: ibistatic.yaml: site_url: an unknown key; expected {CONFIG_KEYS}; did you mean site-url?",
        "ibistatic.yaml: site-url: found nothing; expected an absolute http(s) URL such as https://ibi.example.org/, "
        "without query or fragment (a required key)",
        "ibistatic.yaml: catalog: found 'yes'; expected true or false",
    ]
    docs = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert "\n".join(printed) in docs
    assert not (tmp_path / "site").exists()


def test_config_unknown_key_with_a_newline_is_one_escaped_line(tmp_path):
    path = _config(tmp_path, GOOD + '"a\\nerror: forged": 1\n')
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    assert str(raised.value) == f"{path}: a\\nerror: forged: an unknown key; expected {CONFIG_KEYS}"


def test_config_key_without_value_counts_as_absent(tmp_path):
    config = load_config(_config(tmp_path, GOOD + "output:\nmodifiers:\ncatalog:\ncache:\n"))
    assert (config.output, config.modifiers, config.catalog, config.cache) == (
        tmp_path / "site",
        "default",
        False,
        None,
    )


def test_config_output_option_is_checked_like_the_key(tmp_path):
    path = _config(tmp_path, GOOD + "outptu: x\n")
    with pytest.raises(ConfigError) as raised:
        load_config(path, output=" ")
    assert str(raised.value).splitlines() == [
        f"{path}: outptu: an unknown key; expected {CONFIG_KEYS}; did you mean output?",
        f"{path}: output: found ' '; expected a directory",
    ]


# --- one declaration per field: the models are filled from the schemas ----------------------


@pytest.mark.parametrize(
    "schema, model, not_declared",
    [
        (CONFIG_SCHEMA, SiteConfig, {"path", "identity"}),
        (ARCHIVE_SCHEMA, ArchiveInfo, {"name"}),
        (ITEM_SCHEMA, Item, {"archive", "repository", "files", "files_stamp"}),
    ],
)
def test_every_field_of_the_model_is_declared_once(schema, model, not_declared):
    read = [field.name for field in schema.fields if field.read is not None]
    assert len(set(schema.keys)) == len(schema.keys)
    fields = {f.name for f in dataclasses.fields(model)} - not_declared
    if model is SiteConfig:  # the site identity's keys fill a SiteIdentity of their own
        fields |= {f.name for f in dataclasses.fields(SiteIdentity)}
    assert set(read) == fields


def test_only_the_deposit_keys_are_left_to_another_command():
    assert [f.key for f in ARCHIVE_SCHEMA.fields if f.read is None] == [
        "deposit-host",
        "deposit-ip",
        "deposit-port",
        "deposit-granularity",
    ]
    assert all(f.read is not None for f in CONFIG_SCHEMA.fields + ITEM_SCHEMA.fields)


@pytest.mark.parametrize(
    "schema", [CONFIG_SCHEMA, ARCHIVE_SCHEMA, ITEM_SCHEMA], ids=lambda s: s.descriptor
)
def test_every_field_is_documented(schema):
    for field in schema.fields:
        assert field.meaning, field.key
        assert field.required == (field.default == ""), (
            field.key
        )  # required, or a documented default
        assert not field.required or field.expected, field.key


# --- the documentation's tables are the schemas ----------------------------------------------


def test_docs_tables_are_made_from_the_schemas():
    script = _tables_script()
    found = []
    for page in script.DOCS:
        text = page.read_text(encoding="utf-8")
        assert script.rendered(text) == text, f"{page.name}: run python scripts/schema_tables.py"
        found += script.documented(text)
    assert found == ["ibistatic.yaml", "archive.yaml", "item.yaml"]


def test_docs_table_rows_are_exactly_the_schema_keys():
    """Read back from the page: a row per key, in the schema's order, and no other row."""
    script = _tables_script()
    text = (ROOT / "docs" / "archive-format.md").read_text(encoding="utf-8")
    blocks = {m["name"]: m["table"] for m in script.BLOCK.finditer(text)}
    rows = [line.split(" | ")[0].strip("| `") for line in blocks["item.yaml"].splitlines()[2:]]
    assert tuple(rows) == ITEM_SCHEMA.keys


def test_a_stale_table_is_found_and_rewritten(tmp_path, monkeypatch):
    script = _tables_script()
    page = tmp_path / "configuration.md"
    shutil.copy(ROOT / "docs" / "configuration.md", page)
    page.write_text(
        page.read_text(encoding="utf-8").replace("| `cache` |", "| `cache-dir` |"), encoding="utf-8"
    )
    monkeypatch.setattr(script, "DOCS", (page,))
    monkeypatch.setattr(script, "ROOT", tmp_path)
    assert script.main(["--check"]) == 1
    assert script.main([]) == 0
    assert script.main(["--check"]) == 0
    assert page.read_text(encoding="utf-8") == (ROOT / "docs" / "configuration.md").read_text(
        encoding="utf-8"
    )
