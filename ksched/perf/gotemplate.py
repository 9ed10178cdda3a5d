"""The small subset of Go's ``text/template`` that scheduler_perf's templates use.

Upstream renders each object template with ``text/template`` before decoding it. The suite's
templates use only actions of the forms ``{{.Field}}`` (``.Index``, ``.Count`` and any template
parameter) and ``{{FUNC ARG ARG}}`` with the integer functions upstream registers, in both
spellings found across versions: ``mod``/``Mod`` (Go's ``%``) and ``div``/``DivideInt`` (Go's
``/``, truncating toward zero). An argument is a field or an integer literal. Anything else is
refused naming the template file, so a template using more is never rendered wrongly.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from ksched.errors import InvalidObjectError

__all__ = ["render", "has_actions"]

_ACTION = re.compile(r"\{\{-?\s*(.*?)\s*-?\}\}", re.DOTALL)
_FIELD = re.compile(r"^\.([A-Za-z_][A-Za-z0-9_]*)$")
_INTEGER = re.compile(r"^-?[0-9]+$")


def _go_div(a: int, b: int) -> int:
    """Go's integer division: truncated toward zero."""
    quotient = abs(a) // abs(b)
    return quotient if (a >= 0) == (b >= 0) else -quotient


def _go_mod(a: int, b: int) -> int:
    """Go's ``%``: the sign of the dividend."""
    return a - b * _go_div(a, b)


_FUNCTIONS: dict[str, Callable[[int, int], int]] = {
    "mod": _go_mod, "Mod": _go_mod, "div": _go_div, "DivideInt": _go_div,
}


def has_actions(text: str) -> bool:
    """Whether ``text`` holds any ``{{ ... }}`` action (else rendering is the identity)."""
    return "{{" in text


def render(text: str, data: Mapping[str, Any], source: str) -> str:
    """Render ``text`` (a template read from ``source``) with ``data`` (``Index``, ``Count``
    and the template parameters).

    Raises
    ------
    InvalidObjectError
        An action outside the subset, an unknown field, a non-integer operand or a division
        by zero, naming ``source`` and the action.
    """
    return _ACTION.sub(lambda match: str(_evaluate(match.group(1), data, source)), text)


def _evaluate(action: str, data: Mapping[str, Any], source: str) -> Any:
    words = action.split()
    if len(words) == 1:
        return _argument(words[0], data, source, action)
    if len(words) == 3 and words[0] in _FUNCTIONS:
        left, right = (_integer(_argument(w, data, source, action), source, action)
                       for w in words[1:])
        if right == 0:
            raise InvalidObjectError(source, "{{" + action + "}}", "integer divide by zero")
        return _FUNCTIONS[words[0]](left, right)
    raise InvalidObjectError(source, "{{" + action + "}}",
                             "not supported: only {{.Field}} and {{FUNC A B}} with FUNC one of "
                             + ", ".join(_FUNCTIONS))


def _argument(word: str, data: Mapping[str, Any], source: str, action: str) -> Any:
    if _INTEGER.match(word):
        return int(word)
    field = _FIELD.match(word)
    if field is None or field.group(1) not in data:
        raise InvalidObjectError(source, "{{" + action + "}}",
                                 f"can't evaluate {word!r}: not a field of the template data "
                                 f"({', '.join(sorted(data))})")
    return data[field.group(1)]


def _integer(value: Any, source: str, action: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidObjectError(source, "{{" + action + "}}",
                                 f"expected an integer operand, got {value!r}")
    return value
