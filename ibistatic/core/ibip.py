"""The IBIp codec: base 27 numbers, coded IP addresses and dates (Algorithms 5-7).

An IBIp prefix is the coded IP, ``W`` (IPv4) or ``X`` (IPv6), then the coded port
(nothing for port 800).  An IBIp suffix is the coded number of seconds since
807235200 (1995-08-01T00:00:00Z), then, if the date has a fraction of a second, ``W``
and the coded fraction.  ``W`` and ``X`` are not digits (Table 7.6), so an IBIp can be
decoded back.

The standard does not say how a fraction of a second becomes an integer.  Here the
fraction's decimal digits, without trailing zeros, are reversed and read as an integer:
0.394023 -> 320493, 0.05 -> 50.  Leading zeros of the fraction become trailing zeros
of the integer and survive; decoding reverses the decimal digits of the integer.

Dates are exact: ``int``, :class:`fractions.Fraction`, :class:`decimal.Decimal` or a
decimal string; floats are refused because they cannot hold 0.1 exactly.
"""

from __future__ import annotations

import ipaddress
import math
import re
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

from ..errors import IbiSyntaxError, UsageError
from .identifiers import IBIP_DIGIT, Ibip, parse_ibip

__all__ = [
    "DIGITS",
    "EPOCH",
    "DEFAULT_PORT",
    "MAX_FRACTION_DIGITS",
    "encode_number",
    "decode_number",
    "encode_ip",
    "ibip_prefix",
    "ibip_suffix",
    "make_ibip",
    "DecodedIbip",
    "decode_ibip",
    "as_seconds",
    "check_port",
    "fraction_digits",
    "seconds_text",
]

#: Table 7.6: the IBIp digits for 0..26.
DIGITS = "23456789ABCDEFGHJKLMNPQRSTU"
#: Table 7.4 (IPv4 read in base 11) and Table 7.5 (IPv6 read in base 17).
IPV4_DIGITS = "0123456789."
IPV6_DIGITS = "0123456789abcdef:"
#: 1995-08-01T00:00:00Z, the month of the first label (Algorithm 6 line 2).
EPOCH = 807235200
#: The port Algorithm 5 leaves out.
DEFAULT_PORT = 800
IPV4_SEPARATOR = "W"
IPV6_SEPARATOR = "X"
FRACTION_SEPARATOR = "W"
#: Finer than any clock; bounds the work of decoding a hostile fraction.
MAX_FRACTION_DIGITS = 30
# Longest texts of an address (IPv6 with an embedded IPv4 is 45 characters).
_MAX_IPV4_CODE = len(IPV4_DIGITS) ** 15
_MAX_IPV6_CODE = len(IPV6_DIGITS) ** 45

DECIMAL_SECONDS = re.compile(r"[0-9]+(?:\.[0-9]+)?")  # POSIX seconds as a decimal string
_DIGIT_VALUES = {digit: value for value, digit in enumerate(DIGITS)}


# --- exact dates -------------------------------------------------------------------


def as_seconds(value: Fraction | int | Decimal | str, what: str = "date") -> Fraction:
    """An exact number of POSIX seconds from an int, Fraction, Decimal or decimal string."""
    if isinstance(value, bool) or isinstance(value, float):
        raise UsageError(
            f"{what} must be exact (int, Fraction, Decimal or decimal string), not {value!r}"
        )
    if isinstance(value, (int, Fraction)):
        return Fraction(value)
    if isinstance(value, Decimal) and value.is_finite():
        return Fraction(value)
    if isinstance(value, str) and DECIMAL_SECONDS.fullmatch(value):
        return Fraction(value)
    raise UsageError(f"{what} must be POSIX seconds as a decimal number, not {value!r}")


def fraction_digits(fraction: Fraction) -> str:
    """The decimal digits of a fraction of a second in [0, 1), without trailing zeros.

    ``Fraction(394023, 10**6)`` gives ``'394023'``, 0 gives ``''``.  A fraction with no
    finite decimal expansion (1/3), or finer than MAX_FRACTION_DIGITS, raises UsageError.
    """
    if not 0 <= fraction < 1:
        raise UsageError(f"not a fraction of a second: {fraction}")
    denominator = fraction.denominator
    twos = (denominator & -denominator).bit_length() - 1
    fives = 0
    while denominator % 5 ** (fives + 1) == 0:
        fives += 1
    places = max(twos, fives)
    if denominator != 2**twos * 5**fives or places > MAX_FRACTION_DIGITS:
        raise UsageError(
            f"a date needs a decimal fraction of at most {MAX_FRACTION_DIGITS} digits, not {fraction}"
        )
    if not fraction:
        return ""
    scaled = fraction.numerator * 10**places // denominator
    return str(scaled).zfill(places).rstrip("0")


