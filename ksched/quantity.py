"""Exact Kubernetes ``resource.Quantity`` parsing.

Re-implements the parsing and scaling behaviour of
``k8s.io/apimachinery/pkg/api/resource`` (``quantity.go``, ``suffix.go``,
``amount.go``, ``math.go``, ``scale_int.go``) as shipped with Kubernetes
v1.35.4, with exact rational arithmetic.

Grammar accepted (``ParseQuantity``)::

    <quantity>        ::= <signedNumber><suffix>
    <number>          ::= <digits> | <digits>.<digits> | <digits>. | .<digits>
    <suffix>          ::= <binarySI> | <decimalExponent> | <decimalSI>
    <binarySI>        ::= Ki | Mi | Gi | Ti | Pi | Ei
    <decimalSI>       ::= n | u | m | "" | k | M | G | T | P | E
    <decimalExponent> ::= "e" <signedNumber> | "E" <signedNumber>

Upstream quirks reproduced on purpose (all checked against the Go code):

* The number part may be empty or a lone sign/point: ``"-"``, ``"+"``,
  ``"."``, ``"m"``, ``"Ki"``, ``"e5"`` and ``"E"`` all parse as zero, while
  ``".Pi"``, ``".Ei"``, ``"Ei"`` and ``"e-10"`` are rejected (they take
  upstream's slow path, which needs at least one digit).
* ``".5"``, ``"5."`` and ``"1.Ki"`` are valid.
* Values are rounded away from zero to a multiple of 1e-9 (``"1e-10"`` is
  ``1n``); binary-suffixed values are capped at ``2**63 - 1`` in magnitude;
  decimal ones are not capped.
* The exponent of ``e``/``E`` is parsed as an int64 and then truncated to
  int32 (``"1e4294967296"`` is 1).
* ``MilliValue``/``Value`` return int64 results, which wrap or become 0 on
  overflow (``MilliValue("1E") == 0``), and round negative values either
  away from zero or "truncate then add one", depending on which internal
  representation upstream chose while parsing.

String (and ``int``/``float``) inputs to :func:`milli_value` and
:func:`value` reproduce the Go results bit for bit, including those quirks.
:class:`fractions.Fraction` inputs are rounded mathematically (ceiling).

**Quantities too large for the scheduler.** The API server bounds no decimal
quantity (``ValidateResourceQuantityValue`` only refuses negatives and, for
integer resources, fractions), so ``cpu: "1e18"`` is accepted; but
kube-scheduler then reads it through ``MilliValue``, whose int64 result
overflows: ``MilliValue("1e18")`` is 0, and such a pod would be placed as if it
asked for nothing. ksched refuses instead: :func:`scheduler_amount` raises
:class:`QuantityError` for any quantity whose exact ``ceil(q * 1000)`` (cpu) or
``ceil(q)`` (everything else) exceeds ``2**63 - 1``.
"""

from __future__ import annotations

import decimal
import functools
import math
import re
from fractions import Fraction
from typing import NamedTuple

__all__ = ["INT64_MAX", "QuantityError", "canonical", "cpu_milli", "milli_value",
           "parse_quantity", "scheduler_amount", "value"]


class QuantityError(ValueError):
    """The string is not a valid Kubernetes quantity.

    The message is ``invalid quantity "<text>"``, as upstream's
    ``ErrFormatWrong``/``ErrSuffix``/``ErrNumeric`` cases all collapse to it.
    """


_INT32_MIN = -(1 << 31)
_INT64_MAX = (1 << 63) - 1
_INT64_MIN = -(1 << 63)
_UINT64_MASK = (1 << 64) - 1

# Powers of ten beyond this are refused instead of computed: upstream accepts
# exponents up to the int32 range, but such values are never meaningful and
# would need gigabytes to hold exactly.
_MAX_POW10 = 10_000

_DIGITS = frozenset("0123456789")
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_GO_INT = re.compile(r"[+-]?[0-9]+")

_DECIMAL, _BINARY, _EXPONENT = "DecimalSI", "BinarySI", "DecimalExponent"

