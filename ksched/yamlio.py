"""Reading YAML and JSON input as Kubernetes' Go code reads it, with bounds.

kube-scheduler reads ``--config`` and kubectl reads manifests through ``sigs.k8s.io/yaml``:
go-yaml v2 decodes the YAML (YAML 1.1 scalars, merge keys, aliases) into ``interface{}``,
``YAMLToJSON`` turns it into JSON (map keys become strings, maps come out with sorted keys,
integral floats print as integers, NaN and infinities fail) and ``encoding/json`` decodes that.
:func:`load_yaml` gives the same data in one pass over libyaml's events (the parser go-yaml
ports, so syntax errors carry the same words):

- scalars resolve as go-yaml v2's ``resolve`` does (``yes``/``on``/``y`` are booleans, ``1e3`` is a
  number, timestamps and dates stay strings, ``!!binary`` is decoded);
- alias expansion is bounded by go-yaml's own rule (``allowedAliasRatio``): a few hundred bytes of
  nested aliases ("billion laughs") fail with ``yaml: document contains excessive aliasing``
  instead of expanding for hours; an alias inside its own anchor fails as go-yaml fails it;
- nesting deeper than :data:`MAX_DEPTH` collections is refused (go-yaml allows 10000; Python's
  recursion does not, and no Kubernetes object comes near 100);
- duplicate keys are reported in go-yaml's strict wording (``line N: key "x" already set in
  map``), for callers that decode strictly.

:func:`load_json` does the same for JSON text (Go's ``encoding/json`` error words),
:func:`read_file` reads a file (gzip-compressed when named ``*.gz``) with Go's ``os`` error words,
and :func:`plain_data` checks an object built in Python (a dict) the same way: string keys,
JSON values only, bounded nesting, bounded sharing and no cycles.

Every failure is a :class:`LoadError` (a :class:`~ksched.errors.KschedError`).
"""

from __future__ import annotations

import base64
import binascii
import gzip
import io
import json
import math
import numbers
import os
import re
import zlib
from collections.abc import Mapping
from typing import Any

import attrs
import numpy as np
import yaml

from ksched.errors import KschedError
from ksched.validation import go_quote

__all__ = ["MAX_DEPTH", "MAX_FILE_BYTES", "Document", "LoadError", "is_json", "load_json",
           "load_yaml", "plain_data", "read_file"]

#: Collections nested deeper than this are refused (ksched's bound; go-yaml's is 10000).
MAX_DEPTH = 100
#: Files (after decompression) larger than this are refused.
MAX_FILE_BYTES = 1 << 30

try:  # libyaml, the C parser go-yaml is a port of: the same error words
    from yaml._yaml import CParser as _EventParser
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    _EventParser = yaml.SafeLoader


