"""A stand-alone catalog site, for ``ibistatic build`` with ``catalog: true``.

The catalog is an ordinary mkdocs site: a generated ``mkdocs.yml`` (plugins ``search``
and ``ibistatic``, the catalog at the root of the site) over an empty docs folder, built
with mkdocs' own build API into a staging folder that then replaces *out_dir* whole, so
a failed build never leaves a half-written catalog.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import yaml
from mkdocs.commands.build import build
from mkdocs.config import load_config as load_mkdocs_config
from mkdocs.exceptions import MkDocsException

from ..archive.load import LoadedArchives
from ..config import SiteConfig
from ..errors import ConfigError
from ..store.swap import publish_tree, staging_path

__all__ = ["build_catalog", "catalog_mkdocs_config"]

#: the style sheet added to the mkdocs theme's (colour contrast)
STYLE = Path(__file__).resolve().parent / "assets" / "ibistatic-catalog.css"


def catalog_mkdocs_config(config: SiteConfig, site_dir: Path) -> dict:
    """The mkdocs configuration of the catalog of *config*, built into *site_dir*.

    No mkdocs ``search`` plugin: the catalog's own search page (ibistatic.catalog.search)
    stays small at any size, where mkdocs' index grows with every item.  No
    highlight.js (the theme would load it from a CDN; the catalog shows no code), and
    a style sheet that gives the theme's text the contrast WCAG AA asks for.
    """
    return {
        "site_name": f"Catalog of {config.site_url}",
        "site_url": config.site_url + "catalog/",
        "docs_dir": "docs",
        "site_dir": str(site_dir),
        "use_directory_urls": True,
        "theme": {"name": "mkdocs", "highlightjs": False},
        "extra_css": [STYLE.name],
        "plugins": [
            {
                "ibistatic": {
                    "archives": [str(root) for root in config.archives],
                    "site_url": config.site_url,
                    "path": ".",
                }
            },
        ],
    }


def build_catalog(config: SiteConfig, out_dir: Path, loaded: LoadedArchives | None = None) -> int:
    """Write the complete catalog site of *config* into *out_dir* (replacing it).

    *loaded*: the Archives as the caller crawled them (a build has them already), else
    the plugin crawls them.  Returns the number of catalog pages.  Raises ConfigError
    when mkdocs fails.
    """
    out_dir = Path(out_dir).resolve()
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = staging_path(out_dir, "catalog")
    shutil.rmtree(staging, ignore_errors=True)
    try:
        pages = _build(config, staging, loaded)
        publish_tree(staging, out_dir)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return pages


def _build(config: SiteConfig, site_dir: Path, loaded: LoadedArchives | None) -> int:
    with tempfile.TemporaryDirectory(prefix="ibistatic-catalog-") as temp:
        project = Path(temp)
        (project / "docs").mkdir()
        shutil.copyfile(STYLE, project / "docs" / STYLE.name)
        config_file = project / "mkdocs.yml"
        config_file.write_text(
            yaml.safe_dump(catalog_mkdocs_config(config, site_dir), allow_unicode=True),
            encoding="utf-8",
        )
        try:
            mkdocs_config = load_mkdocs_config(str(config_file))
            mkdocs_config.plugins["ibistatic"].preloaded = loaded
            mkdocs_config.plugins.on_startup(command="build", dirty=False)
            try:
                build(mkdocs_config)
            finally:
                mkdocs_config.plugins.on_shutdown()
        except MkDocsException as error:
            raise ConfigError(f"catalog: mkdocs could not build it: {error}") from None
        plugin = mkdocs_config.plugins["ibistatic"]
        return plugin.page_count
