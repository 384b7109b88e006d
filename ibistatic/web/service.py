"""The Archive service of resolution-system §7 (MONTARRESPOSTA) over HTTP.

``/<archive service IBI>?servicesubject=...`` gets a ``text/plain`` pair list as Table 4.2
writes it (CRLF between pairs, nothing after the last; zero bytes for an IBI the Archive
does not hold).  A query that does not parse (``%zz``, a pair without ``=``, ``&&``), an
unknown ``servicesubject`` or a verb list that does not parse gets ``400`` with a
``text/plain`` message instead.
"""

from __future__ import annotations

from http import HTTPStatus
from urllib.parse import urlsplit

from ..core.identifiers import ibi_key
from ..core.pairlists import decode_query, wire_text
from ..core.properties import archive_response, new_urlkey
from ..errors import IbistaticError

__all__ = ["service_answer"]


def service_answer(
    views, target: str, urlkey=new_urlkey, filtered: bool = True
) -> tuple[HTTPStatus, str] | None:
    """(status, text) when `target` is /<service IBI>?servicesubject=... of one of the
    Archives in `views`, else None (the request is not for an Archive service)."""
    parts = urlsplit(target)
    if "servicesubject=" not in parts.query:
        return None
    try:
        key = ibi_key(parts.path.lstrip("/"))
    except IbistaticError:
        return None
    for view in views:
        info = view.info
        if key in {info.service_ibi.key} | (
            {info.service_ibip.key} if info.service_ibip else set()
        ):
            try:
                query = dict(decode_query(parts.query))
                return HTTPStatus.OK, wire_text(archive_response(view, query, urlkey, filtered))
            except IbistaticError as error:
                message = str(error).splitlines()[0]
                return HTTPStatus.BAD_REQUEST, "bad service request: " + message + "\r\n"
    return None
