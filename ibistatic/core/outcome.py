"""The outcome of a resolution: a URL or an alert, where it came from, what was followed.

Kept apart from the resolution process so that a cold lookup of a precomputed answer
imports nothing else of the core.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .relations import Relation

from .facts import ALERT_MESSAGES as _MESSAGES
from .facts import (
    ALERTS,
    ANSWER_ROW_FIELDS,
    CHAIN_GAP,
    CHAIN_HEAD,
    CHAIN_KEPT,
    CHAIN_TAIL,
    MAX_HOPS,
)

__all__ = ["Resolution", "ALERTS", "MAX_HOPS", "kept_chain", "row_of", "from_row"]


@dataclass(frozen=True, slots=True)
class Resolution:
    """The outcome: a URL, or an alert; where it came from; the IBIs followed."""

    url: str | None
    alert: str | None
    archive: str | None = None  # the Archive's name (its directory)
    address: str | None = None  # its archiveaddress
    state: str | None = None
    ibi: str | None = None  # the IBI whose URL was returned (after editions/translations)
    content_type: str | None = None
    chain: tuple[str, ...] = ()  # every IBI asked, in order
    relation: str = ""  # the relation finally answered, e.g. '.metadata(oai_dc)'
    message: str = ""
    #: the relation the request asked for (its modifier or verb list), before any
    #: following: what decides the HTTP answer (core.http); not part of the JSON
    asked: Relation = ()

    def as_json(self) -> dict:
        return {
            "url": self.url,
            "alert": self.alert,
            "archive": self.archive,
            "archiveaddress": self.address,
            "state": self.state,
            "ibi": self.ibi,
            "contenttype": self.content_type,
            "chain": list(self.chain),
            "relation": self.relation,
            "message": self.message,
        }


def kept_chain(chain: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """The ``chain`` a Resolution keeps of the IBIs asked: all of them up to CHAIN_KEPT,
    else the first and the last few around one entry that counts those left out
    (core.facts), so that no answer grows with the length of an edition chain."""
    if len(chain) <= CHAIN_KEPT:
        return tuple(chain)
    left_out = len(chain) - CHAIN_HEAD - CHAIN_TAIL
    return (*chain[:CHAIN_HEAD], CHAIN_GAP.format(left_out), *chain[-CHAIN_TAIL:])


def _alert(alert: str, chain: list[str], **known) -> Resolution:
    return Resolution(None, alert, chain=kept_chain(chain), message=_MESSAGES[alert], **known)


ROW_FIELDS = ANSWER_ROW_FIELDS


def row_of(resolution: Resolution) -> list:
    return [
        getattr(resolution, name) if name != "chain" else list(resolution.chain)
        for name in ROW_FIELDS
    ]


def from_row(row: list, asked: str, steps: Relation = ()) -> Resolution:
    """A precomputed answer for the IBI as `asked` (the chain starts with it) with the
    modifier whose steps are `steps`."""
    fields = dict(zip(ROW_FIELDS, row))
    computed_for = fields.pop("chain")
    chain = tuple([asked] + computed_for[1:])
    alert = fields["alert"]
    # an alert about the IBI asked itself, in the first round, names it as asked (a deleted
    # item: as stored), as resolve() does; a later round's IBI (`!` that found the item its
    # own last edition) is named as the Archive stores it
    if alert and alert != "deleted" and computed_for == [fields["ibi"]]:
        fields["ibi"] = asked
    return Resolution(**fields, chain=chain, message=_MESSAGES[alert] if alert else "", asked=steps)
