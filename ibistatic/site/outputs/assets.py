"""``assets/``: the style sheet and ``resolve.js`` (the in-browser resolver), copied into
every new generation (an update keeps them: the templates are in the build's fingerprint)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ...store.files import Tree
from ..assets import copy_assets


class Assets:
    name = "assets"
    pages = False
    remembered = False

    def files(self, plan, context) -> Iterator[Tree]:
        if plan.full:
            yield Tree("assets", _copy)


def _copy(folder: Path) -> None:
    copy_assets(folder.parent)  # copy_assets makes <site>/assets


OUTPUT = Assets()
