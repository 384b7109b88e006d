"""The top-level folders of a published site that are the site's own (its pages, assets
and index), as opposed to folders that begin an IBI (``sid.inpe.br/``, ``8JMKD3MGP8W/``).

A file below a folder of the site is served as it is; a file below any other folder is
a persistent URL's file path (``/<IBI>/index.html`` asks for the item's file
``index.html``), which ``serve`` resolves.  Known without listing the index: the build's
own folders and those of the page templates (an Archive's ``file-list-url`` inside the
site must be ``{site}files/{repository}/``: archive/descriptors.py).  ``serve`` and
``server-config`` (``serverconfs.static_folders``) both read it; a test checks every
top-level folder of a built site is one of these or begins an IBI the index holds."""

from __future__ import annotations

from ..core.model import DEFAULT_FILE_LIST_URL, DEFAULT_METADATA_URL, DEFAULT_OAI_DC_URL

__all__ = ["BUILD_FOLDERS", "SITE_FOLDERS"]

#: what the build's outputs write besides the item pages of the templates: assets/, the
#: JSON index, the record pages, the search, the catalog, host files kept private
BUILD_FOLDERS = ("assets", "index", "record", "search", "catalog", "_ibistatic")


def _first_folder(template: str) -> str:
    return template.removeprefix("{site}").split("/", 1)[0]


#: every top-level folder of a site that is the site's own (lower case)
SITE_FOLDERS = frozenset(
    BUILD_FOLDERS
    + tuple(
        _first_folder(template)
        for template in (DEFAULT_FILE_LIST_URL, DEFAULT_METADATA_URL, DEFAULT_OAI_DC_URL)
    )
)
