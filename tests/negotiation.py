"""Content negotiation and inflections as a client sees them, asked of a real engine
(``ibistatic serve``, nginx, Apache, ``wrangler pages dev``) on loopback: what
tests/test_real_servers.py and tests/test_host_cloudflare.py check on each."""

from __future__ import annotations

import http.client
import json
import time
import xml.etree.ElementTree as ElementTree
from urllib.parse import urlsplit

from ibistatic.core.exports import EXPORTS

ITEM = "LK47B6W/362SFKH"  # the sample's item with metadata (iconet.com.br/banon/2009/09.09.22.01)
REPOSITORY = "iconet.com.br/banon/2009/09.09.22.01"
TITLE = "Relatório de atividades 2009"
HOSTILE_ACCEPT = "application/x-bibtex;q=0.5," + "a/b;q=0.1;x=y," * 4700  # 64 KB


def ask(port: int, path: str, accept: str | None = None):
    """(status, headers (lower-case names), body) of GET `path`; no redirect followed."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", path, headers={"Accept": accept} if accept else {})
        response = connection.getresponse()
        body = response.read()
        headers = {}
        for name, value in response.getheaders():
            name = name.lower()
            headers[name] = headers[name] + ", " + value if name in headers else value
        return response.status, headers, body
    finally:
        connection.close()


def parses(name: str, body: bytes) -> bool:
    """Whether `body` is the export `name` of the sample item, as its readers take it."""
    text = body.decode("utf-8")
    if name == "cite.bib":
        return text.startswith("@misc{") and f"title = {{{TITLE}}}" in text
    if name == "cite.ris":
        lines = text.split("\r\n")
        return lines[0] == "TY  - GEN" and f"TI  - {TITLE}" in lines and lines[-2] == "ER  - "
    if name == "csl.json":
        return json.loads(text)[0]["title"] == TITLE
    if name == "record.jsonld":
        return json.loads(text)["name"] == TITLE
    return (
        ElementTree.fromstring(body).find("{http://purl.org/dc/elements/1.1/}title").text == TITLE
    )


def negotiation_problems(port: int, redirect: tuple[int, str]) -> list[str]:
    """What differs from the negotiation every engine must give on `port` for the sample
    item (`redirect`: the (status, Location) of its bare URL without Accept)."""
    problems = []

    def expect(what, got, wanted):
        if got != wanted:
            problems.append(f"{what}: got {got!r}, expected {wanted!r}")

    for export in EXPORTS:
        for media_type in export.accepts:
            status, headers, _ = ask(port, "/" + ITEM, media_type)
            location = headers.get("location", "")
            expect(
                media_type, (status, location.endswith(f"/{REPOSITORY}/{export.name}")), (303, True)
            )
            expect(f"{media_type} Vary", "accept" in headers.get("vary", "").lower(), True)
            status, headers, body = ask(port, urlsplit(location).path)
            expect(f"{export.name} status", status, 200)
            kind = headers.get("content-type", "").split(";")[0]
            expect(f"{export.name} type", kind, export.content_type.split(";")[0])
            expect(f"{export.name} parses", status == 200 and parses(export.name, body), True)
    for accept in (None, "text/html", "*/*", "text/html,application/xml;q=0.9,*/*;q=0.8"):
        status, headers, _ = ask(port, "/" + ITEM, accept)
        expect(f"Accept {accept}", (status, headers.get("location")), redirect)
    status, headers, _ = ask(port, "/" + ITEM, "text/html")
    expect("redirect Vary", "accept" in headers.get("vary", "").lower(), True)
    for accept, name in (
        ("application/x-bibtex;q=0.5, application/x-research-info-systems;q=0.8", "cite.ris"),
        ("text/html;q=0.9, application/ld+json", "record.jsonld"),
        ("application/xml, text/html;q=0.5", "oai_dc.xml"),
        ("application/x-bibtex;q=0.1, text/html", None),
        ("application/x-bibtex;q=0", None),
    ):
        status, headers, _ = ask(port, "/" + ITEM, accept)
        location = headers.get("location") or ""
        got = location.rpartition("/")[2] if status == 303 else None
        expect(f"Accept {accept}", got, name)
    started = time.monotonic()
    status, _, _ = ask(port, "/" + ITEM, HOSTILE_ACCEPT)
    expect("64 KB Accept answered", status in (302, 303, 400, 431, 494), True)
    expect("64 KB Accept in bounded time", time.monotonic() - started < 5, True)
    status, headers, _ = ask(port, f"/{ITEM}?info")
    expect(
        "?info",
        (status, urlsplit(headers.get("location", "")).path),
        (303, f"/record/{REPOSITORY}/"),
    )
    status, headers, _ = ask(port, f"/{ITEM}??")
    expect(
        "??",
        (status, urlsplit(headers.get("location", "")).path),
        (303, f"/metadata/{REPOSITORY}/"),
    )
    return problems
