"""go-yaml v2's scalar resolution (``resolve.go``): the tag and Go value of a plain scalar
(YAML 1.1: ``yes``/``on``/``y`` are booleans, ``0x10`` and ``0o7`` integers, timestamps stay
strings), with ``strconv``'s integer and float parsing and ``FormatFloat``.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

from ksched.yamlio.files import LoadError

__all__ = ["BINARY_TAG", "BOOL_TAG", "FLOAT_TAG", "INT_TAG", "MERGE_TAG", "NULL_TAG",
           "STR_TAG", "TIMESTAMP_TAG", "go_format_float", "resolve"]

_TAG = "tag:yaml.org,2002:"
STR_TAG, INT_TAG, FLOAT_TAG, BOOL_TAG, NULL_TAG = (_TAG + t for t in (
    "str", "int", "float", "bool", "null"))
BINARY_TAG, TIMESTAMP_TAG, MERGE_TAG = _TAG + "binary", _TAG + "timestamp", _TAG + "merge"


_BOOLS = {**dict.fromkeys(("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On",
                           "ON"), True),
          **dict.fromkeys(("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off",
                           "OFF"), False)}
_SPECIAL: dict[str, tuple[str, Any]] = {
    **{k: (BOOL_TAG, v) for k, v in _BOOLS.items()},
    **dict.fromkeys(("", "~", "null", "Null", "NULL"), (NULL_TAG, None)),
    **dict.fromkeys((".nan", ".NaN", ".NAN"), (FLOAT_TAG, math.nan)),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), (FLOAT_TAG, math.inf)),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), (FLOAT_TAG, -math.inf)),
    "<<": (MERGE_TAG, "<<"),
}
_YAML_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_GO_INT = re.compile(r"[-+]?(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)")
_GO_UINT = re.compile(r"(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)")
_TIMESTAMP_RE = re.compile(
    r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}"
    r"([Tt][0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(\.[0-9]+)?(Z|[-+][0-9]{2}:[0-9]{2})"
    r"| [0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(\.[0-9]+)?)?")
_UINT64 = 2**64


def _parse_go_int(text: str, unsigned: bool = False) -> int | None:
    """``strconv.ParseInt(text, 0, 64)`` / ``ParseUint``: the value, or None."""
    if not (_GO_UINT if unsigned else _GO_INT).fullmatch(text):
        return None
    sign, body = (-1, text[1:]) if text[:1] == "-" else (1, text.lstrip("+"))
    prefix = body[:2].lower()
    base = {"0x": 16, "0o": 8, "0b": 2}.get(prefix)
    if len(body) > 70:  # past 64 bits in any base (Python's int() refuses 4,300 digits)
        return None
    if base:
        value = int(body[2:], base)
    else:
        value = int(body, 8 if body.startswith("0") and len(body) > 1 else 10)
    value *= sign
    if unsigned:
        return value if value < _UINT64 else None
    return value if -(2**63) <= value < 2**63 else None


def _parse_go_float(text: str) -> float | None:
    """``strconv.ParseFloat(text, 64)`` for the forms go-yaml tries: None on overflow."""
    try:
        value = float(text)
    except ValueError:
        return None
    return None if math.isinf(value) else value


def resolve(tag: str, text: str) -> tuple[str, Any]:
    """go-yaml v2's ``resolve``: (resolved tag, value); raises for a tag the text cannot be."""
    if tag not in ("", STR_TAG, BOOL_TAG, INT_TAG, FLOAT_TAG, NULL_TAG, TIMESTAMP_TAG):
        return tag, text
    rtag, out = STR_TAG, text
    hint = _hint(text)
    if hint and tag != STR_TAG:
        if text in _SPECIAL:
            rtag, out = _SPECIAL[text]
        elif hint == ".":
            value = _parse_go_float(text) if _YAML_FLOAT.fullmatch(text) else None
            if value is not None:
                rtag, out = FLOAT_TAG, value
        elif hint in "DS":
            rtag, out = _resolve_number(tag, text)
    if tag in ("", rtag, STR_TAG):
        return rtag, out
    if tag == FLOAT_TAG and rtag == INT_TAG:
        return FLOAT_TAG, float(out)
    raise LoadError(f"yaml: cannot decode {_short_tag(rtag)} `{text}` as a {_short_tag(tag)}")


def _hint(text: str) -> str:
    """go-yaml's ``resolveTable`` class of the first character ("" for none)."""
    if not text:
        return "N"
    first = text[0]
    if first in "+-":
        return "S"
    if first in "0123456789":
        return "D"
    if first in "yYnNtTfFoO~":
        return "M"
    return "." if first == "." else ""


def _resolve_number(tag: str, text: str) -> tuple[str, Any]:
    if tag in ("", TIMESTAMP_TAG) and _TIMESTAMP_RE.fullmatch(text):
        return TIMESTAMP_TAG, text
    plain = text.replace("_", "")
    value = _parse_go_int(plain)
    if value is None:
        value = _parse_go_int(plain, unsigned=True)
    if value is not None:
        return INT_TAG, value
    if _YAML_FLOAT.fullmatch(plain):
        number = _parse_go_float(plain)
        if number is not None:
            return FLOAT_TAG, number
    return STR_TAG, text


def _short_tag(tag: str) -> str:
    return "!!" + tag[len(_TAG):] if tag.startswith(_TAG) else tag



def go_format_float(value: float, bits: int = 64) -> str:
    """``strconv.FormatFloat(value, 'g', -1, bits)``."""
    if math.isnan(value):
        return "NaN"
    with np.errstate(over="ignore"):
        number = np.float32(value) if bits == 32 else np.float64(value)
    if np.isinf(number):
        return "+Inf" if number > 0 else "-Inf"
    mantissa, exponent = np.format_float_scientific(number, unique=True, trim="-").split("e")
    sign = "-" if mantissa.startswith("-") else ""
    digits = mantissa.lstrip("-").replace(".", "")
    exp = int(exponent)
    if exp < -4 or exp >= 6:  # shortest 'g': %e outside [1e-4, 1e6)
        tail = "." + digits[1:] if len(digits) > 1 else ""
        return f"{sign}{digits[0]}{tail}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    point = exp + 1
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return sign + digits + "0" * (point - len(digits))
    return f"{sign}{digits[:point]}.{digits[point:]}"
