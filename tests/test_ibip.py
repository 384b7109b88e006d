"""The IBIp codec: Tables 7.2-7.6 and Algorithms 5-7 (identification system, ch. 7)."""

from __future__ import annotations

import ipaddress
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ibistatic.core.ibip import (
    DIGITS,
    EPOCH,
    DecodedIbip,
    as_seconds,
    decode_ibip,
    decode_number,
    encode_ip,
    encode_number,
    fraction_digits,
    ibip_prefix,
    ibip_suffix,
    make_ibip,
    seconds_text,
)
from ibistatic.core.identifiers import parse_ibip
from ibistatic.errors import IbiSyntaxError, UsageError

# Table 7.3 (CONVERTFROMDECIMAL), with Table 7.2's decimals of the two addresses.
NUMBERS = [
    (1, "3"),
    (19050, "U5H"),
    (480992662, "38G3TS3"),
    (4588904456580, "J8LNKAN8P"),
    (478239719325051908572237, "7URMDHLL9SSN2D89M"),
    (0, "2"),
    (26, "U"),
    (27, "32"),
]


def test_table_7_6():
    assert DIGITS == "23456789ABCDEFGHJKLMNPQRSTU"
    assert [encode_number(n) for n in range(27)] == list(DIGITS)


@pytest.mark.parametrize("number, code", NUMBERS)
def test_numbers(number, code):
    assert encode_number(number) == code
    assert decode_number(code) == number
    assert decode_number(code.lower()) == number


# Table 7.2 then 7.3: the address read as a number, then written in IBIp digits.
ADDRESSES = [
    ("150.163.2.174", "J8LNKAN8P"),
    ("2001:252:0:1::2008:6", "7URMDHLL9SSN2D89M"),
    ("150.163.34.243", "8JMKD3MGP8"),
    # IPv6 is coded in its RFC 5952 form, whatever the spelling given
    ("2001:0252:0000:0001:0000:0000:2008:0006", "7URMDHLL9SSN2D89M"),
    ("2001:252:0:1:0:0:2008:6", "7URMDHLL9SSN2D89M"),
    ("2001:DB8::1", encode_ip("2001:db8::1")),
    ("::1", "8MC"),
    ("::ffff:1.2.3.4", encode_ip("::ffff:102:304")),
]


@pytest.mark.parametrize("ip, code", ADDRESSES)
def test_encode_ip(ip, code):
    assert encode_ip(ip) == code


def test_addresses_are_read_as_numbers():
    assert decode_number(encode_ip("150.163.2.174")) == 4588904456580
    assert decode_number(encode_ip("2001:252:0:1::2008:6")) == 478239719325051908572237


PREFIXES = [
    ("150.163.34.243", 800, "8JMKD3MGP8W"),  # Example 2 of chapter 5
    ("150.163.34.243", None, "8JMKD3MGP8W"),
    ("150.163.34.243", 8080, "8JMKD3MGP8WD49"),
    ("150.163.34.243", 80, "8JMKD3MGP8W4U"),
    ("2001:252:0:1::2008:6", None, "7URMDHLL9SSN2D89MX"),
    ("2001:0252:0:1:0:0:2008:0006", 802, "7URMDHLL9SSN2D89MX34M"),
]


@pytest.mark.parametrize("ip, port, prefix", PREFIXES)
def test_ibip_prefix(ip, port, prefix):
    assert ibip_prefix(ip, port) == prefix


SUFFIXES = [
    (1234806360, "34PGRBS"),  # Example 2 of chapter 5
    (EPOCH, "2"),
    (EPOCH + 1, "3"),
    # the fraction rule: digits without trailing zeros, reversed, read as an integer
    (Fraction("1287587646.394023"), "38ERDLBW" + encode_number(320493)),
    (Fraction("1287587646.05"), "38ERDLBW" + encode_number(50)),
    (Fraction("1287587646.5"), "38ERDLBW" + encode_number(5)),
    (Fraction("1287587646.50"), "38ERDLBW7"),
    (Fraction("1287587646.1"), "38ERDLBW3"),
    (Fraction("1287587646.001"), "38ERDLBW" + encode_number(100)),
    ("1287587646.394023", "38ERDLBWJ9K5"),
    (Decimal("1287587646.394023"), "38ERDLBWJ9K5"),
]


@pytest.mark.parametrize("seconds, suffix", SUFFIXES)
def test_ibip_suffix(seconds, suffix):
    assert ibip_suffix(seconds) == suffix


def test_make_ibip_example_2():
    assert make_ibip("150.163.34.243", 800, 1234806360) == "8JMKD3MGP8W/34PGRBS"
    assert make_ibip("150.163.34.243", None, 1234806360) == "8JMKD3MGP8W/34PGRBS"


