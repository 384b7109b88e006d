"""The site configuration, ``ibistatic.yaml`` (archive-format.md, "The site configuration").

```yaml
site-url: https://ibi.example.org/
archives:          # in resolution order; paths relative to this file
  - sample_archive/mtc-m16c
  - sample_archive/mtc-m16d
output: site       # default: site
```
Every key is declared once, in ``CONFIG_SCHEMA`` (its table in docs/configuration.md is
made from it); an unknown key is an error that names the key it probably meant.  With no ``--config``
and no ``ibistatic.yaml`` in the current directory the bundled sample is used.
"""

from __future__ import annotations

import dataclasses
import datetime
import os
import re
from dataclasses import dataclass, field, fields
from pathlib import Path
from urllib.parse import urlsplit

from .errors import ConfigError
from .schema import Field, Schema, host_fits, shown_value

__all__ = [
    "SiteConfig",
    "SiteIdentity",
    "load_config",
    "load_command_config",
    "find_config",
    "bundled_sample_config",
    "CONFIG_NAME",
    "CONFIG_SCHEMA",
    "HOST_NAMES",
    "check_hosts",
]

CONFIG_NAME = "ibistatic.yaml"
#: the languages of the pages' interface (site.i18n), the first the default
INTERFACE_LANGUAGES = ("en", "pt")


@dataclass(frozen=True)
class SiteIdentity:
    """Who publishes the site, shown on every page (docs/configuration.md, "Site identity")."""

    institution: str | None = None
    institution_url: str | None = None
    contact: str | None = None  # an e-mail address or an http(s) URL
    logo: str | None = None  # a URL, absolute or relative to site-url
    persistence_policy: str | None = None  # a sentence or two
    persistence_policy_url: str | None = None

    @property
    def contact_href(self) -> str | None:
        if self.contact is None:
            return None
        return self.contact if _http_url(self.contact) else "mailto:" + self.contact


#: the keys of ibistatic.yaml that make its SiteIdentity (their model names)
IDENTITY_FIELDS = tuple(f.name for f in fields(SiteIdentity))


@dataclass(frozen=True)
class SiteConfig:
    site_url: str  # always ends with "/"
    archives: tuple[Path, ...]
    output: Path
    path: Path | None = None  # the file it was read from
    modifiers: str | tuple[str, ...] = "default"
    catalog: bool = False
    cache: Path | None = None
    hosts: tuple[str, ...] = ()  # the host profiles chosen (site/hosts/); () the portable output
    jobs: int | None = None  # processes a build is shared among; None: the CPUs it may use
    alert_pages: bool | None = None  # a page for each URL answered with an alert; None: by hosts
    redirect_pages: bool | None = None  # a page for each URL answered with a URL; None: by hosts
    identity: SiteIdentity = field(default_factory=SiteIdentity)
    language: str = "en"  # the interface's default language (site.i18n)
    templates: Path | None = None  # a folder of templates overriding the bundled ones

    @property
    def writes_alert_pages(self) -> bool:
        """`alert-pages`, or when it is not set, whether no host is chosen: every host
        profile serves `404.html` for a missing page (whose in-browser resolver shows the
        same alert), but the portable output may land on a host that does not."""
        return self.alert_pages if self.alert_pages is not None else not self.hosts

    @property
    def writes_redirect_pages(self) -> bool:
        """`redirect-pages`, or when it is not set, whether some chosen host (or the
        portable output) may serve a persistent URL from its page: hosts that answer
        every one themselves (SELF_ANSWERING_HOSTS) never read those pages."""
        if self.redirect_pages is not None:
            return self.redirect_pages
        return not self.hosts or not set(self.hosts) <= set(SELF_ANSWERING_HOSTS)

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
        where = f"{shown}: {error.key}" if error.key else shown
        raise ConfigError(printable(f"{where}: {error.found}; expected {expected}")) from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{shown}: expected a mapping with site-url and archives")
    return _validated(path, raw, output)


def _found(value) -> str:
    """A configuration value in a message: short, one line."""
    from .errors import printable

    text = shown_value(value) if isinstance(value, datetime.date) else repr(value)
    return printable(text if len(text) <= 80 else text[:80] + "...")


