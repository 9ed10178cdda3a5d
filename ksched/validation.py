"""apimachinery's validation vocabulary: ``field.Error`` messages, Go's value formatting and
parsing (``%q``, ``encoding/json``, ``time.Duration``, ``strconv.ParseInt``) and the label / DNS
syntax checks of ``apimachinery/pkg/util/validation``. The configuration loader, the manifest
reader and the plugins that report invalid selectors all word their errors through this one
module."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

_MAX_INT64 = 2**63 - 1
_SECOND = 10**9

# =========================================================================== Go formatting


class AsJSON:
    """A ``BadValue`` that ``field.Error`` prints through ``json.Marshal`` (named string types,
    slices, structs, durations)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


OMIT = object()
_GO_QUOTE_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
                     "\t": "\\t", "\v": "\\v", '"': '\\"', "\\": "\\\\"}
_GO_JSON_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t",
                    "\b": "\\b", "\f": "\\f"}


def go_quote(text: str) -> str:
    """``strconv.Quote`` (Go's ``%q`` of a string)."""
    out = []
    for ch in text:
        code = ord(ch)
        if ch in _GO_QUOTE_ESCAPES:
            out.append(_GO_QUOTE_ESCAPES[ch])
        elif ch.isprintable():
            out.append(ch)
        elif code < 0x80:
            out.append(f"\\x{code:02x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return '"' + "".join(out) + '"'


def go_json(value: Any) -> str:
    """``encoding/json.Marshal`` of plain data (mapping keys in the given order)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, str):
        return _go_json_string(value)
    if isinstance(value, Mapping):
        return "{" + ",".join(f"{_go_json_string(str(k))}:{go_json(v)}"
                              for k, v in value.items()) + "}"
    return "[" + ",".join(go_json(v) for v in value) + "]"


def _go_json_string(text: str) -> str:
    out = []
    for ch in text:
        code = ord(ch)
        if ch in _GO_JSON_ESCAPES:
            out.append(_GO_JSON_ESCAPES[ch])
        elif code < 0x20 or ch in "<>&" or code in (0x2028, 0x2029):
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def go_duration(ns: int) -> str:
    """``time.Duration.String``."""
    neg, u = ns < 0, abs(ns)
    if u < _SECOND:
        if u == 0:
            return "0s"
        prec, unit = (0, "ns") if u < 1000 else (3, "µs") if u < 10**6 else (6, "ms")
        u, frac = _fraction(u, prec)
        text = f"{u}{frac}{unit}"
    else:
        u, frac = _fraction(u, 9)
        text = f"{u % 60}{frac}s"
        u //= 60
        if u:
            text = f"{u % 60}m{text}"
            u //= 60
            if u:
                text = f"{u}h{text}"
    return "-" + text if neg else text


def _fraction(u: int, prec: int) -> tuple[int, str]:
    if prec == 0:
        return u, ""
    digits = f"{u % 10**prec:0{prec}d}".rstrip("0")
    return u // 10**prec, ("." + digits if digits else "")


_DURATION_UNITS = {"ns": 1, "us": 10**3, "µs": 10**3, "μs": 10**3, "ms": 10**6, "s": _SECOND,
                   "m": 60 * _SECOND, "h": 3600 * _SECOND}
_DURATION_PART = re.compile(r"(\d*)(?:\.(\d*))?([^\d.]*)")


def parse_go_duration(text: str) -> int:
    """``time.ParseDuration`` in nanoseconds; raises ``ValueError`` with Go's message."""
    rest, sign = text, 1
    if rest[:1] in ("-", "+"):
        sign, rest = (-1 if rest[0] == "-" else 1), rest[1:]
    if rest == "0":
        return 0
    if not rest:
        raise ValueError(f"time: invalid duration {go_quote(text)}")
    total = 0
    while rest:
        match = _DURATION_PART.match(rest)
        whole, frac, unit = match.group(1), match.group(2), match.group(3)
        if not whole and not frac:
            raise ValueError(f"time: invalid duration {go_quote(text)}")
        if not unit:
            raise ValueError(f"time: missing unit in duration {go_quote(text)}")
        if unit not in _DURATION_UNITS:
            raise ValueError(f"time: unknown unit {go_quote(unit)} in duration {go_quote(text)}")
        scale = _DURATION_UNITS[unit]
        total += int(whole or 0) * scale + int(frac or 0) * scale // 10 ** len(frac or "")
        rest = rest[match.end():]
    if total > _MAX_INT64:
        raise ValueError(f"time: invalid duration {go_quote(text)}")
    return sign * total


_GO_INT = re.compile(r"[+-]?[0-9]+\Z")


def parse_go_int(text: str) -> int | None:
    """``strconv.ParseInt(text, 10, 64)``: the integer, or ``None`` when Go would fail (the
    ``Gt`` / ``Lt`` selector operators compare label values parsed so)."""
    if not _GO_INT.match(text):
        return None
    value = int(text)
    return value if -_MAX_INT64 - 1 <= value <= _MAX_INT64 else None


# --------------------------------------------------------------------------- field errors


@attrs.frozen
class FieldError:
    """``field.Error``: ``<field>: <type>[: <bad value>][: <detail>]``."""

    type: str
    field: str
    value: Any = OMIT
    detail: str = ""

    def __str__(self) -> str:
        body = self.type
        if self.value is not OMIT:
            body += ": " + bad_value(self.value)
        if self.detail:
            body += ": " + self.detail
        return f"{self.field}: {body}"


def bad_value(value: Any) -> str:
    """``ErrorBody``: simple types with ``%v``, strings with ``%q``, the rest as JSON."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, AsJSON):
        return go_json(value.value)
    return go_json(value)


def set_operator_errors(operator: str, values: Any, path: str) -> list[FieldError] | None:
    """The value rule both ``ValidateLabelSelectorRequirement`` and
    ``ValidateNodeSelectorRequirement`` apply to the set-based operators: ``In`` / ``NotIn``
    need values, ``Exists`` / ``DoesNotExist`` take none; ``None`` for any other operator."""
    if operator in ("In", "NotIn"):
        return [] if values else [required(f"{path}.values", "must be specified when "
                                                               "`operator` is 'In' or 'NotIn'")]
    if operator in ("Exists", "DoesNotExist"):
        return [forbidden(f"{path}.values", "may not be specified when `operator` is "
                                             "'Exists' or 'DoesNotExist'")] if values else []
    return None


def invalid(path: str, value: Any, detail: str) -> FieldError:
    return FieldError("Invalid value", path, value, detail)


def required(path: str, detail: str = "") -> FieldError:
    return FieldError("Required value", path, OMIT, detail)


def forbidden(path: str, detail: str) -> FieldError:
    return FieldError("Forbidden", path, OMIT, detail)


def duplicate(path: str, value: Any) -> FieldError:
    return FieldError("Duplicate value", path, value)


def not_supported(path: str, value: Any, valid: Sequence[str]) -> FieldError:
    detail = "supported values: " + ", ".join(go_quote(v) for v in valid) if valid else ""
    return FieldError("Unsupported value", path, value, detail)


def aggregate(messages: Iterable[str]) -> str:
    """``utilerrors.Aggregate.Error``: one message as is, several deduplicated in brackets."""
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def child(path: str, *names: str) -> str:
    """``field.Path.Child``: a nil path gives a root without a leading dot."""
    for name in names:
        path = f"{path}.{name}" if path else name
    return path


# --------------------------------------------------------------------------- label syntax

_LABEL_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_KEY_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and "
                  "end with an alphanumeric character")
_LABEL_VALUE_FMT = f"({_LABEL_KEY_FMT})?"
LABEL_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric "
                    "characters, '-', '_' or '.', and must start and end with an alphanumeric "
                    "character")
DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_SUBDOMAIN_FMT = DNS1123_LABEL_FMT + "(\\." + DNS1123_LABEL_FMT + ")*"
DNS1123_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case "
                          "alphanumeric characters, '-' or '.', and must start and end with an "
                          "alphanumeric character")


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """``content.RegexError`` (its examples are joined as ``'a',  or 'b', ``)."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    msg += " (e.g. "
    for i, example in enumerate(examples):
        msg += (" or " if i else "") + f"'{example}', "
    return msg + f"regex used for validation is '{fmt}')"


def _len(text: str) -> int:
    return len(text.encode())


def is_dns1123_subdomain(value: str) -> list[str]:
    """``content.IsDNS1123Subdomain``."""
    errs = []
    if _len(value) > 253:
        errs.append("must be no more than 253 bytes")
    if not re.fullmatch(DNS1123_SUBDOMAIN_FMT, value):
        errs.append(regex_error(DNS1123_SUBDOMAIN_MSG, DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def is_label_key(value: str) -> list[str]:
    """``content.IsLabelKey`` (= ``validation.IsQualifiedName``)."""
    parts = value.split("/")
    if len(parts) > 2:
        return ["a valid label key " + regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName",
                                                    "my.name", "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    errs = []
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs += ["prefix part " + m for m in is_dns1123_subdomain(prefix)]
    if not name:
        errs.append("name part must be non-empty")
    elif _len(name) > 63:
        errs.append("name part must be no more than 63 bytes")
    if not re.fullmatch(_LABEL_KEY_FMT, name):
        errs.append("name part " + regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName",
                                                "my.name", "123-abc"))
    return errs


def is_label_value(value: str) -> list[str]:
    """``content.IsLabelValue``."""
    errs = []
    if _len(value) > 63:
        errs.append("must be no more than 63 bytes")
    if not re.fullmatch(_LABEL_VALUE_FMT, value):
        errs.append(regex_error(LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value",
                                 "12345"))
    return errs


def label_name_errors(name: str, path: str) -> list[FieldError]:
    """``metav1validation.ValidateLabelName`` (also ``ValidateQualifiedName``: the same
    check, one error per message)."""
    return [invalid(path, name, msg) for msg in label_key_messages(name)]


# --------------------------------------------------------------------------- object names

#: ``apimachinery/pkg/util/validation`` says "characters" where ``content`` says "bytes"
#: (both count bytes); object names go through the former.
_DNS1123_LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric "
                      "characters or '-', and must start and end with an alphanumeric character")
_DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_LABEL_MSG = ("a DNS-1035 label must consist of lower case alphanumeric characters or "
                      "'-', start with an alphabetic character, and end with an alphanumeric "
                      "character")
_PERCENT_FMT = "[0-9]+%"


def max_len_error(length: int) -> str:
    """``validation.MaxLenError``."""
    return f"must be no more than {length} characters"


@functools.lru_cache(maxsize=16384)
def _dns1123_label_messages(value: str) -> tuple[str, ...]:
    errs = []
    if _len(value) > 63:
        errs.append(max_len_error(63))
    if not re.fullmatch(DNS1123_LABEL_FMT, value):
        if re.fullmatch(DNS1123_SUBDOMAIN_FMT, value):
            errs.append("must not contain dots")
        else:
            errs.append(regex_error(_DNS1123_LABEL_MSG, DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return tuple(errs)


def is_dns1123_label(value: str) -> list[str]:
    """``validation.IsDNS1123Label`` (``NameIsDNSLabel``: namespace and container names)."""
    return list(_dns1123_label_messages(value))


@functools.lru_cache(maxsize=65536)
def _dns1123_subdomain_messages(value: str) -> tuple[str, ...]:
    errs = []
    if _len(value) > 253:
        errs.append(max_len_error(253))
    if not re.fullmatch(DNS1123_SUBDOMAIN_FMT, value):
        errs.append(regex_error(DNS1123_SUBDOMAIN_MSG, DNS1123_SUBDOMAIN_FMT, "example.com"))
    return tuple(errs)


def name_is_dns1123_subdomain(value: str) -> list[str]:
    """``validation.IsDNS1123Subdomain`` as ``NameIsDNSSubdomain`` uses it (pod, node and
    PriorityClass names)."""
    return list(_dns1123_subdomain_messages(value))


def is_dns1035_label(value: str) -> list[str]:
    """``validation.IsDNS1035Label`` (Service names)."""
    errs = []
    if _len(value) > 63:
        errs.append(max_len_error(63))
    if not re.fullmatch(_DNS1035_LABEL_FMT, value):
        errs.append(regex_error(_DNS1035_LABEL_MSG, _DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return errs


def inclusive_range_error(lo: int, hi: int) -> str:
    """``validation.InclusiveRangeError``."""
    return f"must be between {lo} and {hi}, inclusive"


def is_valid_port_num(port: int) -> list[str]:
    """``validation.IsValidPortNum``."""
    return [] if 1 <= port <= 65535 else [inclusive_range_error(1, 65535)]


def is_valid_percent(text: str) -> list[str]:
    """``validation.IsValidPercent``."""
    if re.fullmatch(_PERCENT_FMT, text):
        return []
    return [regex_error("a valid percent string must be a numeric string followed by an ending "
                        "'%'", _PERCENT_FMT, "1%", "93%")]


# --------------------------------------------------------------------------- labels, cached

@functools.lru_cache(maxsize=65536)
def label_key_messages(key: str) -> tuple[str, ...]:
    """:func:`is_label_key`, memoized (label keys repeat across every object)."""
    return tuple(is_label_key(key))


@functools.lru_cache(maxsize=65536)
def label_value_messages(value: str) -> tuple[str, ...]:
    """:func:`is_label_value`, memoized."""
    return tuple(is_label_value(value))


def label_values_errors(values: Sequence[str], path: str) -> list[FieldError]:
    """``IsValidLabelValue`` of each value of a selector requirement, at ``path[i]``
    (``ValidateLabelSelectorRequirement``, ``ValidateNodeSelectorRequirement``)."""
    return [invalid(f"{path}[{i}]", value, msg)
            for i, value in enumerate(values) for msg in label_value_messages(value)]


def labels_errors(labels: Mapping[str, str], path: str) -> list[FieldError]:
    """``metav1validation.ValidateLabels``: each key a qualified name, each value a label
    value, every error on the map's own path."""
    errs = []
    for key, value in labels.items():
        errs += [invalid(path, key, msg) for msg in label_key_messages(key)]
        errs += [invalid(path, value, msg) for msg in label_value_messages(value)]
    return errs
