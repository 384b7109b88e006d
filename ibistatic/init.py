"""``ibistatic init``: a new publishing project, ready to take deposits and build.

::

    <folder>/
      ibistatic.yaml                  the site configuration
      README.md                       the next commands
      .gitignore                      the published site and the build cache
      archives/<name>/archive.yaml    one Archive, with its subsystem for deposits
      .github/workflows/ibistatic.yml (--github) build and deploy to GitHub Pages

The Archive's service IBI is minted by the same temporal distributor that ``ibistatic
deposit`` uses for the Archive (its memory is kept inside the Archive), so no later
deposit can mint that IBI again.  The files are computed first (:func:`project_files`,
no I/O but the minting) and written only into a folder that is new or empty.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from urllib.parse import urlsplit

from .config import CONFIG_NAME, SITE_URL, _site_url_ok
from .errors import IbistaticError, UsageError, printable
from .summary import counted

__all__ = ["Project", "init_project", "project_files", "github_workflow", "WORKFLOW_PATH"]

WORKFLOW_PATH = ".github/workflows/ibistatic.yml"
OUTPUT = "site"


@dataclass(frozen=True)
class Project:
    """What ``init`` is asked for; see docs/cli/init.md for each option."""

    site_url: str = "https://ibi.example.org/"
    name: str = "archive"  # the Archive's folder, its name in the index
    host: str | None = None  # deposit-host; default: the host of site_url
    ip: str | None = None  # deposit-ip (every new item also gets an IBIp)
    address: str | None = None  # the Archive's address; default: the host of site_url
    github: bool = False
    branch: str = "main"


def checked(project: Project) -> Project:
    """`project` with its defaults filled in; a bad value is a UsageError naming it."""
    if not _site_url_ok(project.site_url):
        raise UsageError(printable(f"--site-url {project.site_url!r}: expected {SITE_URL}"))
    site_url = project.site_url if project.site_url.endswith("/") else project.site_url + "/"
    name = project.name
    if (
        not name
        or name.startswith(".")
        or any(ch in name for ch in "/\\\x00")
        or not name.isprintable()
    ):
        raise UsageError(
            printable(f"--name {name!r}: expected a folder name (no '/', not starting with '.')")
        )
    if project.ip is not None:
        try:
            ipaddress.ip_address(project.ip)
        except ValueError:
            raise UsageError(
                printable(f"--ip {project.ip!r}: expected an IPv4 or IPv6 address")
            ) from None
    if not re.fullmatch(r"[A-Za-z0-9._/-]+", project.branch):
        raise UsageError(printable(f"--branch {project.branch!r}: expected a branch name"))
    host = urlsplit(site_url).hostname or ""
    return Project(
        site_url=site_url,
        name=name,
        host=project.host or host,
        ip=project.ip,
        address=project.address or urlsplit(site_url).netloc,
        github=project.github,
        branch=project.branch,
    )


def init_project(folder: Path | str, project: Project, *, now=None) -> list[Path]:
    """Write a new project into `folder` (made when missing; refused when not empty).
    Returns the files written, in order.  `now`: the minting date (POSIX seconds), for tests."""
    folder = Path(folder)
    _check_empty(folder)
    project = checked(project)
    _check_archive(project)  # before the minting writes anything
    service = _mint_service_ibi(folder / "archives" / project.name, project, now)
    files = project_files(project, service)
    written = []
    for relative, text in files.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "x", encoding="utf-8") as writer:  # never over a file made meanwhile
            writer.write(text)
        written.append(path)
    return written


def _check_empty(folder: Path) -> None:
    shown = printable(str(folder))
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        raise UsageError(f"{shown}: not a folder; expected a new or empty folder for the project")
    if folder.is_dir():
        entries = sorted(entry.name for entry in folder.iterdir())
        if entries:
            some = ", ".join(entries[:3]) + (", ..." if len(entries) > 3 else "")
            raise UsageError(
                printable(
                    f"{shown}: not empty ({counted(len(entries), 'entry')}: {some}); expected a new or "
                    "empty folder, so that init overwrites nothing"
                )
            )


def _check_archive(project: Project) -> None:
    """archive.yaml as the build will read it: its one free value is --address."""
    import yaml

    from .archive.descriptors import read_archive_info

    text = _archive_text(project, "example.org/ibi/2000/01.01.00.00")
    _, problems = read_archive_info(project.name, yaml.safe_load(text))
    if problems:
        expected = "; ".join(problem.expected for problem in problems)
        raise UsageError(printable(f"--address {project.address!r}: expected {expected}"))


def _mint_service_ibi(archive: Path, project: Project, now) -> str:
    """The archive service's IBI, minted by the distributor later deposits use."""
    from fractions import Fraction

    from .deposit import Subsystem, state_path
    from .distributor import mint_repository_name

    subsystem = Subsystem(project.host, project.ip, None, Fraction(1))
    try:
        repository, _ = mint_repository_name(
            project.host, None, state_path=state_path(archive, subsystem), now=now
        )
    except IbistaticError as error:  # the host name does not parse
        raise UsageError(
            printable(
                f"--host {project.host!r}: {str(error).splitlines()[0]}; expected a host name "
                "such as ibi.example.org (not an IP address; the default is the site URL's host)"
            )
        ) from None
    return repository


