"""JSON text as Go's ``encoding/json`` decodes it into ``interface{}``: its error words
(``SyntaxError`` texts, ``quoteChar``), ``NaN`` and infinities refused, nesting bounded.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np

from ksched.validation import go_quote
from ksched.yamlio.files import MAX_DEPTH, LoadError

__all__ = ["load_json", "quote_char"]


class _Constant(ValueError):
    """``NaN`` / ``Infinity``, which Python's json accepts and Go's does not."""


def _go_int(text: str) -> int:
    """An integer literal; one beyond float64's range (over 309 digits) refused as
    ``encoding/json`` refuses it, shown shortened."""
    if len(text) <= 309:
        return int(text)
    shown = f"{text[:12]}...{text[-4:]} ({len(text.lstrip('-'))} digits)"
    raise LoadError(f"json: cannot unmarshal number {shown} into Go value of type float64")


def _reject_constant(name: str) -> Any:
    raise _Constant(name)


def load_json(data: bytes | str, object_pairs_hook: Any = None) -> Any:
    """``json.Unmarshal`` into ``interface{}``; errors in ``encoding/json``'s words."""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    _check_json_depth(text)
    try:
        return json.loads(text, object_pairs_hook=object_pairs_hook,
                          parse_constant=_reject_constant, parse_int=_go_int)
    except _Constant as exc:
        shown = "'I' in numeric literal" if str(exc).startswith("-") else (
            f"'{str(exc)[0]}' looking for beginning of value")
        raise LoadError(f"invalid character {shown}") from None
    except json.JSONDecodeError as exc:
        raise LoadError(_go_json_syntax_error(exc), line=exc.lineno) from None


_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]', re.DOTALL)
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"?', re.DOTALL)


def _check_json_depth(text: str) -> None:
    """Refuse nesting deeper than :data:`MAX_DEPTH` (the bracket count, strings skipped)."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return
    brackets = re.sub(r"[^\[\]{}]", "", _JSON_STRING.sub("", text)).encode()
    steps = np.where(np.frombuffer(brackets, np.uint8) % 4 == 3, 1, -1)  # '[' 91, '{' 123
    if not len(steps) or int(np.cumsum(steps).max()) <= MAX_DEPTH:
        return
    depth = 0
    for match in _JSON_TOKEN.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                line = text.count("\n", 0, match.start()) + 1
                raise LoadError(f"exceeded max depth of {MAX_DEPTH} at line {line}", line=line)
        elif token in "]}":
            depth -= 1


def quote_char(ch: str) -> str:
    """``encoding/json``'s ``quoteChar`` (of the offending byte)."""
    byte = ch.encode("utf-8", "surrogatepass")[:1] if ch else b""
    ch = chr(byte[0]) if byte else ch
    if ch == "'":
        return "'\\''"
    if ch == '"':
        return "'\"'"
    return "'" + go_quote(ch)[1:-1] + "'"


def _go_json_syntax_error(exc: json.JSONDecodeError) -> str:
    """The ``encoding/json`` ``SyntaxError`` text for Python's decode error."""
    text, pos, msg = exc.doc, exc.pos, exc.msg
    if pos >= len(text) or msg.startswith("Unterminated string"):
        return "unexpected end of JSON input"
    char = quote_char(text[pos])
    if msg.startswith("Expecting value"):
        return f"invalid character {char} looking for beginning of value"
    if msg.startswith("Expecting property name"):
        return f"invalid character {char} looking for beginning of object key string"
    if msg.startswith("Expecting ':'"):
        return f"invalid character {char} after object key"
    if msg.startswith("Expecting ','"):
        where = "object key:value pair" if _innermost(text, pos) == "{" else "array element"
        return f"invalid character {char} after {where}"
    if msg.startswith("Extra data"):
        return f"invalid character {char} after top-level value"
    if msg.startswith("Invalid control character"):
        return f"invalid character {char} in string literal"
    if msg.startswith("Invalid \\escape"):
        return f"invalid character {quote_char(text[pos + 1:pos + 2])} in string escape code"
    return f"{msg} at line {exc.lineno} column {exc.colno}"


def _innermost(text: str, pos: int) -> str:
    stack = []
    for match in _JSON_TOKEN.finditer(text, 0, pos):
        token = match.group()
        if token in "[{":
            stack.append(token)
        elif token in "]}" and stack:
            stack.pop()
    return stack[-1] if stack else ""