class _Report:
    """The problems of one ibistatic.yaml, all of them, one line each, in the order found."""

    def __init__(self, shown_path: str) -> None:
        self.path = shown_path
        self.lines: list[str] = []

    def error(self, key: str, found: str, expected: str) -> None:
        from .errors import printable

        self.lines.append(printable(f"{self.path}: {key}: {found}; expected {expected}"))

    def missing(self, key: str, expected: str) -> None:
        self.error(key, "found nothing", f"{expected} (a required key)")

    def unknown(self, key: str, expected: str) -> None:
        # an error, unlike in the descriptors: a misspelt key would silently do nothing
        self.error(key, "an unknown key", expected)


def _is_directory_name(value) -> bool:
    return isinstance(value, (str, Path)) and "\x00" not in str(value) and bool(str(value).strip())


#: a folder's path, made absolute, at most: the site's pages go up to about 1,500 bytes
#: deeper, and Linux allows 4,096 bytes a path
MAX_FOLDER_PATH = 2048
#: a name in a folder's path, at most: file systems allow 255 bytes, and the output's
#: generations folder beside it (``.<output>.ibistatic``) adds 11
MAX_FOLDER_NAME = 240


def _path_problem(path: Path) -> str | None:
    """Why the file system could not hold the folder `path` (absolute) and what goes
    into it, or None."""
    size = len(os.fsencode(path))
    if size > MAX_FOLDER_PATH:
        return f"a path of {size:,} bytes"
    longest = max(path.parts, key=lambda part: len(os.fsencode(part)))
    if len(os.fsencode(longest)) > MAX_FOLDER_NAME:
        return f"a name of {len(os.fsencode(longest)):,} bytes ({_found(longest[:20])}...)"
    return None


def _folder(report: _Report, key: str, value, path: Path) -> Path | None:
    """`path` (given as `value`), or None with the error when it is too long to use."""
    why = _path_problem(path)
    if why is None:
        return path
    report.error(
        key,
        f"found {_found(value)}, {why}",
        f"a folder of at most {MAX_FOLDER_PATH:,} bytes, {MAX_FOLDER_NAME} a name",
    )
    return None


# --- validators (report, key, value, context -> the value); context: base, output_base --


def _site_url(report: _Report, key: str, value, context: dict) -> str | None:
    if not _site_url_ok(value):
        report.error(key, f"found {_found(value)}", SITE_URL)
        return None
    return value if value.endswith("/") else value + "/"


def _site_url_ok(value) -> bool:
    if not isinstance(value, str) or any(
        ord(ch) <= 0x20 or 0x7F <= ord(ch) <= 0x9F for ch in value
    ):
        return False
    try:
        parts = urlsplit(value)
    except ValueError:  # such as an unclosed '[' in the host
        return False
    return (
        parts.scheme in ("http", "https")
        and bool(parts.netloc)
        and not parts.query
        and not parts.fragment
        and _host_fits(parts)
        and BAD_ESCAPE.search(value) is None
    )


def _archives(report: _Report, key: str, value, context: dict) -> tuple[Path, ...] | None:
    if (
        not isinstance(value, list)
        or not value
        or not all(isinstance(a, str) and _is_directory_name(a) for a in value)
    ):
        report.error(key, f"found {_found(value)}", "a list of archive directories")
        return None
    names = [Path(a).name for a in value]
    seen: set[str] = set()  # a set: names.count per name was quadratic in the list
    duplicate = next((n for n in names if n in seen or seen.add(n)), None)
    if duplicate:
        report.error(
            key,
            f"two archives are named {_found(duplicate)}",
            "distinct directory names (they name the Archives in the index)",
        )
        return None
    folders = tuple(_folder(report, key, a, (context["base"] / a).resolve()) for a in value)
    return None if None in folders else folders


def _output(report: _Report, key: str, value, context: dict) -> Path | None:
    if not _is_directory_name(value):
        report.error(key, f"found {_found(value)}", "a directory")
        return None
    return _folder(report, key, value, _output_path(context["output_base"] / value))


#: the longest modifier of `modifiers`: it follows the last part of an IBI in a page's
#: name, and the two must fit a file name (archive.descriptors.MAX_IBI_LAST_SEGMENT)
MAX_MODIFIER = 64


