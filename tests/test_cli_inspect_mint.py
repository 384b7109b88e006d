"""``ibistatic inspect`` and ``ibistatic mint`` (spec/cli.md)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ibistatic.cli import main


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_inspect_a_repository_name(capsys):
    code, out, err = _run(capsys, "inspect", "sid.inpe.br/mtc-m18@80/2009/02.16.17.46")
    assert (code, err) == (0, "")
    assert out == (
        "form            repository\n"
        "ibi             sid.inpe.br/mtc-m18@80/2009/02.16.17.46\n"
        "key             sid.inpe.br/mtc-m18@80/2009/02.16.17.46\n"
        "prefix          sid.inpe.br/mtc-m18@80\n"
        "suffix          2009/02.16.17.46\n"
        "parts           sid.inpe.br | mtc-m18@80 | 2009 | 02.16.17.46\n"
        "subdomain       sid.inpe.br\n"
        "word            mtc-m18\n"
        "port            80\n"
        "port_separator  @\n"
        "seconds         1234806360\n"
        "date            2009-02-16T17:46:00Z\n"
    )


def test_inspect_a_repository_name_as_json(capsys):
    code, out, _ = _run(capsys, "inspect", "sid.INPE.br/mtc-m18/2010/10.20.15.14.06.5", "--json")
    assert code == 0
    assert json.loads(out) == {
        "form": "repository",
        "ibi": "sid.INPE.br/mtc-m18/2010/10.20.15.14.06.5",
        "key": "sid.inpe.br/mtc-m18/2010/10.20.15.14.06.5",
        "prefix": "sid.INPE.br/mtc-m18",
        "suffix": "2010/10.20.15.14.06.5",
        "parts": ["sid.INPE.br", "mtc-m18", "2010", "10.20.15.14.06.5"],
        "subdomain": "sid.INPE.br",
        "word": "mtc-m18",
        "port": None,
        "port_separator": "",
        "seconds": 1287587646.5,
        "date": "2010-10-20T15:14:06.5Z",
    }


def test_inspect_an_ibip_as_json(capsys):
    code, out, _ = _run(capsys, "inspect", "8JMKD3MGP8W/34PGRBS", "--json")
    assert code == 0
    info = json.loads(out)
    assert {k: info[k] for k in ("form", "prefix", "suffix", "ip", "port", "seconds")} == {
        "form": "ibip",
        "prefix": "8JMKD3MGP8W",
        "suffix": "34PGRBS",
        "ip": "150.163.34.243",
        "port": 800,
        "seconds": 1234806360,
    }
    assert info["date"] == "2009-02-16T17:46:00Z"
    assert isinstance(info["seconds"], int)


def test_inspect_an_ibip(capsys):
    code, out, _ = _run(capsys, "inspect", "8jmkd3mgp8w/34pgrbs")
    assert code == 0
    assert out.splitlines()[0] == "form     ibip"
    assert "ip       150.163.34.243" in out.splitlines()
    assert "key      8JMKD3MGP8W/34PGRBS" in out.splitlines()


@pytest.mark.parametrize(
    "ibi, message",
    [
        (
            "sid.inpe.br/mtc m18/2009",
            "ibistatic inspect: invalid IBI 'sid.inpe.br/mtc m18/2009': expected a letter, a digit, '-', '.', '@'"
            " or '/' at character 16, found ' '\n"
            "    sid.inpe.br/mtc m18/2009\n"
            "                   ^\n",
        ),
        (
            "8JMKD3MGP8/34PGRBS",
            "ibistatic inspect: invalid IBI '8JMKD3MGP8/34PGRBS': expected an IBIp digit (2-9, A-H, J-N, P-U),"
            " 'W' or 'X' at character 11, found '/'\n"
            "    8JMKD3MGP8/34PGRBS\n"
            "              ^\n",
        ),
    ],
)
def test_inspect_a_bad_ibi(capsys, ibi, message):
    code, out, err = _run(capsys, "inspect", ibi)
    assert (code, out, err) == (2, "", message)


def test_inspect_through_a_real_process():
    bad = subprocess.run(
        [sys.executable, "-m", "ibistatic", "inspect", "sid.inpe.br/mtc m18/2009"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.splitlines()[-1] == "                   ^"
    good = subprocess.run(
        [sys.executable, "-m", "ibistatic", "inspect", "8JMKD3MGP8W/34PGRBS", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert good.returncode == 0 and json.loads(good.stdout)["ip"] == "150.163.34.243"


def test_mint_a_repository_name(capsys, tmp_path):
    state = tmp_path / "state.json"
    argv = [
        "mint",
        "--host",
        "mtc-m18.sid.inpe.br",
        "--at",
        "1287587646.394023",
        "--state",
        str(state),
        "--json",
    ]
    code, out, _ = _run(capsys, *argv)
    assert code == 0
    assert json.loads(out) == {
        "repository": "sid.inpe.br/mtc-m18/2010/10.20.15.14.06",
        "seconds": 1287587646,
        "date": "2010-10-20T15:14:06Z",
        "state": str(state),
    }
    # the same instant again: the distributor moves on to the next second
    code, out, _ = _run(capsys, *argv[:-1])
    assert (code, out) == (0, "sid.inpe.br/mtc-m18/2010/10.20.15.14.07\n")


def test_mint_an_ibip(capsys, tmp_path):
    state = tmp_path / "state.json"
    code, out, _ = _run(
        capsys,
        "mint",
        "--ip",
        "150.163.34.243",
        "--at",
        "1234806360",
        "--state",
        str(state),
        "--json",
    )
    assert code == 0
    info = json.loads(out)
    assert (info["ibip"], info["seconds"]) == ("8JMKD3MGP8W/34PGRBS", 1234806360)
    code, out, _ = _run(
        capsys,
        "mint",
        "--ip",
        "150.163.34.243",
        "--port",
        "8080",
        "--at",
        "1234806360",
        "--granularity",
        "0.01",
        "--state",
        str(tmp_path / "other.json"),
        "--json",
    )
    info = json.loads(out)
    assert (code, info["ibip"], info["seconds"]) == (0, "8JMKD3MGP8WD49/34PGRBS", 1234806360)


def test_mint_with_fractional_granularity(capsys, tmp_path):
    state = str(tmp_path / "state.json")
    argv = [
        "mint",
        "--host",
        "mtc-m18.sid.inpe.br",
        "--port",
        "8080",
        "--granularity",
        "0.1",
        "--state",
        state,
    ]
    assert _run(capsys, *argv, "--at", "1287587646.394023") == (
        0,
        "sid.inpe.br/mtc-m18.8080/2010/10.20.15.14.06.3\n",
        "",
    )
    assert _run(capsys, *argv, "--at", "1287587646.394023") == (
        0,
        "sid.inpe.br/mtc-m18.8080/2010/10.20.15.14.06.4\n",
        "",
    )


def test_mint_uses_the_default_state_file(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    code, out, _ = _run(
        capsys, "mint", "--host", "mtc-m18.sid.inpe.br", "--at", "1287587646", "--json"
    )
    assert code == 0
    expected = tmp_path / "ibistatic" / "sid.inpe.br_mtc-m18.json"
    assert json.loads(out)["state"] == str(expected)
    assert json.loads(expected.read_text())["last-date-for-suffix"] == "1287587646"


@pytest.mark.parametrize(
    "argv, code, message",
    [
        (
            ["--host", "mtc-m18.sid.inpe.br", "--at", "soon"],
            2,
            "ibistatic mint: --at must be POSIX seconds as a decimal number, not 'soon'\n",
        ),
        (
            ["--host", "150.163.34.243"],
            2,
            "ibistatic mint: --host 150.163.34.243 is an IP address: use --ip to mint an IBIp\n",
        ),
        (
            ["--ip", "mtc-m18.sid.inpe.br"],
            2,
            "ibistatic mint: not an IPv4 or IPv6 address: 'mtc-m18.sid.inpe.br'\n",
        ),
        (
            ["--host", "mtc-m18.sid.inpe.br", "--granularity", "0.5"],
            2,
            "ibistatic mint: granularity must be 60, 1, 0.1, 0.01, ... seconds, not 0.5\n",
        ),
        (
            ["--host", "mtc-m18.sid.inpe.br", "--port", "0"],
            2,
            "ibistatic mint: a port is an integer from 1 to 65535, not 0\n",
        ),
        (
            ["--host", "localhost"],
            2,
            "ibistatic mint: invalid host name 'localhost': expected a letter, a digit, '-' or '.' at character 10,"
            " found end of input\n    localhost\n             ^\n",
        ),
    ],
)
def test_mint_errors(capsys, tmp_path, argv, code, message):
    state = tmp_path / "state.json"
    assert _run(capsys, "mint", *argv, "--state", str(state)) == (code, "", message)
    assert not state.exists()


def test_mint_with_a_damaged_state_file(capsys, tmp_path):
    state = tmp_path / "state.json"
    state.write_text("{")
    code, out, err = _run(
        capsys, "mint", "--host", "mtc-m18.sid.inpe.br", "--at", "1287587646", "--state", str(state)
    )
    assert (code, out) == (1, "")
    assert err.startswith(f"ibistatic mint: {state}: expected a JSON object")


def test_mint_needs_host_or_ip(capsys):
    with pytest.raises(SystemExit) as caught:
        main(["mint", "--at", "1287587646"])
    assert caught.value.code == 2
    assert "one of the arguments --host --ip is required" in capsys.readouterr().err


def test_an_error_of_any_command_cannot_forge_a_line(capsys, tmp_path):
    """cli.main escapes what an error quotes: a newline in a path is shown as \\n."""
    folder = f"{tmp_path}/no\nerror: forged"
    code, out, err = _run(
        capsys, "resolve", "--index", folder, "sid.inpe.br/mtc-m16d/2009/01.01.00.00"
    )
    assert (code, out) == (1, "")
    assert (
        err
        == f"ibistatic resolve: {tmp_path}/no\\nerror: forged: no index here (expected manifest.json"
        " in it or in its index/ folder; run 'ibistatic build' first)\n"
    )


def test_a_syntax_error_keeps_its_caret_lines_and_escapes_the_input(capsys):
    code, out, err = _run(capsys, "inspect", "a\nerror: forged")
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        "ibistatic inspect: invalid IBI 'a\\nerror: forged': expected a letter, a digit, '-', '.' or '/'"
        " at character 2, found '\\n'",
        "    a?error: forged",
        "     ^",
    ]