class LoadError(KschedError, ValueError):
    """Input that cannot be read or decoded.

    ``str(error)`` is Go's message where Go has one (``yaml: line 3: did not find expected
    key``); ``line`` is the 1-based line when known, ``path`` the field path for data built in
    Python.
    """

    def __init__(self, message: str, line: int | None = None, path: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.path = path


@attrs.frozen
class Document:
    """One YAML document as ``YAMLToJSON`` gives it."""

    #: JSON-like data: dicts with string keys (sorted), lists, str, int, float, bool, None.
    value: Any
    #: go-yaml's strict-mode errors (``line 4: key "a" already set in map``), in text order.
    duplicates: tuple[str, ...] = ()


# =========================================================================== files


def read_file(path: str | os.PathLike) -> bytes:
    """The file's bytes, gunzipped when its name ends in ``.gz`` (``os.ReadFile``'s errors)."""
    name = os.fspath(path)
    if isinstance(name, bytes):
        name = os.fsdecode(name)
    try:
        with open(name, "rb") as f:
            if os.fstat(f.fileno()).st_size > MAX_FILE_BYTES:
                raise LoadError(f"read {name}: file is larger than {MAX_FILE_BYTES} bytes")
            raw = f.read(MAX_FILE_BYTES + 1)
    except IsADirectoryError:
        raise LoadError(f"read {name}: is a directory") from None
    except FileNotFoundError:
        raise LoadError(f"open {name}: no such file or directory") from None
    except PermissionError:
        raise LoadError(f"open {name}: permission denied") from None
    except OSError as exc:
        raise LoadError(f"open {name}: {(exc.strerror or str(exc)).lower()}") from None
    except ValueError as exc:  # an embedded NUL byte
        if isinstance(exc, LoadError):
            raise
        raise LoadError(f"open {name}: invalid argument") from None
    if len(raw) > MAX_FILE_BYTES:  # a device or pipe that reports no size
        raise LoadError(f"read {name}: file is larger than {MAX_FILE_BYTES} bytes")
    return _gunzip(name, raw) if name.endswith(".gz") else raw


def _gunzip(name: str, raw: bytes) -> bytes:
    """``gzip.NewReader`` + ``io.ReadAll``, in Go's ``compress/gzip`` words."""
    if not raw:
        raise LoadError(f"read {name}: gzip: empty file")
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(raw)) as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except EOFError:
        raise LoadError(f"read {name}: unexpected EOF (truncated gzip data)") from None
    except zlib.error:
        raise LoadError(f"read {name}: flate: corrupt input") from None
    except OSError as exc:  # gzip.BadGzipFile: a bad header, or a CRC / length mismatch
        problem = "invalid checksum" if "check failed" in str(exc) else "invalid header"
        raise LoadError(f"read {name}: gzip: {problem}") from None
    if len(data) > MAX_FILE_BYTES:
        raise LoadError(f"read {name}: decompressed data is larger than {MAX_FILE_BYTES} bytes")
    return data


def is_json(data: bytes | str) -> bool:
    """``utilyaml.IsJSONBuffer``: the first non-blank byte is ``{``."""
    return bool((_JSON_START if isinstance(data, bytes) else _JSON_START_TEXT).match(data))


_JSON_START = re.compile(rb"[ \t\r\n]*\{")
_JSON_START_TEXT = re.compile(r"[ \t\r\n]*\{")


# =========================================================================== JSON


class _Constant(ValueError):
    """``NaN`` / ``Infinity``, which Python's json accepts and Go's does not."""


def _reject_constant(name: str) -> Any:
    raise _Constant(name)


def load_json(data: bytes | str, object_pairs_hook: Any = None) -> Any:
    """``json.Unmarshal`` into ``interface{}``; errors in ``encoding/json``'s words."""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    _check_json_depth(text)
    try:
        return json.loads(text, object_pairs_hook=object_pairs_hook,
                          parse_constant=_reject_constant)
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


# =========================================================================== YAML events

_SCALAR, _MAPPING, _SEQUENCE, _ALIAS = range(4)
_TAG = "tag:yaml.org,2002:"
_STR, _INT, _FLOAT, _BOOL, _NULL = (_TAG + t for t in ("str", "int", "float", "bool", "null"))
_BINARY, _TIMESTAMP, _MERGE = _TAG + "binary", _TAG + "timestamp", _TAG + "merge"


class _Node:
    """go-yaml's ``node``: kind, 0-based line, tag, scalar value or alias target, children."""

    __slots__ = ("children", "kind", "line", "plain", "tag", "target", "value")

    def __init__(self, kind: int, line: int, tag: str | None = None, value: str = "",
                 plain: bool = False, target: _Node | None = None) -> None:
        self.kind, self.line, self.tag, self.value = kind, line, tag or "", value
        self.plain, self.target = plain, target
        self.children: list[_Node] = []


def _syntax_error(exc: yaml.YAMLError, raw: bytes) -> LoadError:
    """go-yaml's ``parser.fail``: ``yaml: line N: <problem>`` (scanner lines are 1-based,
    parser lines 0-based, as go-yaml prints them)."""
    if isinstance(exc, yaml.reader.ReaderError):
        line = raw.count(b"\n", 0, max(exc.position, 0)) + 1
        hint = " (gzip-compressed? name the file *.gz)" if raw[:2] == b"\x1f\x8b" else ""
        return LoadError(f"yaml: line {line}: {exc.reason}{hint}", line=line)
    problem = getattr(exc, "problem", None) or "unknown problem parsing YAML content"
    problem_mark, context_mark = getattr(exc, "problem_mark", None), getattr(
        exc, "context_mark", None)
    line = 0
    if problem_mark is not None and problem_mark.line != 0:
        line = problem_mark.line + isinstance(exc, yaml.scanner.ScannerError)
    elif context_mark is not None:
        line = context_mark.line
    where = f"line {line}: " if line else ""
    return LoadError(f"yaml: {where}{problem}", line=line or None)


