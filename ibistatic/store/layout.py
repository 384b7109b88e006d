"""Where a build may publish, and the layout of what it publishes.

The output path is a symbolic link to one of (at most) two *generations*, complete site
trees kept in a hidden folder beside it::

    site -> .site.ibistatic/g17a0c3e5d2b4f1c8   the served tree
    .site.ibistatic/g17a0c3e5d2b4f1c8/        the live generation
    .site.ibistatic/g17a0c3e1f07a9e40/        the spare one, one update behind
    .site.ibistatic-cache/                    crawl cache and build state (not served)

A build writes a generation that nobody serves, then points the link at it with one
rename, so the served tree is always a whole site (see ``swap.py``).

A build never replaces what it did not make: the output must be missing, an empty
folder, a link into its generations folder, or a folder holding :data:`MARKER` (a site
published by an older version, as a plain folder).  Refusals raise OutputError.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..config import SiteConfig
from ..errors import OutputError

__all__ = [
    "MARKER",
    "MARKER_TEXT",
    "check_output",
    "generations",
    "live_generation",
    "write_marker",
]

#: in every published tree: tells a site ibistatic may replace from someone else's folder
MARKER = "_ibistatic/ibistatic-site.txt"
MARKER_TEXT = (
    "This folder is a site published by ibistatic. `ibistatic build` replaces it whole:\n"
    "keep nothing else here.\n"
)


def generations(output: Path) -> Path:
    """The folder of `output`'s generations, beside it (never inside the served tree)."""
    return output.parent / f".{output.name}.ibistatic"


def live_generation(output: Path) -> str | None:
    """The name of the generation `output` links to; None when it is no such link."""
    try:
        target = os.readlink(output)
    except OSError:
        return None
    folder, _, name = target.rpartition("/")
    if folder != generations(output).name or not name.startswith("g"):
        return None
    return name


def write_marker(tree: Path) -> None:
    (tree / MARKER).parent.mkdir(parents=True, exist_ok=True)
    (tree / MARKER).write_text(MARKER_TEXT, encoding="utf-8")


def check_output(config: SiteConfig) -> None:
    """Raise OutputError when `config.output` is not a folder a build may replace."""
    reason = _refusal(config)
    if reason is not None:
        raise OutputError(f"refusing to publish into {config.output}: {reason}")


def _refusal(config: SiteConfig) -> str | None:
    output = config.output
    return _kind_refusal(output) or _inputs_refusal(config, output) or _content_refusal(output)


def _kind_refusal(output: Path) -> str | None:
    if output.is_symlink():
        if live_generation(output) is None:
            return (
                f"it is a symbolic link ibistatic did not make (to {os.readlink(output)}); "
                f"expected a link into {generations(output).name}/"
            )
        return None
    if output.exists() and not output.is_dir():
        return "it is a file, not a folder; expected a new folder or a site ibistatic published"
    return None


def _inputs_refusal(config: SiteConfig, output: Path) -> str | None:
    """The configuration, the Archives and the cache are never published or replaced."""
    if config.path is not None and _within(config.path.parent, output):
        what = "is" if config.path.parent == output else "contains"
        return f"it {what} the folder of the configuration {config.path}"
    for archive in config.archives:
        if _within(archive, output):
            what = "is" if archive == output else "contains"
            return f"it {what} the Archive {archive}"
        if _within(output, archive):
            return f"it is inside the Archive {archive}"
    if config.cache is not None and _within(config.cache, output):
        return (
            f"it contains the cache folder {config.cache}; caches live outside the published site"
        )
    return None


def _content_refusal(output: Path) -> str | None:
    if output.is_symlink() or not output.is_dir():
        return None
    if (output / MARKER).is_file() or _legacy_site(output):
        return None
    with os.scandir(output) as entries:
        if next(entries, None) is None:
            return None
    return (
        f"it is a folder that ibistatic did not publish (it is not empty and has no {MARKER}); "
        "remove it or choose another --output"
    )


def _legacy_site(output: Path) -> bool:
    """A site published as a plain folder before the marker existed."""
    return (output / "index" / "manifest.json").is_file() and (output / "_ibistatic").is_dir()


def _within(path: Path, folder: Path) -> bool:
    """`path` is `folder` or inside it."""
    return path == folder or folder in path.parents
