"""Minting repository names (Algorithms 1-3) and the pure step of the temporal
distributor (Algorithm 4), with exact rational dates.

The distributor's memory (``last-date-for-suffix``) and its waiting belong to the
caller (:mod:`ibistatic.distributor`); :func:`distribute` only computes.
"""

from __future__ import annotations

import ipaddress
import math
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from fractions import Fraction

from ..errors import UsageError
from .ibip import MAX_FRACTION_DIGITS, as_seconds, check_port, fraction_digits, ibip_prefix
from .identifiers import split_host_name

__all__ = [
    "DEFAULT_PORT",
    "Distribution",
    "as_granularity",
    "repository_prefix",
    "repository_suffix",
    "repository_name",
    "suffix_seconds",
    "iso_date",
    "distribute",
    "subsystem_name",
]

#: The port Algorithm 1 leaves out.
DEFAULT_PORT = 80
_POSIX_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)

Date = Fraction | int | Decimal | str


def as_granularity(value: Date) -> Fraction:
    """A granularity of the set G = {60, 1, 1/10, 1/100, ...} (seconds)."""
    r = as_seconds(value, "granularity")
    tenths = r.denominator
    while tenths % 10 == 0:
        tenths //= 10
    if r == 60 or (r.numerator == 1 and tenths == 1 and r.denominator <= 10**MAX_FRACTION_DIGITS):
        return r
    raise UsageError(f"granularity must be 60, 1, 0.1, 0.01, ... seconds, not {value}")


# --- Algorithms 1-3 ------------------------------------------------------------------


def repository_prefix(host: str, port: int | None = None) -> str:
    """Algorithm 1: ``mtc-m18.sid.inpe.br`` -> ``sid.inpe.br/mtc-m18``.

    The first word of the host name moves after the rest; port 80 (or None) is left
    out, any other port is appended with ``.`` (``sid.inpe.br/mtc-m18.8080``).  The
    result is in lower case, as the standard recommends.
    """
    port = check_port(port, DEFAULT_PORT)
    first, subdomain = split_host_name(host)
    word = first if port == DEFAULT_PORT else f"{first}.{port}"
    return f"{subdomain}/{word}".lower()


def _utc(date: Date) -> tuple[datetime, str] | None:
    """The UTC date-time of the whole seconds and the fraction's decimal digits; None
    outside the years 1-9999."""
    t = as_seconds(date)
    whole = math.floor(t)
    digits = fraction_digits(t - whole)
    try:
        return _POSIX_EPOCH + timedelta(seconds=whole), digits
    except OverflowError:
        return None


def repository_suffix(date: Date) -> str:
    """Algorithm 2: the UTC date as ``YYYY/MM.DD.hh.mm``, then ``.ss`` when the second is
    not 00, or ``.ss.f`` when there is a fraction of a second (its digits, trailing zeros
    dropped)."""
    utc = _utc(date)
    if utc is None:
        raise UsageError(f"date out of the years 1-9999: {date}")
    moment, digits = utc
    suffix = f"{moment.year:04d}/{moment:%m.%d.%H.%M}"
    if digits:
        return f"{suffix}.{moment.second:02d}.{digits}"
    if moment.second:
        return f"{suffix}.{moment.second:02d}"
    return suffix


def repository_name(host: str, port: int | None, date: Date) -> str:
    """Algorithm 3: repository name = prefix "/" suffix."""
    return f"{repository_prefix(host, port)}/{repository_suffix(date)}"


def suffix_seconds(suffix: str) -> Fraction | None:
    """The POSIX seconds a repository-name suffix stands for (UTC), the inverse of
    Algorithm 2; None when the suffix, though well formed, is not a calendar date."""
    year, rest = suffix.split("/")
    month, day, hour, minute, *second = rest.split(".")
    try:
        moment = datetime(
            int(year),
            int(month),
            int(day),
            int(hour),
            int(minute),
            int(second[0]) if second else 0,
            tzinfo=timezone.utc,
        )
    except ValueError:
        return None
    seconds = Fraction((moment - _POSIX_EPOCH) // timedelta(seconds=1))
    if len(second) == 2:
        seconds += Fraction(int(second[1]), 10 ** len(second[1]))
    return seconds


def iso_date(seconds: Date) -> str | None:
    """ISO 8601 UTC text of a date, fraction exact: ``2010-10-20T15:14:06.394023Z``;
    None outside the years 1-9999."""
    utc = _utc(seconds)
    if utc is None:
        return None
    moment, digits = utc
    return f"{moment.year:04d}-{moment:%m-%dT%H:%M:%S}" + (f".{digits}" if digits else "") + "Z"


# --- Algorithm 4 ---------------------------------------------------------------------


@dataclass(frozen=True)
class Distribution:
    """One answer of the temporal distributor.

    ``date_for_suffix`` is t(i), the date the label is made from and the new
    ``last-date-for-suffix``; ``creation_date`` is t'_i, the date the label may be
    handed out; ``delay`` is how long to WAIT first (0 when none).
    """

    date_for_suffix: Fraction
    creation_date: Fraction
    delay: Fraction


def _shortest_date(creation_date: Fraction, last_date: Fraction, r: Fraction) -> Fraction:
    """Lines 8-15: the coarsest rounding of creation-date (minute, second, tenth, ...,
    down to r) that is still later than last-date-for-suffix."""
    short_date, s = creation_date, r
    while last_date < short_date:
        s = 10 * s
        if s == 10:
            s = Fraction(60)
        t = short_date
        if s > 60:
            break
        short_date = s * math.floor(creation_date / s)
    return t


def distribute(current_date: Date, last_date: Date | None, granularity: Date) -> Distribution:
    """Algorithm 4 lines 1-17 for one request at ``current_date``.

    ``last_date`` is the memory ``last-date-for-suffix`` (None when it does not exist
    yet); the caller stores ``date_for_suffix`` as the new memory and waits ``delay``.
    """
    r = as_granularity(granularity)
    current = as_seconds(current_date, "current date")
    rounded_date = r * math.floor(current / r)  # line 1
    last = rounded_date - r if last_date is None else as_seconds(last_date, "last date")  # 2-3
    last = r * math.floor(last / r)  # line 4: the granularity may have changed
    creation_date = max(last + r, rounded_date)  # line 5
    delay = max(creation_date - current, Fraction(0))  # lines 6-7
    return Distribution(_shortest_date(creation_date, last, r), creation_date, delay)


def subsystem_name(host_or_ip: str, port: int | None) -> str:
    """A file-safe name for the identification subsystem of a host name or IP and port.

    It is the subsystem's prefix: ``sid.inpe.br_mtc-m18`` (Algorithm 1, ``/`` written
    ``_``) for a host name, ``8JMKD3MGP8W`` (Algorithm 5) for an IP address; so 80 and
    None name one subsystem for a host, 800 and None for an IP.
    """
    try:
        ipaddress.ip_address(host_or_ip)
    except ValueError:
        return repository_prefix(host_or_ip, port).replace("/", "_")
    return ibip_prefix(host_or_ip, port)
