"""The validated model of Archives and items (archive-format.md), as immutable values.

Raw YAML mappings become these types in ``ibistatic.archive.descriptors``; everything
downstream (storage model, property lists, index, site) reads only these.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import quote

from .facts import STATES, URL_PATH_SAFE
from .identifiers import Ibi, Ibip, RepositoryName, pickled_as_call
from .relations import Relation

__all__ = [
    "STATES",
    "CONTENT_TYPES",
    "DEFAULT_FILE_URL",
    "DEFAULT_FILE_LIST_URL",
    "DEFAULT_METADATA_URL",
    "ArchiveInfo",
    "Item",
    "quote_path",
    "split_query",
    "ibi_forms_of",
]

CONTENT_TYPES = ("Data", "Metadata")

DEFAULT_FILE_URL = "http://{address}/col/{repository}/doc/{path}"
#: pages ibistatic publishes itself: the file list and inline Dublin Core metadata
DEFAULT_FILE_LIST_URL = "{site}files/{repository}/"
DEFAULT_METADATA_URL = "{site}metadata/{repository}/"
DEFAULT_OAI_DC_URL = "{site}metadata/{repository}/oai_dc.xml"

_PATH_SAFE = URL_PATH_SAFE  # RFC 3986 pchar and "/"
#: a path quote() would give back as it is (most are): checked sooner than quoted
_QUOTED = re.compile("[A-Za-z0-9_.~" + re.escape(_PATH_SAFE) + "]*\\Z")


def quote_path(path: str) -> str:
    """Percent-encode a file path inside ``doc/`` as UTF-8 (RFC 3986), keeping ``/``."""
    return path if _QUOTED.match(path) else quote(path, safe=_PATH_SAFE)


def split_query(value: str) -> tuple[str, str]:
    """Split a ``target``/``formats`` value into its file and its query.

    ibistatic's documented extension of the format: text after the first ``?`` is a query
    appended verbatim to the file's URL (``metadata.cgi?choice=oai_dc``, Example 7.2).
    """
    path, sep, query = value.partition("?")
    return path, (sep + query) if sep else ""


@dataclass(frozen=True)
class ArchiveInfo:
    """archive.yaml, validated."""

    name: str  # how problems and the index name this Archive (its directory name)
    address: str
    service_ibi: RepositoryName
    service_ibip: Ibip | None = None
    platform_ibi: Ibi | None = None
    file_url: str = DEFAULT_FILE_URL
    file_list_url: str = DEFAULT_FILE_LIST_URL
    relations: tuple[Relation, ...] | None = None  # None: the default (every answerable one)
    #: how the Archive's pair lists write non-ASCII characters as %hh (Table 4.2 leaves
    #: "o sistema de codificação adotado" to the Archive): "utf-8" or "iso-8859-1"
    pair_list_charset: str = "utf-8"

    def service_forms(self) -> tuple[str, ...]:
        return ibi_forms_of(self.service_ibi, self.service_ibip)


@dataclass(frozen=True, slots=True)
class Item:
    """One uniform repository of one Archive: its item.yaml plus what doc/ holds."""

    archive: str
    repository: RepositoryName
    state: str
    timestamp: str  # ISO 8601 UTC, 'YYYY-MM-DDThh:mm:ssZ'
    ibip: Ibip | None = None
    content_type: str = "Data"
    target: str | None = None  # path inside doc/, optionally '?query'
    language: str | None = None
    translations: tuple[tuple[str, Ibi], ...] = ()
    next_edition: Ibi | None = None
    metadata: Ibi | None = None
    formats: tuple[tuple[str, str], ...] = ()
    dublin_core: tuple[tuple[str, tuple[str, ...]], ...] = ()
    transferable: bool = True
    files: tuple[str, ...] = field(default=(), compare=False)
    reason: str | None = None  # why a Deleted item was removed (its tombstone says it)
    #: what the crawl saw of doc/'s files (names, sizes, mtimes, digested): a document
    #: rewritten under its name changes it, and with it the file list's sizes and sums
    files_stamp: str = field(default="", compare=False)

    __reduce__ = pickled_as_call

    @property
    def key(self) -> str:
        return self.repository.key

    def keys(self) -> tuple[str, ...]:
        """Every index key this item answers to (both IBI forms)."""
        return (self.repository.key, self.ibip.key) if self.ibip else (self.repository.key,)

    def forms(self) -> tuple[str, ...]:
        """The formas-de-ibi value (Table 7.4) naming this item with every form it has."""
        return ibi_forms_of(self.repository, self.ibip)

    def format_file(self, name: str) -> str | None:
        return dict(self.formats).get(name)

    def title(self) -> str | None:
        for key, values in self.dublin_core:
            if key == "title" and values:
                return values[0]
        return None


def ibi_forms_of(repository: Ibi | None, ibip: Ibi | None = None) -> tuple[str, ...]:
    """('rep', R, 'ibip', P) with whichever forms are known (Table 7.4 formas-de-ibi)."""
    forms: list[str] = []
    for ibi in (repository, ibip):
        if ibi is not None:
            forms += ["rep" if ibi.form == "repository" else "ibip", ibi.text]
    return tuple(forms)
