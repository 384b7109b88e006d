"""What ``ibistatic serve`` adds to be an Archive of a resolver network (§5.2, §6.2).

- its Archive service issues unguessable, expiring urlkeys and counts the
  acknowledgments of its own keys (:class:`~ibistatic.web.service.ArchiveService`),
  appending them to ``--ack-log``;
- with ``--join``, once it listens it sends ``inclusionRequest`` (advertising the
  address it listens on, or ``--advertise``), and on SIGTERM/SIGINT ``exclusionRequest``
  before it exits.  The inclusion runs in a thread: the resolver calls back
  (``inclusionConfirmationRequest``) while the Archive waits for its answer.
"""

from __future__ import annotations

import sys
import threading

from ..errors import UsageError
from .acks import DEFAULT_KEY_SECONDS, AckLog, UrlKeys
from .joining import Membership, check_advertise, check_resolver_url, local_ip_towards
from .wire import EMAIL, IP_ADDRESS, Registration, check_registration_key

__all__ = ["add_join_options", "ArchiveSide"]

_ANY = ("0.0.0.0", "::", "")


def add_join_options(parser) -> None:
    """The options of ``serve`` for the resolver network."""
    group = parser.add_argument_group("joining a resolver (resolution-system §5)")
    group.add_argument(
        "--join",
        metavar="URL",
        help="the resolver service's base URL (http://<resolver>/J8LNKB5R7W/3FUQHC5): send "
        "inclusionRequest once listening, exclusionRequest on SIGTERM/SIGINT",
    )
    group.add_argument(
        "--registration-key", metavar="KEY", help="the key registered at the resolver"
    )
    group.add_argument(
        "--advertise",
        metavar="HOST:PORT",
        help="the address the resolver reaches this Archive at (default: where it listens)",
    )
    group.add_argument(
        "--admin-email",
        metavar="EMAIL",
        help="archiveadmemailaddress (default: webmaster@<the Archive's address>)",
    )
    group.add_argument(
        "--ack-log",
        metavar="FILE",
        help="append each accepted acknowledgment as a JSON line (see ibistatic acks)",
    )
    group.add_argument(
        "--urlkey-seconds",
        type=float,
        default=DEFAULT_KEY_SECONDS,
        metavar="S",
        help=f"how long a urlkey can be acknowledged (default: {DEFAULT_KEY_SECONDS:.0f})",
    )


class ArchiveSide:
    """The service and the start/stop hooks of a served site, from ``serve``'s options."""

    def __init__(self, args, views, *, filtered: bool = True) -> None:
        from ..web.service import ArchiveService

        if args.urlkey_seconds <= 0:
            raise UsageError(f"--urlkey-seconds {args.urlkey_seconds}: expected a positive number")
        self.membership = self._membership(args, views) if args.join else None
        if self.membership is None and (args.registration_key or args.advertise):
            raise UsageError("--registration-key and --advertise need --join")
        self.advertise = check_advertise(args.advertise) if args.advertise else None
        self.log = AckLog(args.ack_log)
        self.service = ArchiveService(UrlKeys(args.urlkey_seconds), self.log, filtered)
        self._joining: threading.Thread | None = None

    @staticmethod
    def _membership(args, views) -> Membership:
        resolver = check_resolver_url(args.join)
        if not args.registration_key:
            raise UsageError("--join needs --registration-key (the key registered at the resolver)")
        key = check_registration_key(args.registration_key, "--registration-key")
        if len(views) != 1:
            names = ", ".join(view.info.name for view in views)
            raise UsageError(
                f"--join: the site holds {len(views)} Archives ({names}); a site of one Archive "
                "joins a resolver (its archive service IBI is what the resolver registers)"
            )
        info = views[0].info
        email = args.admin_email or f"webmaster@{info.address.split(':')[0]}"
        if not EMAIL.fullmatch(email):
            raise UsageError(f"--admin-email {email!r}: expected an e-mail address")
        from .. import __version__

        registration = Registration(
            "", info.service_ibi.text, "", f"ibistatic-{__version__}", email, key
        )
        return Membership(resolver, registration)

    def on_started(self, host: str, port: int) -> None:
        """Runs once the server listens: send the inclusion request (in a thread)."""
        if self.membership is None:
            return
        advertised = self.advertise or self._listening(host, port)
        name = advertised.rsplit(":", 1)[0].strip("[]")
        ip = name if IP_ADDRESS.fullmatch(name) else local_ip_towards(self.membership.resolver)
        registration = self.membership.registration
        self.membership.registration = Registration(
            advertised, registration.service_ibi, ip, *_rest(registration)
        )
        self._joining = threading.Thread(target=self._say, args=(self.membership.join,))
        self._joining.start()

    def on_stopping(self) -> None:
        """Runs on SIGTERM/SIGINT, before the server stops: the exclusion request."""
        if self.membership is not None:
            if self._joining is not None:
                self._joining.join()
            self._say(self.membership.leave)
        self.log.close()

    def _listening(self, host: str, port: int) -> str:
        if host in _ANY:
            host = local_ip_towards(self.membership.resolver)
        return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"

    def _say(self, send) -> None:
        _, message = send()
        print(
            f"ibistatic serve: --join {self.membership.resolver}: {message}",
            file=sys.stderr,
            flush=True,
        )


def _rest(registration: Registration) -> tuple[str, str, str]:
    return registration.platform_version, registration.email, registration.key