def _modifiers(report: _Report, key: str, value, context: dict) -> str | tuple[str, ...] | None:
    from .core.relations import parse_modifier
    from .errors import IbiSyntaxError

    if value in ("default", "all"):
        return value
    expected = "default, all, or a list of modifiers such as '!' and ':(oai_dc)'"
    if not isinstance(value, list) or not all(isinstance(m, str) for m in value):
        report.error(key, f"found {_found(value)}", expected)
        return None
    for index, text in enumerate(value):
        try:
            parse_modifier(text)
        except IbiSyntaxError as error:
            found = f"found {_found(text)} ({error.found} at character {error.position + 1})"
            report.error(
                f"{key}[{index}]", found, f"a modifier of Table 6.1: {error.expected} there"
            )
            return None
        if len(text) > MAX_MODIFIER:
            found = f"found {_found(text)} ({len(text):,} characters)"
            report.error(
                f"{key}[{index}]", found, f"a modifier of at most {MAX_MODIFIER} characters"
            )
            return None
    return tuple(dict.fromkeys(value))  # each page once


def _boolean(report: _Report, key: str, value, context: dict) -> bool | None:
    if not isinstance(value, bool):
        report.error(key, f"found {_found(value)}", "true or false")
        return None
    return value


def _jobs(report: _Report, key: str, value, context: dict) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        report.error(key, f"found {_found(value)}", "a whole number of processes, 1 or more")
        return None
    return value


def _text(report: _Report, key: str, value, context: dict) -> str | None:
    if not isinstance(value, str) or not value.strip():
        report.error(key, f"found {_found(value)}", "a text")
        return None
    return value.strip()


#: a '%' that does not start a %hh escape: decoding the URL (a browser's script) fails
BAD_ESCAPE = re.compile("%(?![0-9A-Fa-f]{2})")


def _host_fits(parts) -> bool:
    """Whether the URL's host and port are ones a client can ask (DNS's and TCP's limits)."""
    try:
        port = parts.port  # ValueError out of 0-65535
    except ValueError:
        return False
    return port != 0 and host_fits(parts.hostname or "")


def _http_url(value) -> bool:
    try:
        parts = urlsplit(value)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.netloc) and _host_fits(parts)


def _url(report: _Report, key: str, value, context: dict) -> str | None:
    if not isinstance(value, str) or not _http_url(value) or any(ord(c) <= 0x20 for c in value):
        report.error(key, f"found {_found(value)}", "an absolute http(s) URL")
        return None
    return value


def _contact(report: _Report, key: str, value, context: dict) -> str | None:
    if isinstance(value, str) and (_http_url(value) or EMAIL.fullmatch(value)):
        return value
    report.error(key, f"found {_found(value)}", "an e-mail address or an http(s) URL")
    return None


def _logo(report: _Report, key: str, value, context: dict) -> str | None:
    relative = isinstance(value, str) and RELATIVE_URL.fullmatch(value) is not None
    if relative or (isinstance(value, str) and _http_url(value)):
        return value
    report.error(
        key, f"found {_found(value)}", "an http(s) URL or a path relative to site-url (logo.svg)"
    )
    return None


def _language(report: _Report, key: str, value, context: dict) -> str | None:
    if value in INTERFACE_LANGUAGES:
        return value
    report.error(key, f"found {_found(value)}", "one of " + ", ".join(INTERFACE_LANGUAGES))
    return None


def _templates(report: _Report, key: str, value, context: dict) -> Path | None:
    if not (isinstance(value, str) and _is_directory_name(value)):
        report.error(key, f"found {_found(value)}", "a folder of templates")
        return None
    folder = _folder(report, key, value, (context["base"] / value).resolve())
    if folder is None:
        return None
    if not folder.is_dir():
        report.error(key, f"found {_found(value)}, which is not a folder", "a folder of templates")
        return None
    return folder


def _cache(report: _Report, key: str, value, context: dict) -> Path | None:
    if not (isinstance(value, str) and _is_directory_name(value)):
        report.error(key, f"found {_found(value)}", "a directory")
        return None
    return _folder(report, key, value, (context["base"] / value).resolve())


