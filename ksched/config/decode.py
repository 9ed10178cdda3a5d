"""Decoding a ``KubeSchedulerConfiguration`` as ``scheme.Codecs.UniversalDecoder`` does, up to
defaulting: the source read as ``loadConfigFromFile`` reads it (:func:`read_source`), the
group/version/kind checked against the scheme, strict decoding into the v1 types
(``sigs.k8s.io/json``'s ``UnmarshalStrict``: case-sensitive fields, unknown and duplicate
fields are errors, the first type error kept) and the plugin args decoded by kind
(``PluginConfig.decodeNestedObjects``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import attrs

from ksched.config.errors import ConfigLoadError
from ksched.config.types import (
    ARGS_TYPES,
    CONFIG_TYPE,
    GROUP,
    KIND,
    REGISTERED_KINDS,
    SCHEME_NAME,
    VERSION,
    GoType,
)
from ksched.validation import child as _child
from ksched.validation import go_quote, parse_go_duration
from ksched.yamlio import LoadError, is_json, load_json, load_yaml, plain_data, read_file

__all__ = ["UnknownArgs", "decode_config", "read_source"]


class _Pairs(dict):
    """A JSON object that remembers its key/value pairs in text order, duplicates included."""

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__(pairs)
        self.pairs = pairs


class _Fatal(Exception):
    """A decoding error that stops ``json.Unmarshal`` at once (an ``UnmarshalJSON`` error)."""


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list | tuple) else "object"


def _number_text(value: int | float) -> str:
    return str(value) if isinstance(value, int) else repr(value)


class _Decoder:
    """``kjson.UnmarshalStrict`` into a v1 type (kubernetes-sigs/json ``decode.go``).

    Field names match case-sensitively; unknown and duplicate fields become strict errors
    (paths as ``newFieldError`` builds them); the first type error is kept (``saveError``, with
    ``addErrorContext``'s ``Struct.field.path``) and decoding goes on. The result mirrors the Go
    value: known fields only, and ``null`` or absent fields left out (a nil pointer).
    """

    def __init__(self) -> None:
        self.strict: list[str] = []
        self.type_error: str | None = None

    def decode(self, value: Any, t: GoType) -> Any:
        """The decoded value; raises ``_Fatal`` for an error that aborts the whole decode."""
        return self._value(value, t, "", (), "")

    def _value(self, value: Any, t: GoType, path: str, stack: tuple[str, ...], struct: str) -> Any:
        if value is None:
            return None
        return getattr(self, "_decode_" + t.kind)(value, t, path, stack, struct)

    def _mismatch(self, value: Any, t: GoType, stack: tuple[str, ...], struct: str,
                  literal: bool = False) -> None:
        what = _json_kind(value)
        if literal and what == "number":
            what += " " + _number_text(value)
        where = (f"Go struct field {struct}.{'.'.join(stack)}" if struct or stack
                 else "Go value")
        if self.type_error is None:
            self.type_error = f"json: cannot unmarshal {what} into {where} of type {t.go}"

    def _decode_int(self, value, t, path, stack, struct):
        if isinstance(value, bool) or not isinstance(value, int | float):
            return self._mismatch(value, t, stack, struct)
        limit = 2 ** (t.bits - 1)
        if isinstance(value, float) or not -limit <= value < limit:
            return self._mismatch(value, t, stack, struct, literal=True)
        return value

    def _decode_float(self, value, t, path, stack, struct):
        if isinstance(value, bool) or not isinstance(value, int | float):
            return self._mismatch(value, t, stack, struct)
        if abs(value) > 3.4028234663852886e38:
            return self._mismatch(value, t, stack, struct, literal=True)
        return float(value)

    def _decode_bool(self, value, t, path, stack, struct):
        return value if isinstance(value, bool) else self._mismatch(value, t, stack, struct)

    def _decode_str(self, value, t, path, stack, struct):
        return value if isinstance(value, str) else self._mismatch(value, t, stack, struct)

    def _decode_bytes(self, value, t, path, stack, struct):
        return value if isinstance(value, str) else self._mismatch(value, t, stack, struct)

    def _decode_raw(self, value, t, path, stack, struct):
        return value

    def _decode_duration(self, value, t, path, stack, struct):
        """``metav1.Duration.UnmarshalJSON``: a string for ``time.ParseDuration``."""
        if not isinstance(value, str):
            where = f"Go struct field {struct}.{'.'.join(stack)}"
            raise _Fatal(f"json: cannot unmarshal {_json_kind(value)} into {where} of type string")
        try:
            return parse_go_duration(value)
        except ValueError as exc:
            raise _Fatal(str(exc)) from None

    def _decode_list(self, value, t, path, stack, struct):
        if not isinstance(value, list | tuple):
            return self._mismatch(value, t, stack, struct)
        out = []
        for i, item in enumerate(value):
            decoded = self._value(item, t.elem, f"{path}[{i}]", stack, struct)
            out.append(_zero(t.elem) if decoded is None else decoded)
        return out

    def _decode_map(self, value, t, path, stack, struct):
        if not isinstance(value, Mapping):
            return self._mismatch(value, t, stack, struct)
        out = {}
        for key, item in self._pairs(value, path, lambda key: True):
            decoded = self._value(item, t.elem, _child(path, key), stack, struct)
            out[key] = _zero(t.elem) if decoded is None else decoded
        return out

    def _decode_struct(self, value, t, path, stack, struct):
        if not isinstance(value, Mapping):
            return self._mismatch(value, t, stack, struct)
        out: dict[str, Any] = {}
        for key, item in self._pairs(value, path, lambda key: t.field(key) is not None):
            ft = t.field(key)
            if ft is None:
                self._strict(f"unknown field {go_quote(_child(path, key))}")
                continue
            decoded = self._value(item, ft, _child(path, key), stack + (key,), t.struct_name)
            if decoded is None:
                out.pop(key, None)
            else:
                out[key] = decoded
        return out

    def _pairs(self, value: Mapping, path: str, known: Callable[[str], bool]
               ) -> Iterator[tuple[str, Any]]:
        """The object's key/value pairs in text order, reporting a known field's second
        occurrence when it is reached (``checkDuplicateField``)."""
        pairs = value.pairs if isinstance(value, _Pairs) else list(value.items())
        seen: set[str] = set()
        for key, item in pairs:
            if key in seen and known(key):
                self._strict(f"duplicate field {go_quote(_child(path, key))}")
            seen.add(key)
            yield key, item

    def _strict(self, message: str) -> None:
        if message not in self.strict:
            self.strict.append(message)


def _zero(t: GoType) -> Any:
    """The Go zero value of a list or map element decoded from ``null``."""
    return {"int": 0, "float": 0.0, "bool": False, "str": "", "bytes": "", "duration": 0,
            "list": [], "map": {}, "struct": {}}.get(t.kind)


@attrs.frozen
class UnknownArgs:
    """Args of a plugin without a registered ``<Name>Args`` kind (``runtime.Unknown``)."""

    raw: Any


def _decode_error(message: str) -> ConfigLoadError:
    return ConfigLoadError("decode", message)


def _interpret(data: Any, text: str) -> tuple[str, str, str]:
    """``SimpleMetaFactory.Interpret`` plus the serializer's kind checks: (group, version, kind)."""
    find = ('struct { APIVersion string "json:\\"apiVersion,omitempty\\""; '
            'Kind string "json:\\"kind,omitempty\\"" }')
    if data is None:  # ``null`` (an empty YAML document) unmarshals into nothing
        data = {}
    if not isinstance(data, Mapping):
        raise _decode_error(f"couldn't get version/kind; json parse error: json: cannot unmarshal "
                            f"{_json_kind(data)} into Go value of type {find}")
    for name in ("apiVersion", "kind"):
        if data.get(name) is not None and not isinstance(data[name], str):
            raise _decode_error(
                f"couldn't get version/kind; json parse error: json: cannot unmarshal "
                f"{_json_kind(data[name])} into Go struct field .{name} of type string")
    api_version, kind = data.get("apiVersion") or "", data.get("kind") or ""
    if api_version.count("/") > 1:
        raise _decode_error(f"unexpected GroupVersion string: {api_version}")
    group, _, version = api_version.rpartition("/")
    if not kind:
        raise _decode_error(f"Object 'Kind' is missing in '{text}'")
    if not version:
        raise _decode_error(f"Object 'apiVersion' is missing in '{text}'")
    return group, version, kind


def _check_registered(group: str, version: str, kind: str) -> None:
    if (group, version) != (GROUP, VERSION) or kind not in REGISTERED_KINDS:
        gv = f"{group}/{version}" if group else version
        raise _Fatal(f"no kind {go_quote(kind)} is registered for version {go_quote(gv)} in "
                     f"scheme {go_quote(SCHEME_NAME)}")


def decode_config(data: Any, text: str, yaml_errors: Sequence[str]) -> dict[str, Any]:
    """``UniversalDecoder().Decode`` up to defaulting: the v1 object, or a decode error."""
    group, version, kind = _interpret(data, text)
    try:
        _check_registered(group, version, kind)
    except _Fatal as exc:
        raise _decode_error(str(exc)) from None
    if kind != KIND:
        raise _decode_error(f"couldn't decode as {KIND}, got {group}/{version}, Kind={kind}: ")
    decoder = _Decoder()
    try:
        cfg = decoder.decode(data, CONFIG_TYPE)
    except _Fatal as exc:
        raise _decode_error(str(exc)) from None
    if decoder.type_error is not None:
        raise _decode_error(decoder.type_error)
    strict = list(yaml_errors) + decoder.strict + _decode_nested_objects(cfg)
    if strict:
        raise _decode_error("strict decoding error: " + ", ".join(strict))
    return cfg


def _decode_nested_objects(cfg: dict[str, Any]) -> list[str]:
    """``KubeSchedulerConfiguration.DecodeNestedObjects``: plugin args decoded by kind, in
    place; returns the strict errors (a non-strict error is raised at once)."""
    strict = []
    for i, prof in enumerate(cfg.get("profiles") or ()):
        for j, pc in enumerate(prof.get("pluginConfig") or ()):
            where = f"decoding .profiles[{i}].pluginConfig[{j}]: "
            name = pc.get("name", "")
            try:
                pc["args"], errs = _decode_args(name, pc.get("args"))
            except _Fatal as exc:
                raise _decode_error(where + str(exc)) from None
            if errs:
                strict.append(f"{where}strict decoding error: decoding args for plugin {name}: "
                              f"strict decoding error: " + ", ".join(errs))
    return strict


def _decode_args(name: str, raw: Any) -> tuple[Any, list[str]]:
    """``PluginConfig.decodeNestedObjects`` for one entry: (args, strict errors)."""
    t = ARGS_TYPES.get(name)
    if t is None:
        return (None if raw is None else UnknownArgs(raw)), []
    if raw is None:
        return {}, []
    want = name + "Args"
    try:
        group, version, kind = _interpret_args(raw, want)
        _check_registered(group, version, kind)
    except (_Fatal, ConfigLoadError) as exc:
        raise _Fatal(f"decoding args for plugin {name}: {exc}") from None
    if kind != want:
        raise _Fatal(f"args for plugin {name} were not of type {want}.{GROUP}, got "
                     f"{kind}{'.' + group if group else ''}")
    decoder = _Decoder()
    try:
        args = decoder.decode(raw, t)
    except _Fatal as exc:
        raise _Fatal(f"decoding args for plugin {name}: {exc}") from None
    if decoder.type_error is not None:
        raise _Fatal(f"decoding args for plugin {name}: {decoder.type_error}")
    return args, decoder.strict


def _interpret_args(raw: Any, want: str) -> tuple[str, str, str]:
    """The args' group/version/kind with the plugin's as defaults (``gvkWithDefaults``)."""
    group, version, kind = GROUP, VERSION, want
    try:
        group, version, kind = _interpret(raw, "")
    except ConfigLoadError as exc:
        if "is missing in" not in exc.message:
            raise _Fatal(exc.message) from None
        api_version = raw.get("apiVersion") or ""
        kind = raw.get("kind") or want
        if api_version:
            group, _, version = api_version.rpartition("/")
        else:
            group, version = GROUP, VERSION
    return group, version, kind



def read_source(source: Any) -> tuple[Any, str, list[str]]:
    """(the object, the text Go would have been given, YAML strict-mode errors).

    A mapping is the object itself (checked by :func:`ksched.yamlio.plain_data`); a path is read
    as ``loadConfigFromFile`` reads it and decoded by the serializer its first byte picks
    (``recognizer.Decode``: JSON when it starts with ``{``, else YAML through ``YAMLToJSON``).
    """
    if isinstance(source, Mapping):
        try:
            data = plain_data(source)
        except LoadError as exc:
            raise _decode_error(f"{KIND}: {exc}") from None
        return data, json.dumps(data, separators=(",", ":")), []
    if not isinstance(source, str | os.PathLike) or isinstance(source, bytes):
        raise _decode_error(f"load_config: expected a {KIND} mapping or a file path, got "
                            f"{type(source).__name__}")
    try:
        raw = read_file(source)
    except LoadError as exc:
        raise ConfigLoadError("read", str(exc)) from None
    text = raw.decode("utf-8", "replace")
    try:
        if is_json(raw):
            return load_json(raw, object_pairs_hook=_Pairs), text, []
        (document,) = load_yaml(raw)
    except LoadError as exc:
        json_error = "couldn't get version/kind; json parse error: " if is_json(raw) else ""
        raise _decode_error(json_error + str(exc)) from None
    errors = []
    if document.duplicates:
        errors.append("yaml: unmarshal errors:\n  " + "\n  ".join(document.duplicates))
    return document.value, text, errors