# suffix -> (base, exponent, format); mirrors suffix.go's tables.
_SUFFIXES: dict[str, tuple[int, int, str]] = {
    "": (10, 0, _DECIMAL),
    "n": (10, -9, _DECIMAL),
    "u": (10, -6, _DECIMAL),
    "m": (10, -3, _DECIMAL),
    "k": (10, 3, _DECIMAL),
    "M": (10, 6, _DECIMAL),
    "G": (10, 9, _DECIMAL),
    "T": (10, 12, _DECIMAL),
    "P": (10, 15, _DECIMAL),
    "E": (10, 18, _DECIMAL),
    "Ki": (2, 10, _BINARY),
    "Mi": (2, 20, _BINARY),
    "Gi": (2, 30, _BINARY),
    "Ti": (2, 40, _BINARY),
    "Pi": (2, 50, _BINARY),
    "Ei": (2, 60, _BINARY),
}


def _wrap32(n: int) -> int:
    """Two's-complement truncation to int32 (Go ``int32(n)`` / int32 overflow)."""
    return ((n - _INT32_MIN) & 0xFFFFFFFF) + _INT32_MIN


def _wrap64(n: int) -> int:
    """Two's-complement truncation to int64 (Go int64 overflow)."""
    return ((n - _INT64_MIN) & _UINT64_MASK) + _INT64_MIN


def _big_int64(n: int) -> int:
    """Mirrors Go ``big.Int.Int64``: low 64 bits of ``|n|``, then the sign."""
    low = _wrap64(abs(n) & _UINT64_MASK)
    return _wrap64(-low) if n < 0 else low


def _trunc_divmod(a: int, b: int) -> tuple[int, int]:
    """Go's truncated ``a / b`` and ``a % b`` for ``b > 0``."""
    q = abs(a) // b
    if a < 0:
        q = -q
    return q, a - q * b


class _Parsed(NamedTuple):
    """A parsed quantity as upstream stores it.

    ``unscaled * 10**exp10`` is the exact value. ``dec`` is False for
    upstream's ``int64Amount`` (fast path) and True for its ``inf.Dec``
    (slow path); the two scale to milli/units differently for negatives.
    """

    dec: bool
    unscaled: int
    exp10: int


def _digits_to_int(digits: str) -> int:
    """Convert ``[+-]digits`` of any length (no int-max-str-digits limit)."""
    if len(digits) < 4000:
        return int(digits)
    return int(decimal.Decimal(digits))


def _error(text: str) -> QuantityError:
    return QuantityError(f'invalid quantity "{text}"')


