"""The Archive service of resolution-system §7 (MONTARRESPOSTA) over HTTP.

``/<archive service IBI>?servicesubject=...`` gets a ``text/plain`` pair list as Table 4.2
writes it (CRLF between pairs, nothing after the last; zero bytes for an IBI the Archive
does not hold).  A query that does not parse (``%zz``, a pair without ``=``, ``&&``), an
unknown ``servicesubject`` or a verb list that does not parse gets ``400`` with a
``text/plain`` message instead.

:class:`ArchiveService` is the service of a served site that counts accesses: its
urlkeys are unguessable, expire and are spent by the one acknowledgment they serve; an
acknowledgment with any other key gets ``400`` (the seeds define no refusal), and each
accepted one is counted and logged (``ibistatic serve --ack-log``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from http import HTTPStatus
from urllib.parse import urlsplit

from ..core.identifiers import ibi_key
from ..core.pairlists import decode_query, wire_text
from ..core.properties import archive_response, new_urlkey
from ..errors import IbistaticError

__all__ = ["service_answer", "service_view", "ArchiveService"]


#: checks an acknowledgment's decoded pairs (and the client's address): None to accept
#: it, else the reason it is refused
Acknowledge = Callable[[Mapping[str, str], "str | None"], "str | None"]


def service_answer(
    views,
    target: str,
    urlkey=new_urlkey,
    filtered: bool = True,
    acknowledge: Acknowledge | None = None,
    client: str | None = None,
) -> tuple[HTTPStatus, str] | None:
    """(status, text) when `target` is /<service IBI>?servicesubject=... of one of the
    Archives in `views`, else None (the request is not for an Archive service).
    `acknowledge`, when given, decides whether an acknowledgment is accepted."""
    parts = urlsplit(target)
    if "servicesubject=" not in parts.query:
        return None
    view = service_view(views, parts.path)
    if view is None:
        return None
    try:
        query = dict(decode_query(parts.query))
        if acknowledge is not None and query.get("servicesubject") == "acknowledgment":
            refusal = acknowledge(query, client)
            if refusal is not None:
                return HTTPStatus.BAD_REQUEST, f"bad service request: {refusal}\r\n"
        return HTTPStatus.OK, wire_text(archive_response(view, query, urlkey, filtered))
    except IbistaticError as error:
        message = str(error).splitlines()[0]
        return HTTPStatus.BAD_REQUEST, "bad service request: " + message + "\r\n"


def service_view(views, path: str):
    """The view of the Archive whose service IBI is `path` (``/<IBI>``), or None."""
    try:
        key = ibi_key(path.lstrip("/"))
    except IbistaticError:
        return None
    for view in views:
        info = view.info
        if key == info.service_ibi.key or (info.service_ibip and key == info.service_ibip.key):
            return view
    return None


class ArchiveService:
    """The Archive service of a served site, with access counting.

    Call it as ``service(views, target, client)``: the answer of :func:`service_answer`
    with urlkeys from `keys` (a :class:`~ibistatic.federation.acks.UrlKeys`) and each
    acknowledgment of a key it issued counted in `log` (an
    :class:`~ibistatic.federation.acks.AckLog`).
    """

    def __init__(self, keys=None, log=None, filtered: bool = True) -> None:
        from ..federation.acks import AckLog, UrlKeys

        self.keys = keys if keys is not None else UrlKeys()
        self.log = log if log is not None else AckLog()
        self.filtered = filtered

    def __call__(self, views, target: str, client: str | None = None):
        return service_answer(views, target, self.keys, self.filtered, self.acknowledge, client)

    def acknowledge(self, query: Mapping[str, str], client: str | None) -> str | None:
        """None when the acknowledgment's urlkey was issued here, unexpired and unspent
        (then it is counted), else why it is refused."""
        from ..federation.acks import ack_record

        key = query.get("urlkey", "")
        try:
            record = ack_record(query, client, time.time())
        except IbistaticError as error:
            return str(error)
        if not self.keys.spend(key):
            return f"urlkey {key!r} was not issued by this Archive, has expired or was used"
        self.log.add(record)
        return None
