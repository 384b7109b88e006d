"""The Archive service of resolution-system §7 (MONTARRESPOSTA) over HTTP.

``/<archive service IBI>?servicesubject=...`` gets a ``text/plain`` pair list as Table 4.2
writes it (CRLF between pairs, nothing after the last; zero bytes for an IBI the Archive
does not hold).  A query that does not parse (``%zz``, a pair without ``=``, ``&&``), an
unknown ``servicesubject`` or a verb list that does not parse gets ``400`` with a
``text/plain`` message instead.

The service only answers; counting accesses is the federation's: an `acknowledge`
callable decides whether an acknowledgment is accepted (``federation/archive_side.py``
gives the one of ``ibistatic serve``).  A batch of acknowledgments (a POST, one a line:
docs/protocol.md) is read within :data:`ACK_BATCH_LINES` and :data:`ACK_BATCH_BYTES`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from http import HTTPStatus
from urllib.parse import urlsplit

from ..core.identifiers import ibi_key
from ..core.pairlists import decode_query, wire_text
from ..core.properties import archive_response, new_urlkey
from ..errors import IbistaticError

__all__ = ["service_answer", "service_view", "ACK_BATCH_LINES", "ACK_BATCH_BYTES"]

#: the most acknowledgments an Archive reads in one batch, and the most bytes of its body
#: (web/asgi.py stops reading there; a resolver's batches keep within both:
#: federation/wire.py's ack_batches)
ACK_BATCH_LINES = 1024
ACK_BATCH_BYTES = 1024 * 1024


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