#: the host profiles (ibistatic.site.hosts, docs/hosting.md), in the documentation's order
HOST_NAMES = ("github-pages", "netlify", "cloudflare-pages", "nginx", "apache", "s3")
#: hosts that answer every persistent URL themselves, never from its page: Cloudflare
#: Pages by its _worker.js, nginx and Apache by their rules and `ibistatic serve` behind
#: them (docs/hosting.md); Netlify keeps the pages (past 10,000 rules it may not apply them all)
SELF_ANSWERING_HOSTS = ("cloudflare-pages", "nginx", "apache")
#: hosts that read the same file in syntaxes the other rejects (Cloudflare Pages rejects
#: Netlify's forced "302!" and "410" rules): one output cannot serve both
EXCLUSIVE_HOSTS = (("netlify", "cloudflare-pages"),)


def check_hosts(hosts) -> None:
    """Raise ConfigError for hosts that cannot share one published tree."""
    for first, second in EXCLUSIVE_HOSTS:
        if first in hosts and second in hosts:
            raise ConfigError(
                f"hosts: {first} and {second} read _redirects in two syntaxes that each "
                f"rejects of the other; build each into its own output "
                f"(ibistatic build --host {first} --output DIR)"
            )


def _hosts(report: _Report, key: str, value, context: dict) -> tuple[str, ...] | None:
    expected = "a list of host names: " + ", ".join(HOST_NAMES)
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        report.error(key, f"found {_found(value)}", expected)
        return None
    unknown = [name for name in value if name not in HOST_NAMES]
    if unknown:
        report.error(key, f"found the unknown host {_found(unknown[0])}", expected)
        return None
    try:
        check_hosts(value)
    except ConfigError as error:
        report.error(key, f"found {_found(value)}", str(error).split(": ", 1)[1])
        return None
    return tuple(dict.fromkeys(value))  # each once, in the order given


