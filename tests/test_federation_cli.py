"""The command lines of the resolver network: bad options and files are named, exit 2,
before anything listens; `ibistatic acks` reads a log."""

from __future__ import annotations

import json

import pytest

from ibistatic.cli import main

JOIN = "http://127.0.0.1:9/J8LNKB5R7W/3FUQHC5"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--join", JOIN], "ibistatic serve: --join needs --registration-key"),
        (
            ["--join", "urlib.net/J8LNKB5R7W/3FUQHC5", "--registration-key", "1234567890"],
            "ibistatic serve: --join 'urlib.net/J8LNKB5R7W/3FUQHC5': expected the resolver "
            "service's base URL",
        ),
        (
            ["--join", JOIN, "--registration-key", "12345"],
            "ibistatic serve: --registration-key: registration key '12345': expected 10 or more "
            "digits",
        ),
        (
            ["--registration-key", "1234567890"],
            "ibistatic serve: --registration-key and --advertise need --join",
        ),
        (
            ["--join", JOIN, "--registration-key", "1234567890"],
            "ibistatic serve: --join: the site holds 2 Archives (mtc-m16c, mtc-m16d); a site of "
            "one Archive joins a resolver",
        ),
        (["--urlkey-seconds", "0"], "ibistatic serve: --urlkey-seconds 0.0: expected a positive"),
    ],
)
def test_serve_refuses_bad_join_options_before_listening(capsys, sample_index, options, message):
    code, _, err = run(capsys, "serve", str(sample_index), "--port", "0", *options)
    assert code == 2
    assert err.startswith(message), err


def test_serve_names_an_ack_log_it_cannot_write(capsys, sample_index, tmp_path):
    log = tmp_path / "missing" / "acks.jsonl"
    code, _, err = run(capsys, "serve", str(sample_index), "--port", "0", "--ack-log", str(log))
    assert code == 2
    assert err == f"ibistatic serve: --ack-log {log}: cannot append: No such file or directory\n"


def test_resolver_names_a_bad_keys_entry(capsys, tmp_path):
    keys = tmp_path / "keys.yaml"
    keys.write_text("- {archive-service-ibi: x.org/a/2020/01.01.00.00, registration-key: 12}\n")
    code, _, err = run(capsys, "resolver", "--keys", str(keys), "--port", "0")
    assert code == 2
    assert err == (
        f"ibistatic resolver: --keys {keys}: entry 1: registration-key '12': expected 10 or more "
        "digits, optionally '-' and 10 or more digits (quote it: '1234567890')\n"
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--timeout", "0"], "--timeout 0.0: expected a positive number of seconds"),
        (["--cache-seconds", "-1"], "--cache-seconds -1.0: expected 0 or more seconds"),
        (["--service-ibi", "nope"], "--service-ibi 'nope': invalid IBI 'nope'"),
    ],
)
def test_resolver_refuses_bad_options(capsys, tmp_path, options, message):
    keys = tmp_path / "keys.yaml"
    keys.write_text("[]\n")
    code, _, err = run(capsys, "resolver", "--keys", str(keys), "--port", "0", *options)
    assert code == 2
    assert err.startswith("ibistatic resolver: " + message), err


def test_acks_summary_and_its_problems(capsys, tmp_path):
    log = tmp_path / "acks.jsonl"
    record = {"ibi": "rep a/b", "time": "2026-01-01T00:00:00Z", "contenttype": "Data"}
    log.write_text(json.dumps(record) + "\n" + json.dumps(record) + "\nnot json\n")
    code, out, err = run(capsys, "acks", str(log))
    assert code == 1
    assert out.splitlines() == [
        "accesses  last                  ibi",
        "       2  2026-01-01T00:00:00Z  rep a/b",
        "       2  in all, 1 item(s)",
    ]
    assert err == f"ibistatic acks: {log}:3: not an acknowledgment record (not JSON)\n"
    code, out, _ = run(capsys, "acks", str(log), "--json")
    assert json.loads(out)[0]["count"] == 2


def test_acks_of_a_missing_file(capsys, tmp_path):
    code, _, err = run(capsys, "acks", str(tmp_path / "none.jsonl"))
    assert (code, err) == (
        2,
        f"ibistatic acks: {tmp_path / 'none.jsonl'}: cannot read: No such file or directory\n",
    )
