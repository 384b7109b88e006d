"""``ibistatic server-config nginx|apache``: a virtual host for a built site."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from urllib.parse import urlsplit

from ..core.urls import base_path
from ..errors import UsageError, printable

SERVERS = ("nginx", "apache")
# what may stand in a server_name / ServerName: no space, quote, brace or ';'
SERVER_NAME = re.compile(r"[^\s\"'{};#]+")
LISTEN = re.compile(r"(?:(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.*-]+):)?[0-9]{1,5}")


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "server-config",
        help="write an nginx or Apache virtual host for a built site",
        description="Write one virtual-host file for a built site (what Debian's "
        "sites-available/ holds): real redirects for the precomputed persistent URLs, the "
        "site's files, and every other request by proxy to `ibistatic serve` at "
        "--resolver-url. Prints to stdout without --output (nginx only: Apache's RewriteMap "
        "file is written beside --output).",
    )
    parser.add_argument("server", choices=SERVERS, help="the web server")
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="the site configuration (default: ./ibistatic.yaml, else the bundled sample)",
    )
    parser.add_argument(
        "--site", metavar="DIR", help="the built site (default: the configuration's output)"
    )
    parser.add_argument(
        "--listen",
        metavar="ADDR:PORT",
        help="where the server listens (default: 80; Apache: *:80)",
    )
    parser.add_argument(
        "--server-name", metavar="NAME", help="the host name (default: the site URL's host)"
    )
    parser.add_argument(
        "--resolver-url",
        metavar="URL",
        help="where `ibistatic serve` answers (default: http://127.0.0.1:8411)",
    )
    parser.add_argument(
        "--output", metavar="FILE", help="write the virtual host here (default: stdout)"
    )
    parser.add_argument(
        "--map-bucket-size",
        metavar="N",
        type=int,
        help="nginx only: the map_hash_bucket_size set in nginx.conf (default: nginx's, 64); "
        "rules with longer paths are left to the resolver",
    )
    parser.set_defaults(func=run)


def run(args) -> int:
    from ..index.reader import Index
    from ..site import serverconfs, serverlinks
    from ..site.pagelinks import all_page_links

    site = Path(args.site) if args.site else _configured_site(args.config)
    index = Index(site)
    site = Path(os.path.abspath(site))  # not resolved: a build swaps the link `site` names
    listen = _listen(args.server, args.listen)
    name = _server_name(args.server_name, index.site_url)
    host = serverconfs.VirtualHost(
        site=site,
        base=_base(index.site_url, site),
        listen=listen,
        server_name=name,
        resolver_url=_resolver_url(args.resolver_url or serverconfs.DEFAULT_RESOLVER_URL),
        prefix=serverconfs.site_prefix(index.site_url, site, name, listen),
        folders=serverconfs.static_folders(site),
        bucket_size=_bucket_size(args.server, args.map_bucket_size),
    )
    rules = serverconfs.index_rules(index)
    links = list(all_page_links(index))  # Signposting Link headers (site/pagelinks.py)
    if args.server == "nginx":
        _write(args.output, serverconfs.nginx_vhost_text(rules, host, links))
        return 0
    if not args.output:
        raise UsageError(
            "apache: --output FILE is needed (the RewriteMap file is written beside it)"
        )
    output = Path(args.output).resolve()
    map_file = output.with_name(output.stem + ".rewritemap.txt")
    apache_links = serverlinks.apache_links(links, host.base)
    _write(str(map_file), serverconfs.apache_map_text(rules, apache_links))
    _write(str(output), serverconfs.apache_vhost_text(host, map_file, apache_links))
    return 0


def _bucket_size(server: str, size: int | None) -> int:
    from ..site.serverconfs import NGINX_BUCKET_SIZE

    if size is None:
        return NGINX_BUCKET_SIZE
    if server != "nginx":
        raise UsageError(f"--map-bucket-size is nginx's; {server} has no such limit")
    if size < 32 or size & (size - 1):
        raise UsageError(f"--map-bucket-size {size}: expected a power of two, 32 or more")
    return size


def _configured_site(config: str | None) -> Path:
    from ..config import load_command_config

    return Path(load_command_config(config, None).output)


def _base(site_url: str, site: Path) -> str:
    """The site URL's path; a site served under a path must sit in a folder of that name."""
    base = base_path(site_url)
    if base != "/" and not str(site).endswith(base.rstrip("/")):
        raise UsageError(
            printable(
                f"{site}: the site URL {site_url} serves it under {base}, so the server's "
                f"root must hold it at {base}; move the site to a folder ending in "
                f"{base.rstrip('/')}"
            )
        )
    return base


def _listen(server: str, listen: str | None) -> str:
    if listen is None:
        return "*:80" if server == "apache" else "80"
    if not LISTEN.fullmatch(listen):
        raise UsageError(
            printable(f"--listen {listen!r}: expected PORT or ADDR:PORT, e.g. 127.0.0.1:8080")
        )
    return f"*:{listen}" if server == "apache" and listen.isdigit() else listen


def _server_name(name: str | None, site_url: str) -> str:
    name = name or urlsplit(site_url).hostname or "localhost"
    if not SERVER_NAME.fullmatch(name):
        raise UsageError(
            printable(f"--server-name {name!r}: expected a host name, without spaces or quotes")
        )
    return name


def _resolver_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.path not in ("", "/"):
        raise UsageError(
            printable(
                f"--resolver-url {url!r}: expected http://HOST:PORT of `ibistatic serve`, "
                "with no path, e.g. http://127.0.0.1:8411"
            )
        )
    if parts.query or parts.fragment or re.search(r"[\s\"';{}]", url):
        raise UsageError(printable(f"--resolver-url {url!r}: expected no query, quote or space"))
    return f"{parts.scheme}://{parts.netloc}"


def _write(output: str | None, text: str) -> None:
    """`text` to stdout, or into `output` whole (written beside it, then renamed)."""
    if output is None:
        sys.stdout.write(text)
        return
    path = Path(output)
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        partial.write_text(text, encoding="utf-8", newline="\n")
        os.replace(partial, path)
    except OSError as error:
        partial.unlink(missing_ok=True)
        raise UsageError(printable(f"{output}: cannot write ({error.strerror})")) from None
    print(f"ibistatic server-config: wrote {printable(output)}", file=sys.stderr)