DECODED = [
    ("8JMKD3MGP8W/34PGRBS", "150.163.34.243", 800, Fraction(1234806360)),
    ("8jmkd3mgp8w/34pgrbs", "150.163.34.243", 800, Fraction(1234806360)),
    ("8JMKD3MGP8WD49/38ERDLBWJ9K5", "150.163.34.243", 8080, Fraction("1287587646.394023")),
    (
        "7URMDHLL9SSN2D89MX34M/38ERDLBW" + encode_number(50),
        "2001:252:0:1::2008:6",
        802,
        Fraction("1287587646.05"),
    ),
    ("8MCX/2", "::1", 800, Fraction(EPOCH)),
    # an IPv6 address coded "as given" (not in RFC 5952 form) decodes as it was written
    ("AUN2FQ6M2CX/3", "2001:0db8::1", 800, Fraction(EPOCH + 1)),
]


@pytest.mark.parametrize("ibip, ip, port, seconds", DECODED)
def test_decode_ibip(ibip, ip, port, seconds):
    assert decode_ibip(ibip) == DecodedIbip(ip=ip, port=port, seconds=seconds)
    assert decode_ibip(parse_ibip(ibip)) == DecodedIbip(ip=ip, port=port, seconds=seconds)


IBIP_DIGIT = "an IBIp digit (2-9, A-H, J-N, P-U)"

# (IBIp, caret position, expected)
BAD_IBIPS = [
    ("8JMKD3MGP8/34PGRBS", 10, f"{IBIP_DIGIT}, 'W' or 'X'"),
    ("W/34PGRBS", 0, IBIP_DIGIT),
    ("22W/34PGRBS", 0, "an IBIp digit other than 2 (no leading zero in the coded IP)"),
    ("8JMKD3MGP8WX/34PGRBS", 11, f"{IBIP_DIGIT} or '/'"),
    ("8JMKD3MGP8WW/34PGRBS", 11, f"{IBIP_DIGIT} or '/'"),
    ("8JMKD3MGPW/34PGRBS", 0, "the code of an IPv4 address"),
    ("8JMKD3MGP8X/34PGRBS", 0, "the code of an IPv6 address"),
    ("7URMDHLL9SSN2D89MW/34PGRBS", 0, "the code of an IPv4 address"),
    ("2W/34PGRBS", 0, "the code of an IPv4 address"),
    ("8JMKD3MGP8W" + "U" * 9 + "/34PGRBS", 11, "the code of a port from 1 to 65535 other than 800"),
    (
        "8JMKD3MGP8W" + encode_number(800) + "/34PGRBS",
        11,
        "the code of a port from 1 to 65535 other than 800",
    ),
    ("8JMKD3MGP8W2/34PGRBS", 11, "the code of a port from 1 to 65535 other than 800"),
    ("8JMKD3MGP8W23/34PGRBS", 11, "an IBIp digit other than 2 (no leading zero in the coded port)"),
    ("8JMKD3MGP8W/W3", 12, IBIP_DIGIT),
    (
        "8JMKD3MGP8W/234PGRBS",
        12,
        "an IBIp digit other than 2 (no leading zero in the coded seconds)",
    ),
    ("8JMKD3MGP8W/34PGRBSX", 19, f"{IBIP_DIGIT}, 'W' or end of input"),
    ("8JMKD3MGP8W/34PGRBSW", 20, IBIP_DIGIT),
    ("8JMKD3MGP8W/34PGRBSW2", 20, "the code of a fraction of 1 to 30 decimal digits"),
    (
        "8JMKD3MGP8W/34PGRBSW23",
        20,
        "an IBIp digit other than 2 (no leading zero in the coded fraction)",
    ),
    ("8JMKD3MGP8W/34PGRBSW3W3", 21, f"{IBIP_DIGIT} or end of input"),
    ("8JMKD3MGP8W/34PGRBSW" + "U" * 22, 20, "the code of a fraction of 1 to 30 decimal digits"),
]


@pytest.mark.parametrize("ibip, position, expected", BAD_IBIPS)
def test_bad_ibips(ibip, position, expected):
    with pytest.raises(IbiSyntaxError) as caught:
        decode_ibip(ibip)
    found = "end of input" if position >= len(ibip) else repr(ibip[position])
    assert str(caught.value) == (
        f"invalid IBIp {ibip!r}: expected {expected} at character {position + 1}, found {found}\n"
        f"    {ibip}\n    {' ' * position}^"
    )