def _documents(raw: bytes, all_documents: bool) -> list[_Node | None]:
    """The node trees of the stream's documents (only the first unless ``all_documents``)."""
    parser = _EventParser(raw)
    try:
        parser.get_event()  # StreamStart
        roots: list[_Node | None] = []
        while not parser.check_event(yaml.StreamEndEvent):
            parser.get_event()  # DocumentStart
            roots.append(_compose(parser))
            parser.get_event()  # DocumentEnd
            if not all_documents:
                break
        return roots or [None]
    except yaml.YAMLError as exc:
        raise _syntax_error(exc, raw) from None
    finally:
        dispose = getattr(parser, "dispose", None)
        if dispose is not None:
            dispose()


def _compose(parser: Any) -> _Node:
    """One document's nodes, built without recursion; anchors are registered when their node
    starts (so an alias can name its own enclosing anchor, as in go-yaml)."""
    anchors: dict[str, _Node] = {}
    stack: list[_Node] = []
    get_event = parser.get_event
    while True:
        event = get_event()
        kind = type(event)
        if kind is yaml.ScalarEvent:
            node = _Node(_SCALAR, event.start_mark.line, event.tag, event.value,
                         event.implicit[0])
        elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
            done = stack.pop()
            if not stack:
                return done
            continue
        elif kind is yaml.AliasEvent:
            target = anchors.get(event.anchor)
            if target is None:
                raise LoadError(f"yaml: unknown anchor '{event.anchor}' referenced",
                                line=event.start_mark.line + 1)
            node = _Node(_ALIAS, event.start_mark.line, None, event.anchor, False, target)
        else:
            node = _Node(_MAPPING if kind is yaml.MappingStartEvent else _SEQUENCE,
                         event.start_mark.line, event.tag)
        if kind is not yaml.AliasEvent and event.anchor is not None:
            anchors[event.anchor] = node
        if stack:
            stack[-1].children.append(node)
        elif node.kind == _SCALAR or node.kind == _ALIAS:
            return node
        if node.kind == _MAPPING or node.kind == _SEQUENCE:
            stack.append(node)
            if len(stack) > MAX_DEPTH:
                line = node.line + 1
                raise LoadError(f"yaml: line {line}: exceeded max depth of {MAX_DEPTH}",
                                line=line)


# =========================================================================== scalars

_BOOLS = {**dict.fromkeys(("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On",
                           "ON"), True),
          **dict.fromkeys(("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off",
                           "OFF"), False)}
_SPECIAL: dict[str, tuple[str, Any]] = {
    **{k: (_BOOL, v) for k, v in _BOOLS.items()},
    **dict.fromkeys(("", "~", "null", "Null", "NULL"), (_NULL, None)),
    **dict.fromkeys((".nan", ".NaN", ".NAN"), (_FLOAT, math.nan)),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), (_FLOAT, math.inf)),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), (_FLOAT, -math.inf)),
    "<<": (_MERGE, "<<"),
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


def _resolve(tag: str, text: str) -> tuple[str, Any]:
    """go-yaml v2's ``resolve``: (resolved tag, value); raises for a tag the text cannot be."""
    if tag not in ("", _STR, _BOOL, _INT, _FLOAT, _NULL, _TIMESTAMP):
        return tag, text
    rtag, out = _STR, text
    hint = _hint(text)
    if hint and tag != _STR:
        if text in _SPECIAL:
            rtag, out = _SPECIAL[text]
        elif hint == ".":
            value = _parse_go_float(text) if _YAML_FLOAT.fullmatch(text) else None
            if value is not None:
                rtag, out = _FLOAT, value
        elif hint in "DS":
            rtag, out = _resolve_number(tag, text)
    if tag in ("", rtag, _STR):
        return rtag, out
    if tag == _FLOAT and rtag == _INT:
        return _FLOAT, float(out)
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
    if tag in ("", _TIMESTAMP) and _TIMESTAMP_RE.fullmatch(text):
        return _TIMESTAMP, text
    plain = text.replace("_", "")
    value = _parse_go_int(plain)
    if value is None:
        value = _parse_go_int(plain, unsigned=True)
    if value is not None:
        return _INT, value
    if _YAML_FLOAT.fullmatch(plain):
        number = _parse_go_float(plain)
        if number is not None:
            return _FLOAT, number
    return _STR, text


