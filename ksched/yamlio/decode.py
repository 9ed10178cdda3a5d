"""YAML as ``sigs.k8s.io/yaml``'s ``YAMLToJSON`` reads it, in one pass over libyaml's events (the
parser go-yaml ports, so syntax errors carry the same words): go-yaml v2's ``decoder``
(``decode.go``: aliases bounded by ``allowedAliasRatio``, merge keys, strict duplicate-key
errors) fused with the conversion to JSON data (map keys become strings, maps come out with
sorted keys, integral floats print as integers, NaN and infinities fail).
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from typing import Any

import attrs
import yaml

from ksched.validation import go_quote
from ksched.yamlio.files import MAX_DEPTH, LoadError
from ksched.yamlio.resolve import (
    BINARY_TAG,
    BOOL_TAG,
    FLOAT_TAG,
    INT_TAG,
    MERGE_TAG,
    NULL_TAG,
    STR_TAG,
    TIMESTAMP_TAG,
    go_format_float,
    resolve,
)

__all__ = ["AliasBudget", "Document", "allowed_alias_ratio", "load_yaml"]

try:  # libyaml, the C parser go-yaml is a port of: the same error words
    from yaml._yaml import CParser as _EventParser
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    _EventParser = yaml.SafeLoader


@attrs.frozen
class Document:
    """One YAML document as ``YAMLToJSON`` gives it."""

    #: JSON-like data: dicts with string keys (sorted), lists, str, int, float, bool, None.
    value: Any
    #: go-yaml's strict-mode errors (``line 4: key "a" already set in map``), in text order.
    duplicates: tuple[str, ...] = ()


_SCALAR, _MAPPING, _SEQUENCE, _ALIAS = range(4)
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
    """The node trees of the stream's documents (only the first unless ``all_documents``).

    libyaml 0.2.6 (PyYAML 6.0.4 and later) refuses flow nesting beyond 1000 levels while its
    scanner looks ahead for a simple key, before :func:`_compose` has seen depth
    :data:`MAX_DEPTH`; the stream is then read again by PyYAML's own parser, which has no such
    limit, so the refusal and its line are ksched's whatever the installed PyYAML."""
    try:
        return _parse_documents(_EventParser, raw, all_documents)
    except _LibyamlNestingLimit:
        return _parse_documents(yaml.SafeLoader, raw, all_documents)


class _LibyamlNestingLimit(Exception):
    """libyaml's own nesting limit was reached (``exceeded maximum nesting depth``)."""


def _parse_documents(parser_type: Any, raw: bytes, all_documents: bool) -> list[_Node | None]:
    parser = parser_type(raw)
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
        if "maximum nesting depth" in str(getattr(exc, "problem", "")):
            raise _LibyamlNestingLimit from None
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


def allowed_alias_ratio(decodes: int) -> float:
    """go-yaml's ``allowedAliasRatio``: 99% of decodes may come from aliases up to 400,000
    decodes, falling linearly to 10% at 4,000,000."""
    low, high = 400_000, 4_000_000
    if decodes <= low:
        return 0.99
    if decodes >= high:
        return 0.10
    return 0.99 - 0.89 * (decodes - low) / (high - low)


class AliasBudget:
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
        self.budget = AliasBudget()
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
            return STR_TAG, node.value
        tag, value = resolve(node.tag, node.value)
        if tag == BINARY_TAG:
            try:
                data = base64.b64decode(re.sub(r"[\r\n]", "", value), validate=True)
            except (binascii.Error, ValueError):
                raise LoadError("yaml: !!binary value contains invalid base64 data") from None
            return STR_TAG, _go_json_text(data)
        if tag == TIMESTAMP_TAG:
            return STR_TAG, node.value
        if tag in (BOOL_TAG, INT_TAG, FLOAT_TAG, NULL_TAG):
            return tag, value
        return STR_TAG, value if isinstance(value, str) else node.value

    def _json_scalar(self, typed: tuple[str, Any]) -> Any:
        """The value after ``json.Marshal`` and ``json.Unmarshal``."""
        tag, value = typed
        if tag == FLOAT_TAG:
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
                    key_node.plain or key_node.tag == MERGE_TAG):
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


def _go_json_text(data: bytes) -> str:
    """A Go string of raw bytes as ``json.Marshal`` writes it: each byte that is not part of
    valid UTF-8 becomes U+FFFD (one per byte, as ``utf8.DecodeRuneInString`` steps)."""
    text = data.decode("utf-8", "surrogateescape")  # each bad byte: one lone surrogate
    return _ESCAPED_BYTE.sub("\ufffd", text)


_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")


def _json_key(tag: str, key: Any) -> str | None:
    if tag == STR_TAG:
        return key
    if tag == BOOL_TAG:
        return "true" if key else "false"
    if tag == INT_TAG:
        return str(key) if key < 2**63 else None  # go-yaml gives a uint64 above int64
    if tag == FLOAT_TAG:
        if math.isnan(key):
            return ".nan"
        if math.isinf(key):
            return ".inf" if key > 0 else "-.inf"
        return go_format_float(key, 32)
    return None





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
