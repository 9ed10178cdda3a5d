"""Tests for ksched.quantity (Kubernetes resource.Quantity parsing).

The ``GOLDEN`` table was recorded from the Go implementation itself
(k8s.io/apimachinery pkg/api/resource of Kubernetes v1.35, via ParseQuantity,
Quantity.Value and Quantity.MilliValue), so it pins upstream's quirks: lone
signs and points parsing as zero, int32 exponent truncation, int64 overflow
of MilliValue/Value, and the two rounding modes for negative values.
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ksched import quantity as q
from ksched.quantity import QuantityError, cpu_milli, milli_value, parse_quantity, value

INT64_MAX = (1 << 63) - 1
HUGE = "huge"  # valid upstream, but too large for parse_quantity to return exactly

# (text, exact value or None if invalid or HUGE, Go Value(), Go MilliValue())
GOLDEN: list[tuple[str, str | None, int | None, int | None]] = [
    ('0', '0', 0, 0),
    ('1', '1', 1, 1000),
    ('-1', '-1', -1, -1000),
    ('+1', '1', 1, 1000),
    ('100m', '1/10', 1, 100),
    ('0.1', '1/10', 1, 100),
    ('1.5', '3/2', 2, 1500),
    ('1Ki', '1024', 1024, 1024000),
    ('128974848', '128974848', 128974848, 128974848000),
    ('129e6', '129000000', 129000000, 129000000000),
    ('129M', '129000000', 129000000, 129000000000),
    ('123Mi', '128974848', 128974848, 128974848000),
    ('1e-3', '1/1000', 1, 1),
    ('0.0001', '1/10000', 1, 1),
    ('1n', '1/1000000000', 1, 1),
    ('1u', '1/1000000', 1, 1),
    ('1m', '1/1000', 1, 1),
    ('1k', '1000', 1000, 1000000),
    ('1M', '1000000', 1000000, 1000000000),
    ('1G', '1000000000', 1000000000, 1000000000000),
    ('1T', '1000000000000', 1000000000000, 1000000000000000),
    ('1P', '1000000000000000', 1000000000000000, 1000000000000000000),
    ('1E', '1000000000000000000', 1000000000000000000, 0),
    ('1Mi', '1048576', 1048576, 1048576000),
    ('1Gi', '1073741824', 1073741824, 1073741824000),
    ('1Ti', '1099511627776', 1099511627776, 1099511627776000),
    ('1Pi', '1125899906842624', 1125899906842624, 1125899906842624000),
    ('1Ei', '1152921504606846976', 1152921504606846976, -9223372036854775808),
    ('500m', '1/2', 1, 500),
    ('250m', '1/4', 1, 250),
    ('1.5Gi', '1610612736', 1610612736, 1610612736000),
    ('0.5Gi', '536870912', 536870912, 536870912000),
    ('1.5Ki', '1536', 1536, 1536000),
    ('.5', '1/2', 1, 500),
    ('5.', '5', 5, 5000),
    ('1.Ki', '1024', 1024, 1024000),
    ('.', '0', 0, 0),
    ('-', '0', 0, 0),
    ('+', '0', 0, 0),
    ('-.', '0', 0, 0),
    ('m', '0', 0, 0),
    ('Ki', '0', 0, 0),
    ('e5', '0', 0, 0),
    ('E', '0', 0, 0),
    ('k', '0', 0, 0),
    ('Ti', '0', 0, 0),
    ('.Ti', '0', 0, 0),
    ('.Pi', None, None, None),
    ('.Ei', None, None, None),
    ('Ei', None, None, None),
    ('e-10', None, None, None),
    ('.e-10', None, None, None),
    ('1e-10', '1/1000000000', 1, 1),
    ('-1e-10', '-1/1000000000', 1, 1),
    ('1e-9', '1/1000000000', 1, 1),
    ('1.5n', '1/500000000', 1, 1),
    ('-1.5n', '-1/500000000', 1, 1),
    ('0.0000000001', '1/1000000000', 1, 1),
    ('-0.0000000001', '-1/1000000000', 1, 1),
    ('.000000000001Ki', '1/500000000', 1, 1),
    ('1E3', '1000', 1000, 1000000),
    ('1e+3', '1000', 1000, 1000000),
    ('1e-0', '1', 1, 1000),
    ('1e05', '100000', 100000, 100000000),
    ('1.5E-2', '3/200', 1, 15),
    ('-0.5', '-1/2', -1, -500),
    ('-1.5', '-3/2', -2, -1500),
    ('-0.0001', '-1/10000', -1, -1),
    ('-100m', '-1/10', -1, -100),
    ('-1Ki', '-1024', -1024, -1024000),
    ('-0.50000000000000000000', '-1/2', 1, -500),
    ('-1.50000000000000000000', '-3/2', 0, -1500),
    ('-0.1Ki', '-512/5', -101, -102400),
    ('-1Pi', '-1125899906842624', -2882303760, -2882303761516),
    ('-1Ei', '-1152921504606846976', 0, 0),
    ('007', '7', 7, 7000),
    ('-007.500', '-15/2', -8, -7500),
    ('000.000', '0', 0, 0),
    ('0.0', '0', 0, 0),
    ('-0', '0', 0, 0),
    ('1E', '1000000000000000000', 1000000000000000000, 0),
    ('9E', '9000000000000000000', 9000000000000000000, 0),
    ('10E', '10000000000000000000', 0, 0),
    ('9.3E', '9300000000000000000', 0, 0),
    ('1e18', '1000000000000000000', 1000000000000000000, 0),
    ('1e19', '10000000000000000000', 0, 0),
    ('1e30', '1000000000000000000000000000000', 0, 0),
    ('922337203685477580', '922337203685477580', 922337203685477580, -800),
    ('9223372036854775807', '9223372036854775807', 9223372036854775807, -1000),
    ('9223372036854775808', '9223372036854775808', -9223372036854775808, 0),
    ('-9223372036854775808', '-9223372036854775808', 0, 0),
    ('9223372036854775807m', '9223372036854775807/1000', 9223372036854776, 9223372036854775807),
    ('9223372036.854775807', '9223372036854775807/1000000000', 9223372037, 9223372036855),
    ('8Ei', '9223372036854775807', 9223372036854775807, -1000),
    ('-8Ei', '-9223372036854775807', -9223372036854775807, 1000),
    ('7.5Ei', '8646911284551352320', 8646911284551352320, -4611686018427387904),
    ('16Ei', '9223372036854775807', 9223372036854775807, -1000),
    ('-16Ei', '-9223372036854775807', -9223372036854775807, 1000),
    ('1e9223372036854775807', '1/10', 1, 100),
    ('1e4294967296', '1', 1, 1000),
    ('1e-9223372036854775808', '1', 1, 1000),
    ('1.5e-2147483648', HUGE, 0, 15),
    ('1e2147483647', HUGE, 0, 1),
    ('12345678901234567890', '12345678901234567890', -6101065172474983726, 4807115922877858896),
    ('0.123456789012345678901', '12345679/100000000', 1, 124),
    ('123456789.123456789123', '12345678912345679/100000000', 123456790, 123456789124),
    ('1e9223372036854775808', None, None, None),
    ('', None, None, None),
    ('1.5.0', None, None, None),
    ('1KiB', None, None, None),
    ('1k1', None, None, None),
    ('--1', None, None, None),
    ('+-1', None, None, None),
    ('1.', '1', 1, 1000),
    ('1e', None, None, None),
    ('1e1.5', None, None, None),
    ('1 ', None, None, None),
    (' 1', None, None, None),
    ('1,5', None, None, None),
    ('0x10', None, None, None),
    ('1K', None, None, None),
    ('1i', None, None, None),
    ('1mi', None, None, None),
    ('1kk', None, None, None),
    ('1ee3', None, None, None),
    ('1e3m', None, None, None),
    ('1Mi2', None, None, None),
    ('1m-', None, None, None),
    ('one', None, None, None),
    ('1_000', None, None, None),
    ('١', None, None, None),
]

DECIMAL_SUFFIXES = {
    "n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": Fraction(1),
    "k": Fraction(10**3), "M": Fraction(10**6), "G": Fraction(10**9), "T": Fraction(10**12),
    "P": Fraction(10**15), "E": Fraction(10**18),
}
BINARY_SUFFIXES = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}


@pytest.mark.parametrize(("text", "exact", "go_value", "go_milli"), GOLDEN, ids=repr)
def test_golden_matches_go(text, exact, go_value, go_milli):
    if exact is None:
        for fn in (parse_quantity, value, milli_value):
            with pytest.raises(QuantityError) as info:
                fn(text)
            assert str(info.value) == f'invalid quantity "{text}"'
        return
    if exact == HUGE:
        with pytest.raises(QuantityError):
            parse_quantity(text)
    else:
        assert parse_quantity(text) == Fraction(exact)
    assert value(text) == go_value
    assert milli_value(text) == go_milli
    assert cpu_milli(text) == go_milli


@pytest.mark.parametrize(
    ("text", "milli"),
    [
        ("100m", 100), ("0.1", 100), ("1", 1000), ("1.5", 1500), ("1Ki", 1024000),
        ("128974848", 128974848000), ("129e6", 129 * 10**9), ("129M", 129 * 10**9),
        ("123Mi", 123 * 2**20 * 1000), ("1e-3", 1), ("0.0001", 1), ("1n", 1), ("-1", -1000),
        ("2", 2000), ("250m", 250), ("0.5", 500), ("1.001", 1001), ("1.0001", 1001),
        ("0", 0), ("0m", 0), ("-0.0001", -1), ("3.14159", 3142), ("2.5e-1", 250),
    ],
)
def test_cpu_spellings(text, milli):
    assert cpu_milli(text) == milli
    assert milli_value(text) == milli


@pytest.mark.parametrize(
    ("text", "units"),
    [
        ("1n", 1), ("1m", 1), ("0.5", 1), ("1", 1), ("1.000000001", 2), ("128974848", 128974848),
        ("129e6", 129000000), ("129M", 129000000), ("123Mi", 128974848), ("1Gi", 2**30),
        ("1.5Gi", 3 * 2**29), ("-1", -1), ("-1.5", -2), ("0", 0),
    ],
)
def test_value_spellings(text, units):
    assert value(text) == units


@pytest.mark.parametrize(
    "text",
    ["", " ", "1.5.0", "1KiB", "1k1", "--1", "+-1", "1e", "1 ", " 1", "1Gb", "1.2.3Mi", "1e3.5",
     "Ei", ".Ei", "abc", "1ki", "1KI", "1mm", "1e1e1", "1\n", "١٢"],
)
def test_invalid_message(text):
    with pytest.raises(QuantityError) as info:
        parse_quantity(text)
    assert str(info.value) == f'invalid quantity "{text}"'
    assert isinstance(info.value, ValueError)


def test_invalid_message_exact():
    with pytest.raises(QuantityError, match=r'^invalid quantity "1\.5\.0"$'):
        parse_quantity("1.5.0")


@pytest.mark.parametrize(
    ("text", "exact"),
    [(".5", Fraction(1, 2)), ("5.", Fraction(5)), (".", Fraction(0)), ("-", Fraction(0)),
     ("+", Fraction(0)), ("Ki", Fraction(0)), ("m", Fraction(0)), ("1.Ki", Fraction(1024)),
     ("1.5e-2", Fraction(3, 200)), ("1e-10", Fraction(1, 10**9)), ("16Ei", Fraction(INT64_MAX)),
     ("-16Ei", Fraction(-INT64_MAX)), ("1e30", Fraction(10**30)), ("1e4294967296", Fraction(1))],
)
def test_upstream_quirks(text, exact):
    assert parse_quantity(text) == exact


def test_negative_rounding_depends_on_upstream_representation():
    # int64 fast path: away from zero.
    assert value("-1.5") == -2 and milli_value("-0.0001") == -1
    # inf.Dec slow path (more than 18 digits): truncate, then add one.
    assert value("-1.50000000000000000000") == 0
    assert value("-0.50000000000000000000") == 1
    assert value("-0.1Ki") == -101


def test_int64_overflow_like_go():
    assert milli_value("1E") == 0  # 10**21 overflows: the loop path yields 0
    assert milli_value("1Ei") == -(2**63)  # x1000 path wraps
    assert value("10E") == 0
    assert milli_value("9223372036854775807m") == INT64_MAX


def test_int_float_bool_and_fraction_inputs():
    assert parse_quantity(3) == 3
    assert parse_quantity(-2) == -2
    assert parse_quantity(0.25) == Fraction(1, 4)
    assert parse_quantity(1e20) == 10**20
    assert milli_value(2) == 2000 and value(2) == 2
    assert milli_value(0.1) == 100 and value(1.5) == 2
    assert milli_value(12345678901234567890) == milli_value("12345678901234567890")
    assert milli_value(Fraction(1, 3)) == 334
    assert value(Fraction(1, 3)) == 1
    assert value(Fraction(-3, 2)) == -1  # Fractions round toward +inf
    assert milli_value(Fraction(10**21)) == 10**24  # no int64 wrap for Fractions
    for bad in (True, False, float("nan"), float("inf"), float("-inf"), None, [1], b"1"):
        with pytest.raises(QuantityError):
            parse_quantity(bad)
        with pytest.raises(QuantityError):
            milli_value(bad)


def test_parse_is_cached():
    q._parse_cached.cache_clear()
    parse_quantity("1234Mi")
    value("1234Mi")
    milli_value("1234Mi")
    info = q._parse_cached.cache_info()
    assert info.misses == 1 and info.hits >= 1
    assert parse_quantity("1234Mi") is parse_quantity("1234Mi")


def test_long_digit_strings():
    digits = "1" * 5000
    assert parse_quantity(digits) == int(Decimal(digits))
    assert parse_quantity("0." + "0" * 5000 + "1") == Fraction(1, 10**9)
    assert parse_quantity("0" * 5000 + "1m") == Fraction(1, 1000)


def test_absurd_exponent_refused_not_hung():
    with pytest.raises(QuantityError, match="too large"):
        parse_quantity("1e2147483647")
    assert milli_value("1e2147483647") == 1  # Go: int32 scale arithmetic wraps
    assert value("1e1000000") == 0
    assert parse_quantity("0e2147483647") == 0


# --- properties -------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(n=st.integers(min_value=-(10**12), max_value=10**12),
       suffix=st.sampled_from(sorted(DECIMAL_SUFFIXES)))
def test_decimal_suffix_multiplies(n, suffix):
    assert parse_quantity(f"{n}{suffix}") == n * DECIMAL_SUFFIXES[suffix]


@settings(max_examples=300, deadline=None)
@given(n=st.integers(min_value=-(10**6), max_value=10**6),
       suffix=st.sampled_from(sorted(BINARY_SUFFIXES)))
def test_binary_suffix_multiplies_with_cap(n, suffix):
    exact = abs(n) * BINARY_SUFFIXES[suffix]
    expected = min(exact, INT64_MAX) * (-1 if n < 0 else 1)
    assert parse_quantity(f"{n}{suffix}") == expected
    if n >= 0 and exact <= INT64_MAX:
        # Negative values on upstream's inf.Dec path come back garbled (see GOLDEN "-1Pi").
        assert value(f"{n}{suffix}") == exact


@settings(max_examples=300, deadline=None)
@given(n=st.integers(min_value=-(10**6), max_value=10**6),
       exp=st.integers(min_value=-9, max_value=20), letter=st.sampled_from("eE"))
def test_exponent_suffix_multiplies(n, exp, letter):
    assert parse_quantity(f"{n}{letter}{exp}") == n * Fraction(10) ** exp


decimal_text = st.builds(
    lambda whole, frac, dot: whole + ("." + frac if dot else ""),
    st.text("0123456789", min_size=1, max_size=15),
    st.text("0123456789", min_size=0, max_size=25),
    st.booleans(),
)


@settings(max_examples=500, deadline=None)
@given(text=decimal_text, suffix=st.sampled_from(["", "n", "u", "m", "k", "M", "G"]))
def test_non_negative_milli_is_ceil(text, suffix):
    exact = Fraction(Decimal(text)) * DECIMAL_SUFFIXES[suffix]
    expected_milli = math.ceil(exact * 1000)
    if expected_milli > INT64_MAX:
        return  # Go's int64 result would overflow
    spelled = text + suffix
    assert milli_value(spelled) == expected_milli
    assert value(spelled) == math.ceil(exact)
    assert parse_quantity(spelled) == Fraction(math.ceil(exact * 10**9), 10**9)
    assert milli_value(parse_quantity(spelled)) == expected_milli
    assert cpu_milli(spelled) == expected_milli


@settings(max_examples=300, deadline=None)
@given(whole=st.text("0123456789", min_size=1, max_size=9), frac=st.text("0123456789", max_size=6))
def test_negative_fast_path_rounds_away_from_zero(whole, frac):
    text = f"-{whole}.{frac}"
    exact = -Fraction(Decimal(f"{whole}.{frac}"))
    assert parse_quantity(text) == exact
    assert milli_value(text) == -math.ceil(-exact * 1000)
    assert value(text) == -math.ceil(-exact)


# --------------------------------------------------------------------------- scheduler units


@pytest.mark.parametrize(("name", "text", "amount"), [
    ("cpu", "1", 1000), ("cpu", "0.1m", 1), ("cpu", 2, 2000), ("cpu", 0.25, 250),
    ("memory", "1.5", 2), ("memory", "1Gi", 2**30), ("hugepages-2Mi", "4Mi", 4 * 2**20),
    ("cpu", "9223372036854775807m", INT64_MAX), ("memory", "9223372036854775807", INT64_MAX),
    # binary suffixes are capped at 2**63 - 1 by the parser, so they always fit
    ("memory", "100Ei", INT64_MAX),
])
def test_scheduler_amount(name, text, amount):
    assert q.scheduler_amount(name, text) == amount


@pytest.mark.parametrize(("name", "text", "unit"), [
    ("cpu", "1e18", "millicores"), ("cpu", "9223372036854776", "millicores"),
    ("memory", "1e19", "bytes"), ("ephemeral-storage", "10E", "bytes"),
    ("hugepages-1Gi", "1e19", "bytes"), ("example.com/gpu", "1e19", "units"),
    ("cpu", 10**19, "millicores"),
])
def test_scheduler_amount_refuses_what_int64_cannot_hold(name, text, unit):
    """Upstream accepts these and its MilliValue / Value overflow (MilliValue("1e18") is 0):
    ksched refuses them instead."""
    with pytest.raises(QuantityError) as info:
        q.scheduler_amount(name, text)
    assert str(info.value) == (f'quantity "{text}" is too large: kube-scheduler counts {name} '
                               f"as an int64 number of {unit} (at most {INT64_MAX})")
    if isinstance(text, str):
        assert milli_value(text) != math.ceil(parse_quantity(text) * 1000) or name != "cpu"


def test_go_milli_value_of_1e18_is_zero():
    """What the scheduler would count without ksched's refusal."""
    assert milli_value("1e18") == 0


@pytest.mark.parametrize(("text", "shown"), [
    ("0", "0"), ("1", "1"), ("1.5", "1500m"), ("100m", "100m"), ("0.1", "100m"),
    ("1.0001m", "2m"), ("-1", "-1"), ("-0.5", "-500m"), ("1500", "1500"), ("1.5k", "1500"),
    ("1k", "1k"), ("1E", "1E"), ("1536Mi", "1536Mi"), ("2048Mi", "2Gi"), ("0.5Gi", "512Mi"),
    ("1023Ki", "1023Ki"), ("1.5Ki", "1536"), ("512", "512"), ("1e3", "1e3"), ("12e2", "1200"),
    ("-1Gi", "-1Gi"), (7, "7"), (2.5, "2500m"), ("110.5", "110500m"),
])
def test_canonical_is_quantity_string(text, shown):
    """``Quantity.String()`` after ``SetDefaults_ResourceList`` rounds up to milli-units."""
    assert q.canonical(text) == shown
