"""The site configuration, ``ibistatic.yaml`` (archive-format.md, "The site configuration").

```yaml
site-url: https://ibi.example.org/
archives:          # in resolution order; paths relative to this file
  - sample_archive/mtc-m16c
  - sample_archive/mtc-m16d
output: site       # default: site
```
Further optional keys are documented in docs/configuration.md.  With no ``--config``
and no ``ibistatic.yaml`` in the current directory the bundled sample is used.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .errors import ConfigError

__all__ = ["SiteConfig", "load_config", "load_command_config", "find_config", "bundled_sample_config", "CONFIG_NAME"]

CONFIG_NAME = "ibistatic.yaml"
KNOWN_KEYS = ("site-url", "archives", "output", "modifiers", "catalog", "cache", "redirect-files")


@dataclass(frozen=True)
class SiteConfig:
    site_url: str  # always ends with "/"
    archives: tuple[Path, ...]
    output: Path
    path: Path | None = None  # the file it was read from
    modifiers: str | tuple[str, ...] = "default"
    catalog: bool = False
    cache: Path | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def cache_dir(self) -> Path:
        if self.cache is not None:
            return self.cache
        # beside the output, never inside the archives or the (possibly bundled) config
        return self.output.parent / f".{self.output.name}.ibistatic-cache"


def bundled_sample_config() -> Path:
    """The sample shipped in the source tree (the default of ``ibistatic build``)."""
    return Path(__file__).resolve().parent / "sample_archive" / CONFIG_NAME


def find_config(explicit: str | Path | None = None) -> Path:
    if explicit is not None:
        return Path(explicit)
    local = Path.cwd() / CONFIG_NAME
    return local if local.exists() else bundled_sample_config()


def load_config(path: str | Path | None = None, *, output: str | Path | None = None) -> SiteConfig:
    """Read and check a configuration; errors name the file and the key."""
    import yaml

    path = find_config(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such configuration file") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ConfigError(f"{path}: malformed YAML{where}: {getattr(error, 'problem', error)}") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: expected a mapping with site-url and archives")
    return _validated(path, raw, output)


def _validated(path: Path, raw: dict, output: str | Path | None) -> SiteConfig:
    base = path.parent
    site_url = raw.get("site-url")
    if not isinstance(site_url, str) or not urlsplit(site_url).scheme or not urlsplit(site_url).netloc:
        raise ConfigError(f"{path}: site-url: found {site_url!r}; expected an absolute URL such as https://ibi.example.org/")
    archives = raw.get("archives")
    if not isinstance(archives, list) or not archives or not all(isinstance(a, str) for a in archives):
        raise ConfigError(f"{path}: archives: found {archives!r}; expected a list of archive directories")
    names = [Path(a).name for a in archives]
    duplicate = next((n for n in names if names.count(n) > 1), None)
    if duplicate:
        raise ConfigError(f"{path}: archives: two archives are named {duplicate!r}; expected distinct directory names (they name the Archives in the index)")
    out = output if output is not None else raw.get("output", "site")
    if not isinstance(out, (str, Path)):
        raise ConfigError(f"{path}: output: found {out!r}; expected a directory")
    modifiers = raw.get("modifiers", "default")
    if not (modifiers in ("default", "all") or (isinstance(modifiers, list) and all(isinstance(m, str) for m in modifiers))):
        raise ConfigError(f"{path}: modifiers: found {modifiers!r}; expected default, all, or a list of modifiers such as '!' and ':(oai_dc)'")
    catalog = raw.get("catalog", False)
    if not isinstance(catalog, bool):
        raise ConfigError(f"{path}: catalog: found {catalog!r}; expected true or false")
    cache = raw.get("cache")
    return SiteConfig(
        site_url=site_url if site_url.endswith("/") else site_url + "/",
        archives=tuple((base / a).resolve() for a in archives),
        output=_output_path(Path.cwd() / out if output is not None else base / out),
        path=path.resolve(),
        modifiers=tuple(modifiers) if isinstance(modifiers, list) else modifiers,
        catalog=catalog,
        cache=(base / cache).resolve() if isinstance(cache, str) else None,
        extra={k: v for k, v in raw.items() if k not in KNOWN_KEYS},
    )


def _output_path(path: Path) -> Path:
    """`path` made absolute with its folders' links resolved, but not its own: the
    output is a link to the live generation of the site (site/outputs.py)."""
    path = Path(os.path.abspath(path))
    return path.parent.resolve() / path.name if path.name else path


def load_command_config(path: str | Path | None, output: str | Path | None) -> SiteConfig:
    """The configuration of `build` and `watch` (cli.md): `--config`, else ./ibistatic.yaml,
    else the bundled sample published into ./site."""
    local = path or (CONFIG_NAME if Path(CONFIG_NAME).exists() else None)
    if local is None and output is None:
        output = "site"
    return load_config(local, output=output)
