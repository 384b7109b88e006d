"""GitHub Pages: no server redirects at all, so the pages and ``404.html`` answer
(in the browser); ``.nojekyll`` keeps Jekyll from dropping the ``_``-folders; the
published site may be at most 1 GB, and a file in a repository at most 100 MiB."""

from __future__ import annotations

from .limits import TreeLimits

__all__ = ["TREE_LIMITS"]

TREE_LIMITS = TreeLimits(
    "github-pages",
    bytes=1_000_000_000,
    file_bytes=100 * 1024 * 1024,
    source="GitHub Pages: published sites of at most 1 GB, files of at most 100 MiB",
)
