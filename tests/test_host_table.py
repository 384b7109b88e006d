"""docs/hosting.md's "Host by URL form" table is what the hosts answer (tests/host_table.py):
each host asked the fourteen forms with curl and with headless Chromium.  Rewrite the
table with ``IBISTATIC_WRITE_HOST_TABLE=1 python3 -m pytest tests/test_host_table.py``.
"""

from __future__ import annotations

import os

import pytest

from host_table import FORMS, HOSTS, ROOT, counts, docs_table, missing, observe, render, with_table

pytestmark = [pytest.mark.server, pytest.mark.browser]

DOCS = ROOT / "docs" / "hosting.md"


@pytest.fixture(scope="module")
def observed():
    why = missing()
    if why:
        pytest.skip(why)
    return observe()


def test_the_oracle_answers_each_form_as_its_label_says(observed):
    wanted = {label: cell.wanted for label, cell in observed["serve"].items()}
    assert wanted["deleted item (410)"] == (410, None)
    assert wanted["unknown IBI (404)"] == (404, None)
    assert all(status in (302, 303) for label, (status, _) in wanted.items() if "(4" not in label)
    assert len(FORMS) == 14 and list(observed) == list(HOSTS)


def test_the_servers_answer_every_form(observed):
    """serve, nginx, Apache and Cloudflare's worker answer every form themselves
    (docs/hosting.md); headless Chromium lands right on every host but S3 (a query on
    an emitted URL: S3 ignores it) and serve (its 410 body is no alert page)."""
    for host in ("serve", "nginx", "Apache", "Cloudflare"):
        assert counts(observed[host])[0] == len(FORMS), host
    for host in ("nginx", "Apache", "Cloudflare", "Netlify", "GitHub Pages"):
        assert counts(observed[host])[1] == len(FORMS), host


def test_the_docs_table_is_what_the_hosts_answer(observed):
    text = DOCS.read_text(encoding="utf-8")
    table = render(observed)
    if os.environ.get("IBISTATIC_WRITE_HOST_TABLE") == "1":
        DOCS.write_text(with_table(text, table), encoding="utf-8")
    assert docs_table(DOCS.read_text(encoding="utf-8")) == table
