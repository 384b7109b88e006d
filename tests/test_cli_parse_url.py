"""``ibistatic parse-url`` (docs/cli/parse-url.md): the pairs of Table 6.6, or exit 2 with a caret."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ibistatic.cli import main
from ibistatic.core.pairlists import parse_pairs

EXAMPLE_6_8 = "http://urlib.net/LK47B6W/362SFKH+?ibiurl.requireditemstatus=Original&ibiurl.verblist=GetMetadata"


def run(capsys, *argv):
    code = main(["parse-url", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_example_6_8(capsys):
    code, out, err = run(capsys, EXAMPLE_6_8)
    assert (code, err) == (0, "")
    assert out == (
        "parsedibiurl.ibi LK47B6W/362SFKH\n"
        "parsedibiurl.requireditemstatus Original\n"
        "parsedibiurl.verblist {GetTranslation GetMetadata}\n"
    )


@pytest.mark.parametrize(
    "url, out",
    [
        (
            "http://urlib.net/8JMKD3MGP8W/35MMLL8!:(oai_dc)",
            "parsedibiurl.ibi 8JMKD3MGP8W/35MMLL8\n"
            "parsedibiurl.verblist {GetLastEdition GetMetadata(oai_dc)}\n",
        ),
        (
            "http://urlib.net/8JMKD3MGP8W/35MMLL8?ibiurl.verblist=GetLastEdition+GetMetadata(oai_dc)",
            "parsedibiurl.ibi 8JMKD3MGP8W/35MMLL8\n"
            "parsedibiurl.verblist {GetLastEdition GetMetadata(oai_dc)}\n",
        ),
        (
            "http://urlib.net/LK47B6W/362SFKH/reference.bib",
            "parsedibiurl.filepath /reference.bib\nparsedibiurl.ibi LK47B6W/362SFKH\n",
        ),
        (
            "http://urlib.net/LK47B6W/362SFKH?ibiurl.verblist=GetFileList",
            "parsedibiurl.ibi LK47B6W/362SFKH\nparsedibiurl.verblist GetFileList\n",
        ),
        (
            "iconet.com.br/banon/2009/09.09.22.01",
            "parsedibiurl.ibi iconet.com.br/banon/2009/09.09.22.01\n",
        ),
    ],
)
def test_outputs(capsys, url, out):
    assert run(capsys, url) == (0, out, "")


def test_client_information(capsys):
    code, out, _ = run(
        capsys,
        EXAMPLE_6_8,
        "--client-ip",
        "150.163.2.175",
        "--accept-language",
        "pt-br,fr;q=0.8,en;q=0.5,pt;q=0.3",
    )
    assert code == 0
    assert out.splitlines()[:2] == [  # Table 6.7
        "clientinformation.ipaddress 150.163.2.175",
        "clientinformation.languagepreference pt-br,fr;q=0.8,en;q=0.5,pt;q=0.3",
    ]
    names = [name for name, _ in parse_pairs(out)]
    assert names == sorted(names) and len(names) == 5


def test_base_with_a_path(capsys):
    code, out, _ = run(
        capsys, "https://example.org/ibi/LK47B6W/362SFKH!", "--base", "https://example.org/ibi/"
    )
    assert (code, out) == (
        0,
        "parsedibiurl.ibi LK47B6W/362SFKH\nparsedibiurl.verblist GetLastEdition\n",
    )


def test_non_ascii_path_is_escaped(capsys):
    code, out, _ = run(capsys, "http://urlib.net/LK47B6W/362SFKH/doc/Relat%f3rio%20Final.pdf")
    assert code == 0
    assert out.splitlines()[0] == "parsedibiurl.filepath /doc/Relat%C3%B3rio%20Final.pdf"


@pytest.mark.parametrize(
    "url, message",
    [
        (
            "http://urlib.net/LK47B6W/362SFKH:!",
            "ibistatic parse-url: invalid persistent URL 'http://urlib.net/LK47B6W/362SFKH:!': expected "
            "'(', '+', '/', '?' or end of persistent URL at character 34, found '!'\n"
            "    http://urlib.net/LK47B6W/362SFKH:!\n"
            "                                     ^\n",
        ),
        (
            "http://urlib.net/LK47B6W/362SFKH+(xx)",
            "ibistatic parse-url: invalid persistent URL 'http://urlib.net/LK47B6W/362SFKH+(xx)': expected "
            "an ISO 639-1 language code (Table A.1) at character 35, found 'x'\n"
            "    http://urlib.net/LK47B6W/362SFKH+(xx)\n"
            "                                      ^\n",
        ),
    ],
)
def test_bad_input_exits_2_with_a_caret(capsys, url, message):
    assert run(capsys, url) == (2, "", message)


def test_console_entry_point():
    done = subprocess.run(
        [sys.executable, "-m", "ibistatic", "parse-url", EXAMPLE_6_8],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "parsedibiurl.ibi LK47B6W/362SFKH",
        "parsedibiurl.requireditemstatus Original",
        "parsedibiurl.verblist {GetTranslation GetMetadata}",
    ]
