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
KNOWN_KEYS = ("site-url", "archives", "output", "modifiers", "catalog", "cache")


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
    from .archive.safe_yaml import DescriptorError, parse_descriptor, read_regular_file
    from .errors import printable

    path = find_config(path)
    shown = printable(str(path))
    try:
        raw = parse_descriptor(read_regular_file(path))
    except FileNotFoundError:
        raise ConfigError(f"{shown}: no such configuration file") from None
    except OSError as error:
        raise ConfigError(f"{shown}: an unreadable configuration file ({error.strerror})") from None
    except DescriptorError as error:
        expected = error.expected or "a YAML mapping with site-url and archives"
        raise ConfigError(printable(f"{shown}: {error.found}; expected {expected}")) from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{shown}: expected a mapping with site-url and archives")
    return _validated(path, raw, output)


def _found(value) -> str:
    """A configuration value in a message: short, one line."""
    from .errors import printable

    text = repr(value)
    return printable(text if len(text) <= 80 else text[:80] + "...")


def _site_url_ok(value) -> bool:
    if not isinstance(value, str) or any(ord(ch) <= 0x20 or 0x7F <= ord(ch) <= 0x9F for ch in value):
        return False
    try:
        parts = urlsplit(value)
    except ValueError:  # such as an unclosed '[' in the host
        return False
    return parts.scheme in ("http", "https") and bool(parts.netloc) and not parts.query and not parts.fragment


def _validated(path: Path, raw: dict, output: str | Path | None) -> SiteConfig:
    from .errors import printable

    base, config_file = path.parent, path
    site_url = raw.get("site-url")
    path = printable(str(path))  # from here on only shown in messages
    if not _site_url_ok(site_url):
        raise ConfigError(f"{path}: site-url: found {_found(site_url)}; expected an absolute http(s) URL such as https://ibi.example.org/ (no query or fragment)")
    archives = raw.get("archives")
    if not isinstance(archives, list) or not archives or not all(isinstance(a, str) and a.strip() and "\x00" not in a for a in archives):
        raise ConfigError(f"{path}: archives: found {_found(archives)}; expected a list of archive directories")
    names = [Path(a).name for a in archives]
    duplicate = next((n for n in names if names.count(n) > 1), None)
    if duplicate:
        raise ConfigError(f"{path}: archives: two archives are named {_found(duplicate)}; expected distinct directory names (they name the Archives in the index)")
    out = output if output is not None else raw.get("output", "site")
    if not isinstance(out, (str, Path)) or "\x00" in str(out) or not str(out).strip():
        raise ConfigError(f"{path}: output: found {_found(out)}; expected a directory")
    modifiers = raw.get("modifiers", "default")
    if not (modifiers in ("default", "all") or (isinstance(modifiers, list) and all(isinstance(m, str) for m in modifiers))):
        raise ConfigError(f"{path}: modifiers: found {_found(modifiers)}; expected default, all, or a list of modifiers such as '!' and ':(oai_dc)'")
    catalog = raw.get("catalog", False)
    if not isinstance(catalog, bool):
        raise ConfigError(f"{path}: catalog: found {_found(catalog)}; expected true or false")
    cache = raw.get("cache")
    if cache is not None and not (isinstance(cache, str) and cache.strip() and "\x00" not in cache):
        raise ConfigError(f"{path}: cache: found {_found(cache)}; expected a directory")
    return SiteConfig(
        site_url=site_url if site_url.endswith("/") else site_url + "/",
        archives=tuple((base / a).resolve() for a in archives),
        output=_output_path(Path.cwd() / out if output is not None else base / out),
        path=config_file.resolve(),
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
