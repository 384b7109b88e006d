"""Algorithms 1-4: repository names and the temporal distributor (identification system, ch. 5-6)."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ibistatic.core.identifiers import parse_repository_name
from ibistatic.core.minting import (
    Distribution,
    as_granularity,
    distribute,
    iso_date,
    repository_name,
    repository_prefix,
    repository_suffix,
    subsystem_name,
    suffix_seconds,
)
from ibistatic.errors import IbiSyntaxError, UsageError

F = Fraction

# Table 6.2 (r = 1): request t_i, creation date t'_i, t(i), suffix, delay to WAIT.
TABLE_6_2 = [
    ("1287587646.394023", 1287587646, 1287587646, "2010/10.20.15.14.06", 0),
    ("1287588012.2930", 1287588012, 1287588000, "2010/10.20.15.20", 0),
    ("1287588115.186234", 1287588115, 1287588060, "2010/10.20.15.21", 0),
    ("1287588115.3462", 1287588115, 1287588115, "2010/10.20.15.21.55", 0),
    ("1287588115.99623", 1287588116, 1287588116, "2010/10.20.15.21.56", F("0.00377")),
    ("1287588116.72", 1287588117, 1287588117, "2010/10.20.15.21.57", F("0.28")),
    ("1287588539.788342", 1287588539, 1287588480, "2010/10.20.15.28", 0),
]

# Our own vectors for finer and coarser granularities: (r, request, t(i), suffix, delay)
GRANULAR = [
    (
        "0.1",
        [
            ("1287587646.394023", "1287587646.3", "2010/10.20.15.14.06.3", 0),
            ("1287587646.394023", "1287587646.4", "2010/10.20.15.14.06.4", F("0.005977")),
            ("1287587646.45", "1287587646.5", "2010/10.20.15.14.06.5", F("0.05")),
            ("1287587700.01", "1287587700", "2010/10.20.15.15", 0),
            ("1287587700.01", "1287587700.1", "2010/10.20.15.15.00.1", F("0.09")),
            ("1287587702.77", "1287587702", "2010/10.20.15.15.02", 0),
        ],
    ),
    (
        "0.01",
        [
            ("1287587646.394023", "1287587646.39", "2010/10.20.15.14.06.39", 0),
            ("1287587646.394023", "1287587646.4", "2010/10.20.15.14.06.4", F("0.005977")),
            ("1287587646.45", "1287587646.45", "2010/10.20.15.14.06.45", 0),
            ("1287587646.451", "1287587646.46", "2010/10.20.15.14.06.46", F("0.009")),
            ("1287587700.01", "1287587700", "2010/10.20.15.15", 0),
        ],
    ),
    (
        "60",
        [
            ("1287587646.394023", "1287587640", "2010/10.20.15.14", 0),
            ("1287587646.5", "1287587700", "2010/10.20.15.15", F("53.5")),
            ("1287587900", "1287587880", "2010/10.20.15.18", 0),
        ],
    ),
]


def test_table_6_2():
    last = None
    for request, creation, date, suffix, delay in TABLE_6_2:
        answer = distribute(F(request), last, 1)
        assert answer == Distribution(F(date), F(creation), F(delay))
        assert repository_suffix(answer.date_for_suffix) == suffix
        last = answer.date_for_suffix


@pytest.mark.parametrize("granularity, rows", GRANULAR, ids=[g for g, _ in GRANULAR])
def test_other_granularities(granularity, rows):
    last = None
    for request, date, suffix, delay in rows:
        answer = distribute(request, last, granularity)
        assert (answer.date_for_suffix, answer.delay) == (F(date), delay)
        assert repository_suffix(answer.date_for_suffix) == suffix
        last = answer.date_for_suffix


def test_a_change_of_granularity_keeps_dates_increasing():
    # the memory was written with r = 0.01 (line 4 reformats it for r = 1)
    answer = distribute("1287587646.5", F("1287587646.39"), 1)
    assert answer == Distribution(F(1287587647), F(1287587647), F("0.5"))
    answer = distribute("1287587646.5", F("1287587646.39"), 60)
    assert answer.date_for_suffix == 1287587700


def test_the_first_request_has_no_memory():
    # lines 2-3: last-date-for-suffix = rounded-date - r, so t(1) is the request rounded
    assert distribute("1287587646.394023", None, "0.001").date_for_suffix == F("1287587646.394")
    assert distribute(1287587700, None, 1).date_for_suffix == 1287587700


# --- Algorithms 1-3 --------------------------------------------------------------------


@pytest.mark.parametrize(
    "host, port, prefix",
    [
        ("mtc-m18.sid.inpe.br", 80, "sid.inpe.br/mtc-m18"),  # Example 1, today's form
        ("mtc-m18.sid.inpe.br", None, "sid.inpe.br/mtc-m18"),
        ("mtc-m18.sid.inpe.br", 8080, "sid.inpe.br/mtc-m18.8080"),
        ("mtc-m18.sid.inpe.br", 800, "sid.inpe.br/mtc-m18.800"),
        ("MTC-M18.Sid.INPE.br", None, "sid.inpe.br/mtc-m18"),
        ("urlib.net", None, "net/urlib"),
        ("banon-pc.dpi.inpe.br.", 1905, "dpi.inpe.br./banon-pc.1905"),
    ],
)
def test_algorithm_1(host, port, prefix):
    assert repository_prefix(host, port) == prefix
    parse_repository_name(f"{prefix}/2009/02.16.17.46")


def test_algorithm_1_errors():
    with pytest.raises(IbiSyntaxError) as caught:
        repository_prefix("localhost")
    assert str(caught.value) == (
        "invalid host name 'localhost': expected a letter, a digit, '-' or '.' at character 10, "
        "found end of input\n    localhost\n             ^"
    )
    with pytest.raises(UsageError) as caught:
        repository_prefix("mtc-m18.sid.inpe.br", 0)
    assert str(caught.value) == "a port is an integer from 1 to 65535, not 0"


@pytest.mark.parametrize(
    "date, suffix",
    [
        (1234806360, "2009/02.16.17.46"),  # Example 1 of chapter 5 (the date of Example 2)
        (F(1287587646), "2010/10.20.15.14.06"),
        (1287587700, "2010/10.20.15.15"),
        ("1287587700.5", "2010/10.20.15.15.00.5"),  # a fraction brings the second, even 00
        ("1287587646.394023", "2010/10.20.15.14.06.394023"),
        ("1287587646.30", "2010/10.20.15.14.06.3"),
        ("1287587646.001", "2010/10.20.15.14.06.001"),
        (Decimal("1287587646.25"), "2010/10.20.15.14.06.25"),
        (-62135596800, "0001/01.01.00.00"),
    ],
)
def test_algorithm_2(date, suffix):
    assert repository_suffix(date) == suffix
    assert suffix_seconds(suffix) == F(date)


def test_algorithm_2_errors():
    with pytest.raises(UsageError) as caught:
        repository_suffix(10**12)
    assert str(caught.value) == "date out of the years 1-9999: 1000000000000"
    with pytest.raises(UsageError) as caught:
        repository_suffix(1287587646.5)
    assert (
        str(caught.value)
        == "date must be exact (int, Fraction, Decimal or decimal string), not 1287587646.5"
    )


def test_algorithm_3_examples():
    assert (
        repository_name("mtc-m18.sid.inpe.br", None, 1287587646)
        == "sid.inpe.br/mtc-m18/2010/10.20.15.14.06"
    )
    assert (
        repository_name("mtc-m18.sid.inpe.br", 8080, 1287588000)
        == "sid.inpe.br/mtc-m18.8080/2010/10.20.15.20"
    )
    # Example 1 was minted before 2010 with "@80"; today's Algorithm 1 leaves port 80 out
    example_1 = parse_repository_name("sid.inpe.br/mtc-m18@80/2009/02.16.17.46")
    assert example_1.suffix == repository_suffix(1234806360)
    assert (
        repository_name("mtc-m18.sid.inpe.br", 80, 1234806360)
        == "sid.inpe.br/mtc-m18/2009/02.16.17.46"
    )


@pytest.mark.parametrize(
    "suffix", ["2009/13.01.00.00", "2009/02.30.00.00", "2009/02.16.24.00", "10000/01.01.00.00"]
)
def test_suffix_seconds_of_no_calendar_date(suffix):
    assert suffix_seconds(suffix) is None


@pytest.mark.parametrize(
    "value, r",
    [
        (60, F(60)),
        (1, F(1)),
        ("0.1", F(1, 10)),
        (F(1, 100), F(1, 100)),
        (Decimal("0.001"), F(1, 1000)),
        ("1", F(1)),
    ],
)
def test_granularities(value, r):
    assert as_granularity(value) == r


@pytest.mark.parametrize(
    "value, message",
    [
        ("0.3", "granularity must be 60, 1, 0.1, 0.01, ... seconds, not 0.3"),
        (10, "granularity must be 60, 1, 0.1, 0.01, ... seconds, not 10"),
        (0, "granularity must be 60, 1, 0.1, 0.01, ... seconds, not 0"),
        ("0.05", "granularity must be 60, 1, 0.1, 0.01, ... seconds, not 0.05"),
        ("1/10", "granularity must be POSIX seconds as a decimal number, not '1/10'"),
        (0.1, "granularity must be exact (int, Fraction, Decimal or decimal string), not 0.1"),
    ],
)
def test_bad_granularities(value, message):
    with pytest.raises(UsageError) as caught:
        distribute(1287587646, None, value)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    "host_or_ip, port, name",
    [
        ("mtc-m18.sid.inpe.br", None, "sid.inpe.br_mtc-m18"),
        ("mtc-m18.sid.inpe.br", 80, "sid.inpe.br_mtc-m18"),
        ("MTC-m18.sid.inpe.br", 8080, "sid.inpe.br_mtc-m18.8080"),
        ("150.163.34.243", None, "8JMKD3MGP8W"),
        ("150.163.34.243", 800, "8JMKD3MGP8W"),
        ("2001:252:0:1::2008:6", 802, "7URMDHLL9SSN2D89MX34M"),
    ],
)
def test_subsystem_name(host_or_ip, port, name):
    assert subsystem_name(host_or_ip, port) == name


@pytest.mark.parametrize(
    "seconds, text",
    [
        (1234806360, "2009-02-16T17:46:00Z"),
        ("1287587646.394023", "2010-10-20T15:14:06.394023Z"),
        (10**12, None),
    ],
)
def test_iso_date(seconds, text):
    assert iso_date(seconds) == text


# --- properties ------------------------------------------------------------------------

granularities = st.sampled_from(["60", "1", "0.1", "0.01", "0.001", "0.000001"])
requests = st.lists(
    st.builds(lambda ms: F(ms, 1000), st.integers(min_value=0, max_value=5_000_000)),
    min_size=1,
    max_size=40,
)


@given(granularities, requests)
def test_the_distributor_never_repeats_a_label(granularity, steps):
    """Requests in time order, some at the same instant: dates strictly increase, are
    never later than the creation date, and give distinct, well-formed suffixes."""
    current, last, suffixes = F(1287587646), None, []
    r = as_granularity(granularity)
    for step in sorted(steps):
        request = current + step
        answer = distribute(request, last, r)
        assert last is None or answer.date_for_suffix > last
        assert answer.date_for_suffix <= answer.creation_date
        assert answer.delay == max(answer.creation_date - request, 0)
        assert answer.creation_date >= r * (request // r)
        assert (answer.date_for_suffix / r).denominator == 1  # on the grid T_r
        suffixes.append(repository_suffix(answer.date_for_suffix))
        assert suffix_seconds(suffixes[-1]) == answer.date_for_suffix
        last = answer.date_for_suffix
    assert len(set(suffixes)) == len(suffixes)


@given(
    st.integers(min_value=0, max_value=253402300799),
    st.integers(min_value=0, max_value=9),
    st.integers(min_value=0),
)
def test_suffixes_round_trip(whole, places, numerator):
    date = F(whole) + F(numerator % 10**places, 10**places)
    name = repository_name("mtc-m18.sid.inpe.br", None, date)
    value = parse_repository_name(name)
    assert suffix_seconds(value.suffix) == date