def test_decode_ibip_checks_the_grammar_first():
    with pytest.raises(IbiSyntaxError) as caught:
        decode_ibip("8JMKD3MGP8W/34PGRBS!")
    assert caught.value.position == 19 and caught.value.what == "IBIp"


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda: encode_number(-1),
            "only a non-negative integer can be coded in IBIp digits, not -1",
        ),
        (
            lambda: encode_number(True),
            "only a non-negative integer can be coded in IBIp digits, not True",
        ),
        (lambda: encode_ip("150.163.34"), "not an IPv4 or IPv6 address: '150.163.34'"),
        (
            lambda: encode_ip("0.1.2.3"),
            "0.1.2.3 cannot be coded in an IBIp: its leading digit 0 would be lost",
        ),
        (
            lambda: encode_ip("0:1::"),
            "0:1:: cannot be coded in an IBIp: its leading digit 0 would be lost",
        ),
        (
            lambda: encode_ip("fe80::1%eth0"),
            "an IP address with a zone cannot be coded: 'fe80::1%eth0'",
        ),
        (lambda: ibip_prefix("150.163.34.243", 0), "a port is an integer from 1 to 65535, not 0"),
        (
            lambda: ibip_prefix("150.163.34.243", 65536),
            "a port is an integer from 1 to 65535, not 65536",
        ),
        (
            lambda: ibip_suffix(EPOCH - 1),
            "an IBIp cannot code a date before 1995-08-01T00:00:00Z (807235200): 807235199",
        ),
        (
            lambda: ibip_suffix(Fraction(1234806360 * 3 + 1, 3)),
            "a date needs a decimal fraction of at most 30 digits, not 1/3",
        ),
        (
            lambda: ibip_suffix(Fraction(1, 10**31) + EPOCH),
            "a date needs a decimal fraction of at most 30 digits, not 1/10000000000000000000000000000000",
        ),
        (
            lambda: ibip_suffix(1234806360.5),
            "date must be exact (int, Fraction, Decimal or decimal string), not 1234806360.5",
        ),
        (lambda: ibip_suffix("1e9"), "date must be POSIX seconds as a decimal number, not '1e9'"),
        (lambda: ibip_suffix("1/3"), "date must be POSIX seconds as a decimal number, not '1/3'"),
    ],
)
def test_bad_arguments(call, message):
    with pytest.raises(UsageError) as caught:
        call()
    assert str(caught.value) == message


def test_decode_number_errors():
    with pytest.raises(IbiSyntaxError) as caught:
        decode_number("3O")
    assert (caught.value.position, caught.value.what) == (1, "IBIp number")
    with pytest.raises(IbiSyntaxError):
        decode_number("")


@pytest.mark.parametrize(
    "value, digits, text",
    [
        (Fraction(0), "", "0"),
        (Fraction("0.394023"), "394023", "0.394023"),
        (Fraction("0.050"), "05", "0.05"),
        (Fraction(1, 8), "125", "0.125"),
    ],
)
def test_fraction_digits_and_seconds_text(value, digits, text):
    assert fraction_digits(value) == digits
    assert seconds_text(value) == text
    assert as_seconds(text) == value


# --- properties ------------------------------------------------------------------------


def _codable(address) -> bool:
    text = str(address) if address.version == 4 else address.compressed
    return not text.startswith("0")


addresses = st.ip_addresses().filter(_codable)
ports = st.one_of(st.none(), st.integers(min_value=1, max_value=65535))
dates = st.builds(
    lambda whole, places, numerator: Fraction(whole) + Fraction(numerator % 10**places, 10**places),
    st.integers(min_value=EPOCH, max_value=2**40),
    st.integers(min_value=0, max_value=12),
    st.integers(min_value=0),
)


@given(st.integers(min_value=0))
def test_numbers_round_trip(n):
    assert decode_number(encode_number(n)) == n


@given(addresses, ports, dates)
def test_ibips_round_trip(address, port, date):
    ibip = make_ibip(str(address), port, date)
    decoded = decode_ibip(ibip)
    assert ipaddress.ip_address(decoded.ip) == address
    assert decoded.ip == (str(address) if address.version == 4 else address.compressed)
    assert decoded.port == (800 if port is None else port)
    assert decoded.seconds == date
    assert make_ibip(decoded.ip, decoded.port, decoded.seconds) == ibip
    assert parse_ibip(ibip).text == ibip


@given(st.text())
def test_random_text_never_crashes_decode_ibip(text):
    try:
        decode_ibip(text)
    except IbiSyntaxError as error:
        assert error.text == text


@given(st.from_regex(r"[2-9A-HJ-NP-UWX]{1,40}/[2-9A-HJ-NP-UWX]{1,40}", fullmatch=True))
def test_random_ibips_decode_or_fail_cleanly(text):
    try:
        decoded = decode_ibip(text)
    except IbiSyntaxError as error:
        assert error.text == text and 0 <= error.position <= len(text)
    else:
        # whatever decodes was made by Algorithms 5-7 from what it decodes to (we code
        # IPv6 in its RFC 5952 form; the standard codes it "as given")
        address = ipaddress.ip_address(decoded.ip)
        canonical = str(address) if address.version == 4 else address.compressed
        again = make_ibip(decoded.ip, decoded.port, decoded.seconds)
        assert again == text or decoded.ip != canonical
        assert decode_ibip(again) == DecodedIbip(canonical, decoded.port, decoded.seconds)