def _short_tag(tag: str) -> str:
    return "!!" + tag[len(_TAG):] if tag.startswith(_TAG) else tag


# =========================================================================== decoding


def allowed_alias_ratio(decodes: int) -> float:
    """go-yaml's ``allowedAliasRatio``: 99% of decodes may come from aliases up to 400,000
    decodes, falling linearly to 10% at 4,000,000."""
    low, high = 400_000, 4_000_000
    if decodes <= low:
        return 0.99
    if decodes >= high:
        return 0.10
    return 0.99 - 0.89 * (decodes - low) / (high - low)


class _Budget:
    """go-yaml's ``decodeCount`` / ``aliasCount``: fails once alias expansion dominates."""

    __slots__ = ("alias_depth", "aliases", "decodes", "message")

    def __init__(self, message: str = "yaml: document contains excessive aliasing") -> None:
        self.decodes = self.aliases = self.alias_depth = 0
        self.message = message

    def count(self) -> None:
        self.decodes += 1
        if self.alias_depth:
            self.aliases += 1
        if (self.aliases > 100 and self.decodes > 1000
                and self.aliases / self.decodes > allowed_alias_ratio(self.decodes)):
            raise LoadError(self.message)


_KEY, _VALUE = "key", "value"


class _Decoder:
    """go-yaml's ``decoder`` into ``interface{}`` fused with ``YAMLToJSON``'s conversion."""

    def __init__(self) -> None:
        self.budget = _Budget()
        self.active: set[int] = set()
        self.duplicates: list[str] = []
        self.convert_error: str | None = None
        self.marshal_error: str | None = None

    def document(self, root: _Node | None) -> Document:
        self.budget.count()  # the document node
        value = None if root is None else self.unmarshal(root, 1, _VALUE)
        for error in (self.convert_error, self.marshal_error):
            if error is not None:
                raise LoadError(error)
        return Document(value, tuple(self.duplicates))

    def unmarshal(self, node: _Node, depth: int, mode: Any) -> Any:
        """A node as a JSON value (``_VALUE``), a typed map key (``_KEY``), or merged into the
        map ``mode`` (a dict)."""
        self.budget.count()
        if node.kind == _ALIAS:
            return self._alias(node, depth, mode)
        if isinstance(mode, dict):
            return self._fill(node, mode, depth)
        if node.kind == _SCALAR:
            typed = self._scalar(node)
            return typed if mode is _KEY else self._json_scalar(typed)
        if depth > MAX_DEPTH:
            raise LoadError(f"yaml: line {node.line + 1}: exceeded max depth of {MAX_DEPTH}",
                            line=node.line + 1)
        if node.kind == _SEQUENCE:
            value: Any = [self.unmarshal(child, depth + 1, _VALUE) for child in node.children]
        else:
            entries: dict = {}
            self._fill(node, entries, depth + 1)
            value = self._json_map(entries)
        if mode is _KEY:
            raise LoadError(f"yaml: invalid map key: {_sharp_v(value, top=True)}")
        return value

    def _alias(self, node: _Node, depth: int, mode: Any) -> Any:
        if id(node) in self.active:
            raise LoadError(f"yaml: anchor '{node.value}' value contains itself")
        self.active.add(id(node))
        self.budget.alias_depth += 1
        try:
            return self.unmarshal(node.target, depth, mode)
        finally:
            self.budget.alias_depth -= 1
            self.active.discard(id(node))

    def _scalar(self, node: _Node) -> tuple[str, Any]:
        """``decoder.scalar`` into ``interface{}``: (tag, Go value)."""
        if not node.tag and not node.plain:
            return _STR, node.value
        tag, value = _resolve(node.tag, node.value)
        if tag == _BINARY:
            try:
                data = base64.b64decode(re.sub(r"[\r\n]", "", value), validate=True)
            except (binascii.Error, ValueError):
                raise LoadError("yaml: !!binary value contains invalid base64 data") from None
            return _STR, data.decode("utf-8", "replace")
        if tag == _TIMESTAMP:
            return _STR, node.value
        if tag in (_BOOL, _INT, _FLOAT, _NULL):
            return tag, value
        return _STR, value if isinstance(value, str) else node.value

    def _json_scalar(self, typed: tuple[str, Any]) -> Any:
        """The value after ``json.Marshal`` and ``json.Unmarshal``."""
        tag, value = typed
        if tag == _FLOAT:
            if math.isnan(value) or math.isinf(value):
                if self.marshal_error is None:
                    shown = "NaN" if math.isnan(value) else ("+Inf" if value > 0 else "-Inf")
                    self.marshal_error = f"json: unsupported value: {shown}"
                return value
            if value.is_integer() and abs(value) < 1e21:
                return int(value)
        return value

    def _fill(self, node: _Node, entries: dict, depth: int) -> None:
        """``decoder.mapping`` into a map: merges, typed keys, strict duplicate errors."""
        if node.kind != _MAPPING:
            raise LoadError("yaml: map merge requires map or sequence of maps as the value")
        children = node.children
        for i in range(0, len(children), 2):
            key_node, value_node = children[i], children[i + 1]
            if key_node.kind == _SCALAR and key_node.value == "<<" and (
                    key_node.plain or key_node.tag == _MERGE):
                self._merge(value_node, entries, depth)
                continue
            key = self.unmarshal(key_node, depth, _KEY)
            value = self.unmarshal(value_node, depth, _VALUE)
            identity = key if key[1] == key[1] else (key, id(key))  # NaN keys never match
            if identity in entries:
                self.duplicates.append(f"line {value_node.line + 1}: key "
                                       f"{_sharp_v(key[1], top=True)} already set in map")
            entries[identity] = (key, value)

    def _merge(self, node: _Node, entries: dict, depth: int) -> None:
        """``decoder.merge``: a map, an alias of one, or a sequence of them (earlier wins)."""
        if node.kind == _SEQUENCE:
            items = node.children[::-1]
        elif node.kind in (_MAPPING, _ALIAS):
            items = [node]
        else:
            raise LoadError("yaml: map merge requires map or sequence of maps as the value")
        for item in items:
            if (item.target if item.kind == _ALIAS else item).kind != _MAPPING:
                raise LoadError("yaml: map merge requires map or sequence of maps as the value")
            self.unmarshal(item, depth, entries)

    def _json_map(self, entries: dict) -> dict[str, Any]:
        """``convertToJSONableObject`` for one map, then ``json.Marshal``'s sorted keys."""
        out: dict[str, Any] = {}
        for (tag, key), value in entries.values():
            text = _json_key(tag, key)
            if text is None:
                if self.convert_error is None:
                    kind = "<nil>" if key is None else "uint64"
                    self.convert_error = (f"unsupported map key of type: {kind}, key: "
                                          f"{_sharp_v(key, top=True)}, value: "
                                          f"{_sharp_v(value, top=True)}")
                continue
            out[text] = value
        return dict(sorted(out.items()))


