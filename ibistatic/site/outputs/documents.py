"""Documents: the ``doc/`` files of the items whose Archive has no server of its own,
published inside the site at ``col/<repository>/doc/<file>``, where a URLib Archive
serves them (so their URLs stay when the Archive later gets a server of its own).

An Archive's files are published here when its ``file-url`` gives, for a file, a URL of
the site at that path: ``{site}col/{repository}/doc/{path}``, or
``https://{address}/col/{repository}/doc/{path}`` with the site's own host as `address`
(what ``ibistatic init`` writes).  Each document is a hard link to its one copy in the
build's documents folder (store/documents.py).  A ``file-url`` into the site anywhere
else names files nothing publishes: the build warns (site/build.py, document_warnings).
"""

from __future__ import annotations

from collections.abc import Iterator

from ...core.properties import documents_folder
from ...store.documents import Documents
from ...store.files import File
from ..pages import check_relative, site_file

#: the folder of the cache that holds the documents' copies
DOCUMENTS_FOLDER = "documents"


class DocumentFiles:
    name = "documents"
    pages = False
    remembered = True

    def files(self, plan, context) -> Iterator[File]:
        site_url = context.site.site_url
        documents = Documents(
            context.config.cache_dir / DOCUMENTS_FOLDER, context.site.file_sums.size_and_sum
        )
        for key in context.keys:
            for item, _ in plan.items[key]:
                root = context.site.roots.get(item.archive)
                if root is None or item.state == "Deleted":
                    continue
                folder = f"{root}/{item.repository.text}/doc/"
                for path, url in context.urls(item).get("files", {}).items():
                    relative = published_path(site_url, item.repository.text, url)
                    if relative is None:
                        continue
                    check_relative(relative)
                    linked = documents.take(folder + path)
                    if linked is not None:
                        yield File(relative, linked, owner=key)


def published_path(site_url: str, repository: str, url: str | None) -> str | None:
    """Where in the site the file at `url` of `repository` is published, or None when
    the site does not publish it (it is not below the repository's col/<IBI>/doc/)."""
    relative = site_file(site_url, url)
    if relative is None or not relative.startswith(documents_folder(repository)) or "?" in url:
        return None
    return relative


OUTPUT = DocumentFiles()