EMAIL = re.compile(r"[^@\s<>\"]+@[^@\s<>\"]+\.[^@\s<>\"]+")
RELATIVE_URL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._~/-]*")
SITE_URL = "an absolute http(s) URL such as https://ibi.example.org/, without query or fragment"
#: the keys of ibistatic.yaml: its table in docs/configuration.md is made from this
CONFIG_SCHEMA = Schema(
    CONFIG_NAME,
    (
        Field(
            "site-url",
            "absolute base URL of the persistent links; `{site}` in URL templates",
            required=True,
            expected=SITE_URL,
            read=_site_url,
        ),
        Field(
            "archives",
            "list of Archive directories, in the order the resolver asks them; each named by "
            "its directory name, so two must not share one",
            required=True,
            expected="a list of archive directories",
            read=_archives,
        ),
        Field(
            "output",
            "the published site: a link to the live generation in `.<output>.ibistatic/` beside "
            "it, turned atomically by each build; never a folder ibistatic did not publish "
            "([build](cli/build.md#outputs-it-refuses)); `--output` overrides it",
            "`site`",
            read=_output,
            absent=lambda report, context: _output(report, "output", "site", context),
        ),
        Field(
            "modifiers",
            "`default` (bare URL, `!`, `:`, `:(oai_dc)`, `!:(oai_dc)`), `all` (every shape of Table 6.2 "
            "with the item's languages and `oai_dc`, see [below](#modifiers-all)), or a list such "
            'as `["", "!", "+(pt)"]`',
            "`default`",
            read=_modifiers,
            absent="default",
        ),
        Field(
            "catalog",
            "`true` also publishes the [catalog](catalog.md) of the archives (an mkdocs site) "
            "into `<output>/catalog/`",
            "`false`",
            read=_boolean,
            absent=False,
        ),
        Field(
            "cache",
            "folder of the build cache: the items read from the descriptors, keyed by file "
            "identity and modification time, and what the last build published (so the next one rewrites "
            "only what changed)",
            "`.<output>.ibistatic-cache` beside the output (never inside it)",
            read=_cache,
        ),
        Field(
            "hosts",
            "the [hosts](hosting.md#host-profiles) the site is published on: `github-pages`, "
            "`netlify`, `cloudflare-pages`, `nginx`, `apache`, `s3`; each writes what that host "
            "needs and warns when the site passes its limits; `build --host` overrides it",
            "none: the portable output (`404.html`, `.nojekyll`, `_redirects`), no host's limits checked",
            read=_hosts,
            absent=(),
        ),
        Field(
            "alert-pages",
            "`false` writes no page for a persistent URL the resolver answers with an alert "
            "(such as `:(oai_dc)` of an item without metadata), except a deleted item's: "
            "`404.html` answers it with the same alert, and the site has fewer files "
            "([build](cli/build.md#alert-pages))",
            "`true` for the portable output (no host chosen), `false` when `hosts` (or "
            "`build --host`) names any: each host profile serves `404.html` for a missing page",
            read=_boolean,
            absent=None,
        ),
        Field(
            "redirect-pages",
            "`false` writes no page for a persistent URL the resolver answers with a URL: "
            "the host's own redirect answers it "
            "([build](cli/build.md#redirect-pages))",
            "`false` when every host of `hosts` (or `build --host`) answers every persistent "
            "URL itself (`cloudflare-pages`, `nginx`, `apache`), else `true`",
            read=_boolean,
            absent=None,
        ),
        Field(
            "jobs",
            "processes a build shares its work among (reading the archives, resolving and "
            "rendering the items); `1` builds in one process; `--jobs` overrides it",
            "the CPUs the build may use (its CPU affinity, fewer under a cgroup CPU quota)",
            read=_jobs,
        ),
        Field(
            "language",
            "the language of the pages' interface, `en` or `pt`; a page about an item in "
            "one of them speaks the item's language ([site](site.md#languages))",
            "`en`",
            read=_language,
            absent="en",
        ),
        Field(
            "institution",
            "name of the institution that publishes the site, shown on every page",
            "none",
            read=_text,
        ),
        Field("institution-url", "its home page, linked from its name", "none", read=_url),
        Field(
            "contact",
            "an e-mail address or a URL for readers' questions, on every page",
            "none",
            read=_contact,
        ),
        Field(
            "logo",
            "the institution's logo: a URL, absolute or relative to `site-url` (a file you "
            "publish beside the site)",
            "none",
            read=_logo,
        ),
        Field(
            "persistence-policy",
            "what the institution promises about its persistent links (a sentence or two), "
            "on every page",
            "none",
            read=_text,
        ),
        Field(
            "persistence-policy-url",
            "where the full persistence policy is published, linked from every page",
            "none",
            read=_url,
        ),
        Field(
            "templates",
            "a folder of templates that replace the bundled ones of the same name "
            "([site](site.md#your-own-templates)), as mkdocs' `custom_dir`",
            "none",
            read=_templates,
        ),
    ),
    # accepted and never used by the first release: the hosts' files come from `hosts`
    retired={"redirect-files": "redirect-files is no longer read: name the hosts with hosts"},
)


def _validated(path: Path, raw: dict, output: str | Path | None) -> SiteConfig:
    """`raw` read by CONFIG_SCHEMA; every problem of it in one ConfigError, a line each."""
    from .errors import printable

    report = _Report(printable(str(path)))
    if output is not None:  # --output: relative to the current directory, checked alike
        raw = {**raw, "output": output}
    context = {
        "base": path.parent,
        "output_base": Path.cwd() if output is not None else path.parent,
    }
    values = CONFIG_SCHEMA.read(report, raw, context)
    if report.lines:
        raise ConfigError.of_lines(report.lines)
    identity = SiteIdentity(**{name: values.pop(name) for name in IDENTITY_FIELDS})
    return SiteConfig(path=path.resolve(), identity=identity, **values)


def _output_path(path: Path) -> Path:
    """`path` made absolute with its folders' links resolved, but not its own: the
    output is a link to the live generation of the site (store/layout.py)."""
    path = Path(os.path.abspath(path))
    return path.parent.resolve() / path.name if path.name else path


def load_command_config(
    path: str | Path | None, output: str | Path | None, jobs: int | None = None
) -> SiteConfig:
    """The configuration of `build` and `watch` (docs/cli/build.md): `--config`, else ./ibistatic.yaml,
    else the bundled sample published into ./site; `jobs` (--jobs) overrides its `jobs`."""
    local = path or (CONFIG_NAME if Path(CONFIG_NAME).exists() else None)
    if local is None and output is None:
        output = "site"
    config = load_config(local, output=output)
    return config if jobs is None else dataclasses.replace(config, jobs=jobs)
