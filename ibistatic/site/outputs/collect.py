"""The writer interface of site.pages (``write(relative, text)``), collecting Files."""

from __future__ import annotations

from ...store.files import File


class Collected:
    def __init__(self, owner: str | None = None) -> None:
        self.owner = owner  # the repository key of the item whose pages these are
        self.files: list[File] = []

    def write(self, relative: str, text: str) -> bool:
        self.files.append(File(relative, text, owner=self.owner))
        return True