def _json_key(tag: str, key: Any) -> str | None:
    if tag == _STR:
        return key
    if tag == _BOOL:
        return "true" if key else "false"
    if tag == _INT:
        return str(key) if key < 2**63 else None  # go-yaml gives a uint64 above int64
    if tag == _FLOAT:
        if math.isnan(key):
            return ".nan"
        if math.isinf(key):
            return ".inf" if key > 0 else "-.inf"
        return go_format_float(key, 32)
    return None


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


def _sharp_v(value: Any, top: bool = False) -> str:
    """Go's ``%#v`` of a decoded YAML value (as go-yaml's errors print keys)."""
    if value is None:
        return "<nil>" if top else "interface {}(nil)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value) if value < 2**63 else hex(value)
    if isinstance(value, float):
        return go_format_float(value)
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, dict):
        return ("map[interface {}]interface {}{" + ", ".join(
            f"{_sharp_v(k)}:{_sharp_v(v)}" for k, v in value.items()) + "}")
    return "[]interface {}{" + ", ".join(_sharp_v(v) for v in value) + "}"


def load_yaml(data: bytes | str, all_documents: bool = False) -> list[Document]:
    """YAML as ``sigs.k8s.io/yaml``'s ``YAMLToJSON`` reads it (``yaml.Unmarshal`` decodes only
    the first document; ``all_documents`` gives every one, as kubectl's document reader does).

    Raises
    ------
    LoadError
        Syntax errors (``yaml: line 2: did not find expected key``), invalid UTF-8 or control
        characters, unknown anchors, excessive aliasing, nesting beyond :data:`MAX_DEPTH`,
        tags the value cannot have, null map keys, NaN or infinite numbers.

    Examples
    --------
    >>> load_yaml("b: yes\\na: [1e3, 2024-01-02, 0x10]\\n")[0].value
    {'a': [1000, '2024-01-02', 16], 'b': True}
    >>> load_yaml("a: 1\\na: 2\\n")[0].duplicates
    ('line 2: key "a" already set in map',)
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    return [_Decoder().document(root) for root in _documents(raw, all_documents)]


# =========================================================================== Python data


def plain_data(obj: Any) -> Any:
    """``obj`` as the JSON data it stands for: dicts with string keys, lists, str, int, float,
    bool, None (tuples become lists, numpy scalars Python numbers).

    Raises :class:`LoadError` (with ``path``) for other types, non-string keys, NaN or
    infinities, nesting beyond :data:`MAX_DEPTH`, a container inside itself, or sharing that
    would expand beyond go-yaml's alias bound.
    """
    return _Plain().value(obj, "", 0)


class _Plain:
    """The walk behind :func:`plain_data`; a container reached a second time counts as an
    alias expansion against the :class:`_Budget`."""

    def __init__(self) -> None:
        self.budget = _Budget("value contains excessive aliasing (shared lists or mappings "
                              "expand to too many values)")
        self.seen: set[int] = set()
        self.active: set[int] = set()

    def value(self, obj: Any, path: str, depth: int) -> Any:
        try:
            self.budget.count()
        except LoadError as exc:
            raise _plain_error(path, exc.message) from None
        if obj is None or type(obj) in (bool, str):
            return obj
        if isinstance(obj, str):  # a str subclass (an enum, ...): its plain string
            return str.__str__(obj)
        if isinstance(obj, np.bool_):
            return bool(obj)
        if isinstance(obj, numbers.Integral):
            return int(obj)
        if isinstance(obj, numbers.Real):
            number = float(obj)
            if math.isnan(number) or math.isinf(number):
                shown = "NaN" if math.isnan(number) else ("+Inf" if number > 0 else "-Inf")
                raise _plain_error(path, f"json: unsupported value: {shown}")
            return number
        if isinstance(obj, Mapping | list | tuple):
            return self._container(obj, path, depth + 1)
        raise _plain_error(path, f"json: unsupported type: {type(obj).__name__} (want a "
                                 "mapping, list, string, number, bool or None)")

    def _container(self, obj: Any, path: str, depth: int) -> Any:
        key = id(obj)
        if key in self.active:
            raise _plain_error(path, "value contains itself")
        if depth > MAX_DEPTH:
            raise _plain_error(path, f"exceeded max depth of {MAX_DEPTH}")
        shared = key in self.seen
        self.seen.add(key)
        self.active.add(key)
        self.budget.alias_depth += shared
        try:
            if isinstance(obj, Mapping):
                out = {}
                for k, v in obj.items():
                    if not isinstance(k, str):
                        raise _plain_error(path, f"map key {k!r} ({type(k).__name__}) is not "
                                                 "a string")
                    out[str.__str__(k)] = self.value(v, f"{path}.{k}" if path else k, depth)
                return out
            return [self.value(v, f"{path}[{i}]", depth) for i, v in enumerate(obj)]
        finally:
            self.budget.alias_depth -= shared
            self.active.discard(key)


def _plain_error(path: str, problem: str) -> LoadError:
    if len(path) > 80:
        path = path[:77] + "..."
    return LoadError(f"{path}: {problem}" if path else problem, path=path)