def project_files(project: Project, service_ibi: str) -> dict[str, str]:
    """relative path -> text of every file of the new project (``project`` checked)."""
    archive = f"archives/{project.name}"
    files = {
        CONFIG_NAME: _config_text(project, archive),
        f"{archive}/archive.yaml": _archive_text(project, service_ibi),
        f"{archive}/{service_ibi}/item.yaml": _service_item_text(project, service_ibi),
        f"{archive}/{service_ibi}/doc/index.html": _service_page(project, service_ibi),
        "README.md": _readme_text(project, archive),
        ".gitignore": f"/{OUTPUT}\n/.{OUTPUT}.ibistatic/\n/.{OUTPUT}.ibistatic-cache/\n"
        "**/.ibistatic/incoming/\n",
    }
    if project.github:
        files[WORKFLOW_PATH] = github_workflow(branch=project.branch)
    return files


def github_workflow(branch: str = "main", install: str | None = None) -> str:
    """The GitHub Actions workflow that builds the site and deploys it to GitHub Pages."""
    from . import __version__

    template = resources.files(__package__).joinpath("templates", "github-pages.yml")
    text = template.read_text(encoding="utf-8")
    install = install or f"ibistatic=={__version__}"
    return (
        text.replace("__BRANCH__", branch)
        .replace("__INSTALL__", install)
        .replace("__OUTPUT__", OUTPUT)
    )


def _config_text(project: Project, archive: str) -> str:
    return f"""\
# The site configuration (docs/configuration.md).
# site-url: the base of every persistent URL; set it to where the site is published.
site-url: {project.site_url}
# The Archives, in the order the resolver asks them (docs/archive-format.md).
archives:
  - {archive}
output: {OUTPUT}
""" + (_GITHUB_HOSTS if project.github else "")


#: what --github adds to ibistatic.yaml: the profile that writes what GitHub Pages needs
_GITHUB_HOSTS = """\
# The hosts the site is published on (docs/hosting.md): what each needs is written.
hosts: [github-pages]
"""


def _archive_text(project: Project, service_ibi: str) -> str:
    ip = f"deposit-ip: {project.ip}\n" if project.ip else ""
    return f"""\
# The Archive {project.name} (docs/archive-format.md).
# address: its web address (host[:port]); file-url: where each file of doc/ is served.
address: {project.address}
{_file_url_text(project)}
# The IBI of the archive service, minted by `ibistatic init`.
service-ibi: {service_ibi}
# Where `ibistatic deposit --archive` mints new IBIs (docs/cli/deposit.md).
deposit-host: {project.host}
{ip}"""


def _service_item_text(project: Project, service_ibi: str) -> str:
    """The archive service is itself an item, an original that never migrates (the
    storage model's rule 5): the Archive holds it, dated by its IBI."""
    from .core.identifiers import parse_repository_name
    from .core.minting import iso_date, suffix_seconds

    timestamp = iso_date(suffix_seconds(parse_repository_name(service_ibi).suffix))
    return f"""\
# The archive service of {project.name} (its service-ibi): an original that never
# migrates, as the standard's storage model asks (docs/archive-format.md).
state: Original
transferable: false
timestamp: "{timestamp}"
target: index.html
dublin-core:
  title: "Archive service of {project.address}"
  type: Service
  format: text/html
"""


def _service_page(project: Project, service_ibi: str) -> str:
    from html import escape

    return f"""\
<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Archive service of {escape(project.address)}</title></head>
<body>
<h1>Archive service of {escape(project.address)}</h1>
<p>IBI of this service: <code>{escape(service_ibi)}</code>. It answers the requests of
the IBI resolution system (<code>ibistatic serve</code>).</p>
</body>
</html>
"""


def _file_url_text(project: Project) -> str:
    """The Archive's file-url: on the site's own host, the site publishes the documents
    (at the paths a URLib Archive serves them, so a later server of its own keeps their
    URLs); on another, that server serves them."""
    site = urlsplit(project.site_url)
    if project.address == site.netloc:
        return (
            "# The site publishes the files of doc/ itself, at col/<IBI>/doc/<file>; give the\n"
            "# Archive a server of its own later by changing address and this line.\n"
            'file-url: "{site}col/{repository}/doc/{path}"'
        )
    # an https site links its files over https too
    return f"file-url: {site.scheme}://{{address}}/col/{{repository}}/doc/{{path}}"


def _readme_text(project: Project, archive: str) -> str:
    github = (
        f"\n`.github/workflows/ibistatic.yml` builds the site and deploys it to GitHub Pages at "
        f"every push to `{project.branch}`: in the repository's Settings > Pages, choose "
        '"GitHub Actions" as the source, and set `site-url` to the Pages address.\n'
        if project.github
        else ""
    )
    return f"""\
# IBI persistent links

Made by `ibistatic init`. `ibistatic.yaml` publishes the Archive `{archive}` at
{project.site_url}.

## Next commands

Deposit an item (mints its IBI and creates its folder in the Archive):

    ibistatic deposit report.pdf --archive {archive} --title "A title" --creator "A. Author"

Publish the site into `./{OUTPUT}`, then resolve a persistent URL offline:

    ibistatic build
    ibistatic resolve --index {OUTPUT} IBI

Serve the site with real redirects on loopback, and check every item's target:

    ibistatic serve --index {OUTPUT}
    ibistatic linkcheck
{github}"""
