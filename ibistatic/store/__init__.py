"""The store: where a build's files go, and how they are published (docs/architecture.md).

``files`` decides which files are written (first write of a path wins; a file whose bytes
the last build made already is not written again: 16-byte digests) and how (straight to
disk, a batch of lines at a time, or kept in memory); ``generations`` holds the trees a
build writes (a new generation, or the spare one brought level with the live one) and
publishes them atomically; ``store`` joins the two behind one small interface and renders
in forked processes.  ``layout`` says where a build may publish, ``swap`` replaces trees
atomically.  Nothing here knows what a page, an index or a catalog is.
"""