def seconds_text(seconds: Fraction | int) -> str:
    """Exact decimal text of a date: ``1287587646``, ``1287587646.394023``."""
    seconds = as_seconds(seconds)
    whole = math.floor(seconds)
    digits = fraction_digits(seconds - whole)
    return f"{whole}.{digits}" if digits else str(whole)


# --- base 27 -------------------------------------------------------------------------


def _to_base(number: int, digits: str) -> str:
    """CONVERTFROMDECIMAL: ``number`` >= 0 written with ``digits`` (0 is ``digits[0]``)."""
    base = len(digits)
    out = []
    while True:
        number, digit = divmod(number, base)
        out.append(digits[digit])
        if not number:
            return "".join(reversed(out))


def _from_base(text: str, digits: str) -> int:
    """CONVERTTODECIMAL: the value of ``text`` written with ``digits``."""
    base = len(digits)
    number = 0
    for char in text:
        number = number * base + digits.index(char)
    return number


def encode_number(n: int) -> str:
    """A non-negative integer in IBIp digits (Table 7.6): 19050 -> ``U5H``."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise UsageError(f"only a non-negative integer can be coded in IBIp digits, not {n!r}")
    return _to_base(n, DIGITS)


def decode_number(code: str) -> int:
    """The integer written in IBIp digits (either case): ``U5H`` -> 19050."""
    if not code:
        raise IbiSyntaxError(code, 0, IBIP_DIGIT, "IBIp number")
    number = 0
    for position, char in enumerate(code.upper()):
        if char not in _DIGIT_VALUES:
            raise IbiSyntaxError(code, position, IBIP_DIGIT, "IBIp number")
        number = number * len(DIGITS) + _DIGIT_VALUES[char]
    return number


# --- Algorithm 5: the prefix ---------------------------------------------------------


def _address(ip: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    try:
        address = ipaddress.ip_address(ip)
    except ValueError:
        raise UsageError(f"not an IPv4 or IPv6 address: {ip!r}") from None
    if getattr(address, "scope_id", None):
        raise UsageError(f"an IP address with a zone cannot be coded: {ip!r}")
    return address


def check_port(port: int | None, default: int) -> int:
    """A valid port number (1-65535), or ``default`` for None."""
    if port is None:
        return default
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise UsageError(f"a port is an integer from 1 to 65535, not {port!r}")
    return port


def encode_ip(ip: str) -> str:
    """The IBIp digits of an IP address (Algorithm 5 lines 6-7 and 10-11).

    IPv4 is read in base 11 (Table 7.4), IPv6 first written in the RFC 5952 form
    (``2001:252:0:1::2008:6``) and read in base 17 (Table 7.5).  An address whose text
    begins with the digit 0 cannot be coded: the leading zero would be lost.
    """
    address = _address(ip)
    if address.version == 4:
        text, digits = str(address), IPV4_DIGITS
    else:
        text, digits = address.compressed, IPV6_DIGITS
    if text.startswith("0"):
        raise UsageError(f"{text} cannot be coded in an IBIp: its leading digit 0 would be lost")
    return encode_number(_from_base(text, digits))


def ibip_prefix(ip: str, port: int | None = None) -> str:
    """Algorithm 5: coded IP, ``W`` or ``X``, coded port (nothing for 800, the default)."""
    port = check_port(port, DEFAULT_PORT)
    separator = IPV4_SEPARATOR if _address(ip).version == 4 else IPV6_SEPARATOR
    coded_port = "" if port == DEFAULT_PORT else encode_number(port)
    return encode_ip(ip) + separator + coded_port


# --- Algorithm 6: the suffix ---------------------------------------------------------


def _code_fraction(fraction: Fraction) -> str:
    """The fraction rule: decimal digits, trailing zeros dropped, reversed, in base 27."""
    return encode_number(int(fraction_digits(fraction)[::-1]))


def ibip_suffix(seconds: Fraction | int | Decimal | str) -> str:
    """Algorithm 6: seconds since 807235200 in base 27, then ``W`` and the coded fraction."""
    date = as_seconds(seconds)
    whole = math.floor(date)
    if whole < EPOCH:
        raise UsageError(
            f"an IBIp cannot code a date before 1995-08-01T00:00:00Z ({EPOCH}): {seconds_text(date)}"
        )
    suffix = encode_number(whole - EPOCH)
    if date != whole:
        suffix += FRACTION_SEPARATOR + _code_fraction(date - whole)
    return suffix


def make_ibip(ip: str, port: int | None, seconds: Fraction | int | Decimal | str) -> str:
    """Algorithm 7: IBIp = prefix "/" suffix."""
    return f"{ibip_prefix(ip, port)}/{ibip_suffix(seconds)}"


# --- decoding ------------------------------------------------------------------------


@dataclass(frozen=True)
class DecodedIbip:
    """What an IBIp was made from; ``port`` is 800 when the prefix leaves it out."""

    ip: str
    port: int
    seconds: Fraction


class _Decoder:
    """Decodes the coded numbers of one IBIp; errors point into the whole IBIp text."""

    def __init__(self, ibip: Ibip) -> None:
        self.text = ibip.text
        self.upper = ibip.text.upper()

    def fail(self, position: int, expected: str) -> IbiSyntaxError:
        return IbiSyntaxError(self.text, position, expected, "IBIp")

    def number(self, start: int, end: int, what: str) -> int:
        """A coded number at text[start:end]: not empty, no leading zero digit ``2``."""
        code = self.upper[start:end]
        for offset, char in enumerate(code):
            if char not in _DIGIT_VALUES:
                raise self.fail(start + offset, IBIP_DIGIT)
        if not code:
            raise self.fail(start, f"{what} in IBIp digits (2-9, A-H, J-N, P-U)")
        if len(code) > 1 and code[0] == DIGITS[0]:
            raise self.fail(start, f"an IBIp digit other than 2 (no leading zero in {what})")
        return decode_number(code)

    def ip(self, end: int) -> str:
        """coded-IP, up to the separator at ``end``."""
        version = 4 if self.upper[end] == IPV4_SEPARATOR else 6
        number = self.number(0, end, "the coded IP")
        digits, limit = (
            (IPV4_DIGITS, _MAX_IPV4_CODE) if version == 4 else (IPV6_DIGITS, _MAX_IPV6_CODE)
        )
        text = _to_base(number, digits) if number < limit else ""
        try:
            address = ipaddress.ip_address(text)
        except ValueError:
            address = None
        if address is None or address.version != version:
            raise self.fail(0, f"the code of an IPv{version} address")
        return text

    def port(self, start: int, end: int) -> int:
        """coded-port: nothing for 800."""
        if start == end:
            return DEFAULT_PORT
        port = self.number(start, end, "the coded port")
        if not 1 <= port <= 65535 or port == DEFAULT_PORT:
            raise self.fail(start, "the code of a port from 1 to 65535 other than 800")
        return port

    def fraction(self, start: int, end: int) -> Fraction:
        """coded-fraction: the reversed decimal digits of the fraction."""
        number = self.number(start, end, "the coded fraction")
        if not 0 < number < 10**MAX_FRACTION_DIGITS:
            raise self.fail(
                start, f"the code of a fraction of 1 to {MAX_FRACTION_DIGITS} decimal digits"
            )
        digits = str(number)[::-1]
        return Fraction(int(digits), 10 ** len(digits))


def _first_separator(text: str, start: int, end: int, separators: str) -> int:
    """Index of the first of ``separators`` in text[start:end], or ``end``."""
    return next((i for i in range(start, end) if text[i] in separators), end)


def decode_ibip(ibip: str | Ibip) -> DecodedIbip:
    """The IP, port and date an IBIp was made from (the inverse of Algorithms 5-7).

    Accepts exactly what Algorithms 5-7 can produce; anything else raises
    :class:`IbiSyntaxError` pointing at the offending character.
    """
    value = ibip if isinstance(ibip, Ibip) else parse_ibip(ibip)
    decoder = _Decoder(value)
    upper, slash = decoder.upper, len(value.prefix)
    # prefix = coded-IP ("W" | "X") coded-port
    separator = _first_separator(upper, 0, slash, IPV4_SEPARATOR + IPV6_SEPARATOR)
    if separator == slash:
        decoder.number(0, slash, "the coded IP")
        raise decoder.fail(slash, f"{IBIP_DIGIT}, 'W' or 'X'")
    ip = decoder.ip(separator)
    port = decoder.port(separator + 1, slash)
    # suffix = coded-second ["W" coded-fraction]
    start, end = slash + 1, len(upper)
    mark = _first_separator(upper, start, end, FRACTION_SEPARATOR)
    seconds = Fraction(EPOCH + decoder.number(start, mark, "the coded seconds"))
    if mark < end:
        seconds += decoder.fraction(mark + 1, end)
    return DecodedIbip(ip=ip, port=port, seconds=seconds)
