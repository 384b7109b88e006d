"""The static search over every item (docs/site.md, "Search").

``tokens`` says which words find an item (mirrored by ``site_src/assets/search.js``),
``documents`` what is known and shown of each IBI, ``index`` the files a browser reads.
All three are pure; the build's ``search`` output (ibistatic.site.outputs.search) and
the mkdocs catalog write them.
"""

from __future__ import annotations

from .documents import Document, documents
from .index import SearchIndex, search_files

__all__ = ["Document", "documents", "SearchIndex", "search_files"]