def _scan(text: str) -> tuple[bool, str, str, str, str]:
    """Split ``text`` into sign, number text, numerator, denominator and suffix.

    Mirrors apimachinery ``parseQuantityString``; raises on a malformed suffix.
    """
    positive = True
    pos = 0
    end = len(text)
    if end and text[0] in "+-":
        positive = text[0] == "+"
        pos = 1
    while pos < end and text[pos] == "0":  # leading zeros
        pos += 1
    if pos >= end:
        return positive, "0", "0", "", ""
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    num = text[start:pos] or "0"
    if pos >= end:
        return positive, text, num, "", ""
    denom = ""
    if text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        denom = text[start:pos]
        if pos >= end:
            return positive, text, num, denom, ""
    number = text[:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos < end:
        raise _error(text)
    return positive, number, num, denom, text[suffix_start:]


def _interpret(suffix: str, text: str) -> tuple[int, int, str]:
    """Return ``(base, exponent, format)`` for a suffix.

    Mirrors apimachinery ``suffixHandler.interpret`` (exponent parsed as an
    int64, then truncated to int32).
    """
    known = _SUFFIXES.get(suffix)
    if known is not None:
        return known
    if len(suffix) > 1 and suffix[0] in "eE" and _GO_INT.fullmatch(suffix, 1):
        parsed = int(suffix[1:])
        if _INT64_MIN <= parsed <= _INT64_MAX:
            return 10, _wrap32(parsed), _EXPONENT
    raise _error(text)


def _parse(text: str) -> _Parsed:
    """Mirrors apimachinery ``resource.ParseQuantity`` (value only, not format)."""
    if not text:
        raise _error(text)
    if text == "0":
        return _Parsed(False, 0, 0)
    positive, number, num, denom, suffix = _scan(text)
    base, exponent, fmt = _interpret(suffix, text)

    # Fast path: the value fits an int64 at a scale of at least 1e-9.
    mantissa = 1
    if fmt == _BINARY:
        scale = 0
        if exponent >= 0 and not denom:
            mantissa = 1 << exponent
            precision = 15 - len(num) - exponent * 3 // 10 - 1
        else:
            precision = -1
    else:
        scale = exponent
        precision = 18 - (len(num) + len(denom))
    if precision >= 0:
        scale = _wrap32(scale - len(denom))
        if scale >= -9:
            shifted = _digits_to_int(num + denom)
            if shifted > _INT64_MAX:
                raise _error(text)
            result = shifted * mantissa
            if result <= _INT64_MAX:
                return _Parsed(False, result if positive else -result, scale)

    # Slow path: arbitrary precision decimal (inf.Dec), value = unscaled / 10**dec_scale.
    if not any(c in _DIGITS for c in number):
        raise _error(text)
    whole, _, frac = number.partition(".")
    unscaled = _digits_to_int(whole + frac)
    dec_scale = len(frac)
    if base == 10:
        dec_scale = _wrap32(dec_scale + _wrap32(-exponent))
    else:
        unscaled <<= exponent
    negative = unscaled < 0
    unscaled = abs(unscaled)
    if unscaled:
        # Round away from zero to nano (inf.Dec.Round to scale 9, RoundUp).
        shift = _wrap32(9 - dec_scale)
        if shift > 0:
            if shift > _MAX_POW10:
                raise QuantityError(f'quantity "{text}" is too large to represent')
            unscaled *= 10**shift
        elif shift < 0:
            if shift == _INT32_MIN:  # upstream panics (index out of range)
                raise QuantityError(f'quantity "{text}" is too large to represent')
            if -shift * 3 >= unscaled.bit_length():  # unscaled < 10**-shift
                unscaled = 1
            else:
                q, r = divmod(unscaled, 10**-shift)
                unscaled = q + 1 if r else q
        dec_scale = 9
        if fmt == _BINARY and unscaled > _INT64_MAX * 10**9:
            unscaled, dec_scale = _INT64_MAX, 0
    return _Parsed(True, -unscaled if negative else unscaled, -dec_scale)


@functools.lru_cache(maxsize=65536)
def _parse_cached(text: str) -> _Parsed:
    """Memoized :func:`_parse` (quantity spellings repeat a lot)."""
    return _parse(text)


def _positive_scale(base: int, shift: int) -> int:
    """Mirrors ``positiveScaleInt64`` as seen through ``ScaledValue`` (ok ignored)."""
    if shift <= 0:  # case 0, and the loop that never runs for a negative scale
        return base
    if shift in (1, 2, 3, 6, 9):  # specialised multiplies: wrap on overflow
        return _wrap64(base * 10**shift)
    if base == 0:
        return 0
    if shift > 19:
        return 0
    result = base * 10**shift  # step-by-step multiply: 0 on overflow
    return result if _INT64_MIN < result <= _INT64_MAX else 0


def _negative_scale(base: int, shift: int) -> int:
    """Mirrors ``negativeScaleInt64``: divide by ``10**shift``, away from zero."""
    q, r = _trunc_divmod(base, 10**shift)
    if r:
        q += 1 if base > 0 else -1
    return q


def _dec_scaled_value(unscaled: int, scale: int, new_scale: int) -> int:
    """Mirrors apimachinery ``scaledValue`` for an ``inf.Dec`` quantity."""
    if unscaled == 0:
        return 0
    dif = scale - new_scale
    if dif == 0:
        return _big_int64(unscaled)
    if dif < 0:
        factor = 10**-dif if -dif <= 18 else _INT64_MIN  # int64(math.Pow10(n)) on amd64
        return _wrap64(_big_int64(unscaled) * factor)
    if unscaled < _INT64_MAX and dif < 19:
        q, r = _trunc_divmod(_big_int64(unscaled), 10**dif)
        return q + 1 if r else q
    q, r = divmod(unscaled, 10**dif)
    return _wrap64(_big_int64(q) + 1) if r else _big_int64(q)


def _scaled_value(parsed: _Parsed, scale: int) -> int:
    """Mirrors apimachinery ``Quantity.ScaledValue``: ceil(q / 10**scale) as int64."""
    if parsed.dec:
        return _dec_scaled_value(parsed.unscaled, -parsed.exp10, -scale)
    if parsed.exp10 < scale:
        return _negative_scale(parsed.unscaled, scale - parsed.exp10)
    return _positive_scale(parsed.unscaled, _wrap32(parsed.exp10 - scale))


def _to_fraction(parsed: _Parsed, text: str) -> Fraction:
    """Exact value of a parsed quantity (refuses absurd exponents)."""
    if parsed.unscaled == 0:
        return Fraction(0)
    if abs(parsed.exp10) > _MAX_POW10:
        raise QuantityError(f'quantity "{text}" is too large to represent')
    if parsed.exp10 >= 0:
        return Fraction(parsed.unscaled * 10**parsed.exp10)
    return Fraction(parsed.unscaled, 10**-parsed.exp10)


@functools.lru_cache(maxsize=65536)
def _fraction_cached(text: str) -> Fraction:
    """Memoized exact value of quantity text."""
    return _to_fraction(_parse_cached(text), text)


def _text_of(text: object) -> str:
    """Normalise str/float input to quantity text; reject everything else."""
    if isinstance(text, str):
        return text
    if isinstance(text, float):
        if not math.isfinite(text):
            raise _error(float.__repr__(text))
        return float.__repr__(text)
    raise _error(str(text))


def _parsed_of(text: object) -> _Parsed:
    """Parse str/int/float input as upstream would parse its JSON spelling."""
    if isinstance(text, int) and not isinstance(text, bool):
        n = int(text)
        if -(10**18) < n < 10**18:  # at most 18 digits: the int64 fast path
            return _Parsed(False, n, 0)
        return _Parsed(True, n * 10**9, -9)
    return _parse_cached(_text_of(text))


def parse_quantity(text: str | int | float) -> Fraction:
    """Return the exact value of a Kubernetes quantity.

    Mirrors apimachinery ``resource.ParseQuantity`` (the value it stores,
    including rounding up to 1e-9 and the binary-suffix cap at 2**63-1).

    Parameters
    ----------
    text : str or int or float
        Quantity text such as ``"100m"``, ``"1.5Gi"`` or ``"1e3"``; ints are
        taken as-is, finite floats via their ``repr``. Bools are rejected.

    Returns
    -------
    fractions.Fraction
        The exact quantity value.

    Raises
    ------
    QuantityError
        If ``text`` is not a valid quantity (or its exponent is too extreme to
        represent exactly).
    """
    if isinstance(text, int) and not isinstance(text, bool):
        return Fraction(int(text))
    return _fraction_cached(_text_of(text))


@functools.lru_cache(maxsize=65536)
def _scaled_cached(text: str, scale: int) -> int:
    """Memoized Go ``ScaledValue`` of quantity text."""
    return _scaled_value(_parse_cached(text), scale)


def _scaled(text_or_fraction: str | int | float | Fraction, scale: int) -> int:
    if isinstance(text_or_fraction, str):
        return _scaled_cached(text_or_fraction, scale)
    if isinstance(text_or_fraction, Fraction):
        num, den = text_or_fraction.numerator, text_or_fraction.denominator
        if scale <= 0:
            return -(-num * 10**-scale // den)
        return -(-num // (den * 10**scale))
    return _scaled_value(_parsed_of(text_or_fraction), scale)


def milli_value(text_or_fraction: str | int | float | Fraction) -> int:
    """Return the quantity in thousandths, rounded up.

    Mirrors apimachinery ``Quantity.MilliValue`` (``ScaledValue(Milli)``).

    Parameters
    ----------
    text_or_fraction : str or int or float or fractions.Fraction
        Quantity text (int/float as for :func:`parse_quantity`), or an exact
        value as returned by :func:`parse_quantity`.

    Returns
    -------
    int
        For text, exactly Go's int64 result: ``ceil(q * 1000)`` for
        non-negative values in range, with upstream's int64 overflow and
        negative-rounding behaviour otherwise. For a Fraction,
        ``ceil(q * 1000)`` (toward +inf, unbounded).

    Raises
    ------
    QuantityError
        If the text is not a valid quantity.
    """
    return _scaled(text_or_fraction, -3)


def value(text_or_fraction: str | int | float | Fraction) -> int:
    """Return the quantity in whole units, rounded up.

    Mirrors apimachinery ``Quantity.Value`` (``ScaledValue(0)``).

    Parameters
    ----------
    text_or_fraction : str or int or float or fractions.Fraction
        Quantity text (int/float as for :func:`parse_quantity`), or an exact
        value as returned by :func:`parse_quantity`.

    Returns
    -------
    int
        For text, exactly Go's int64 result (see :func:`milli_value`); for a
        Fraction, ``ceil(q)``.

    Raises
    ------
    QuantityError
        If the text is not a valid quantity.
    """
    return _scaled(text_or_fraction, 0)


def cpu_milli(text: str | int | float | Fraction) -> int:
    """Return a CPU quantity in millicores; alias of :func:`milli_value`.

    Mirrors apimachinery ``Quantity.MilliValue`` as used for ``cpu``.
    """
    return milli_value(text)


# --------------------------------------------------------------------------- scheduler units

INT64_MAX = _INT64_MAX

#: What :func:`scheduler_amount` counts, per resource, for its too-large message.
_UNITS = {"cpu": "millicores", "memory": "bytes", "ephemeral-storage": "bytes"}


@functools.lru_cache(maxsize=65536)
def _amount_cached(text: str, milli: bool) -> int:
    exact = parse_quantity(text)
    return math.ceil(exact * 1000) if milli else math.ceil(exact)


def scheduler_amount(name: str, text: str | float) -> int:
    """The amount kube-scheduler counts: ``MilliValue`` for ``cpu``, ``Value`` otherwise.

    Both round up (``ceil``), as upstream does for every non-negative quantity in range.

    Parameters
    ----------
    name : str
        The resource name (``cpu`` is counted in millicores, the rest in units).
    text : str or int or float
        Quantity text, or a number as for :func:`parse_quantity`.

    Returns
    -------
    int
        The amount, at most ``2**63 - 1`` in magnitude.

    Raises
    ------
    QuantityError
        If the text is not a valid quantity, or the amount does not fit an int64 (where
        upstream's ``MilliValue`` / ``Value`` would overflow, see the module docstring).
    """
    milli = name == "cpu"
    if isinstance(text, str):
        amount = _amount_cached(text, milli)
    else:
        exact = parse_quantity(text)
        amount = math.ceil(exact * 1000) if milli else math.ceil(exact)
    if not _INT64_MIN <= amount <= _INT64_MAX:
        unit = _UNITS.get(name, "bytes" if name.startswith("hugepages-") else "units")
        shown = text if isinstance(text, str) else repr(text)
        raise QuantityError(f'quantity "{shown}" is too large: kube-scheduler counts {name} '
                            f"as an int64 number of {unit} (at most {_INT64_MAX})")
    return amount


_DECIMAL_SUFFIXES = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T",
                     15: "P", 18: "E"}
_BINARY_SUFFIXES = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")


def _format_of(text: str | float) -> str:
    """The ``Format`` upstream's parser gives ``text`` (from its suffix)."""
    if not isinstance(text, str):
        return _DECIMAL
    suffix = _scan(text)[4]
    if suffix.endswith("i"):
        return _BINARY
    return _EXPONENT if len(suffix) > 1 and suffix[0] in "eE" else _DECIMAL


def round_up_milli(exact: Fraction) -> Fraction:
    """``Quantity.RoundUp(Milli)`` (``SetDefaults_ResourceList``): away from zero."""
    scaled = exact * 1000
    whole = math.ceil(scaled) if scaled > 0 else math.floor(scaled)
    return Fraction(whole, 1000)


def canonical(text: str | float) -> str:
    """``Quantity.String()`` of a quantity as the API server stores it (after
    ``SetDefaults_ResourceList`` rounded it up to milli-units), for messages.

    ``"1.5"`` gives ``"1500m"``, ``"1536Mi"`` gives ``"1536Mi"``, ``"2048Mi"`` gives ``"2Gi"``,
    ``"1e3"`` gives ``"1e3"``. Mirrors ``CanonicalizeBytes``; decimal exponents above 18
    keep the ``E`` suffix (upstream prints no suffix there).

    Raises
    ------
    QuantityError
        If the text is not a valid quantity.
    """
    exact = round_up_milli(parse_quantity(text))
    if exact == 0:
        return "0"
    fmt = _format_of(text)
    if fmt == _BINARY:
        if -1024 < exact < 1024 or exact.denominator != 1:
            fmt = _DECIMAL
        else:
            mantissa, power = exact.numerator, 0
            while mantissa % 1024 == 0 and power < len(_BINARY_SUFFIXES) - 1:
                mantissa //= 1024
                power += 1
            return f"{mantissa}{_BINARY_SUFFIXES[power]}"
    # mantissa * 10**exponent, exponent lowered to a multiple of 3 (AsCanonicalBytes)
    mantissa, exponent = exact.numerator * 1000 // exact.denominator, -3
    while mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    shift = exponent % 3
    mantissa, exponent = mantissa * 10**shift, exponent - shift
    if fmt == _EXPONENT:
        return f"{mantissa}e{exponent}" if exponent else str(mantissa)
    if exponent > 18:
        mantissa, exponent = mantissa * 10 ** (exponent - 18), 18
    return f"{mantissa}{_DECIMAL_SUFFIXES[exponent]}"
