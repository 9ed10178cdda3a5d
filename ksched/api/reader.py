"""Reading one manifest (the wire format, ``kubectl get -o json``) field by field, as the API
server decodes and validates it: :class:`ManifestReader` (typed access whose errors name the
object and the field path, in ``pkg/apis/core/validation``'s words), object metadata
(``ValidateObjectMeta``), RFC 3339 timestamps (``metav1.Time``) and owner references, and
:class:`Memo`, how the readers of :mod:`ksched.api.pods` and :mod:`ksched.api.kinds` reach the
parts a load has read before (nothing, here; :class:`~ksched.api.memo.ManifestMemo` remembers).
"""

from __future__ import annotations

import datetime
import re
import types
from collections.abc import Callable, Mapping
from typing import Any

from ksched import validation as _v
from ksched.api.fields import FrozenDict, ResourceList, StringMap, error_body, type_name
from ksched.api.resource_validation import checked_quantity
from ksched.errors import InvalidObjectError

__all__ = ["NO_MEMO", "ManifestReader", "Memo", "annotation_errors", "check_name",
           "object_label", "parse_time", "read_controller", "read_metadata", "too_long"]


_RFC3339 = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?"
                      r"(Z|[+-]\d{2}:[0-5]\d)\Z")


def parse_time(text: str) -> float:
    """POSIX seconds (UTC) of an RFC 3339 timestamp, as ``metav1.Time`` unmarshals it
    (``time.RFC3339``: ``Z`` or a ``+hh:mm`` offset, optional fractional seconds).

    Raises ``ValueError`` for anything else.
    """
    match = _RFC3339.match(text) if isinstance(text, str) else None
    try:
        if match is None:
            raise ValueError
        zone = match[8]
        offset = 0 if zone == "Z" else int(zone[1:3]) * 60 + int(zone[4:6])
        tz = datetime.timezone(datetime.timedelta(minutes=-offset if zone[0] == "-" else offset))
        moment = datetime.datetime(*(int(g) for g in match.groups()[:6]), tzinfo=tz)
    except ValueError:
        raise ValueError(f'invalid RFC 3339 timestamp "{text}"') from None
    return moment.timestamp() + float(match[7] or 0)


class ManifestReader:
    """Typed access to one manifest, raising errors that name the object and field."""

    def __init__(self, obj: str) -> None:
        self.obj = obj

    def fail(self, path: str, problem: str) -> None:
        raise InvalidObjectError(self.obj, path, problem)

    def check(self, errors: list[_v.FieldError]) -> None:
        """Raise the first of ``errors`` (a ``field.ErrorList``), if any."""
        if errors:
            self.fail(errors[0].field, error_body(errors[0]))

    def mapping(self, value: Any, path: str) -> Mapping[str, Any]:
        if type(value) is dict:
            return value
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            self.fail(path, f"expected an object, got {type_name(value)}")
        return value

    def seq(self, value: Any, path: str) -> list:
        if type(value) is list:
            return value
        if value is None:
            return []
        if not isinstance(value, list | tuple):
            self.fail(path, f"expected a list, got {type_name(value)}")
        return list(value)

    def string(self, value: Any, path: str, default: str = "") -> str:
        if type(value) is str:
            return value
        if value is None:
            return default
        if not isinstance(value, str):
            self.fail(path, f"expected a string, got {type_name(value)}")
        return value

    def integer(self, value: Any, path: str, default: int | None = 0,
                bits: int = 64) -> int | None:
        """An integer field (``int32`` / ``int64`` upstream: larger values do not decode)."""
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(path, f"expected an integer, got {type_name(value)}")
        if not -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):
            self.fail(path, f"must be a {bits}-bit integer, got {value}")
        return value

    def boolean(self, value: Any, path: str) -> bool:
        if value is None:
            return False
        if not isinstance(value, bool):
            self.fail(path, f"expected a boolean, got {type_name(value)}")
        return value

    def count(self, value: Any, path: str, default: int | None = 0) -> int | None:
        """A non-negative ``int32`` (``ValidateNonnegativeField``)."""
        value = self.integer(value, path, default, bits=32)
        if value is not None and value < 0:
            self.fail(path, f"Invalid value: {value}: must be greater than or equal to 0")
        return value

    def choice(self, value: Any, path: str, allowed: tuple[str, ...], default: str = "",
               shown: tuple[str, ...] | None = None, required: bool = True) -> str:
        """An enum field: ``field.Required`` when empty (if ``required`` and ``""`` is not
        allowed), else ``field.NotSupported`` listing ``shown`` (upstream's order; default
        ``allowed``)."""
        text = self.string(value, path, default)
        if text not in allowed:
            if not text and required:
                self.check([_v.required(path)])
            self.check([_v.not_supported(path, text, shown or [a for a in allowed if a])])
        return text

    def timestamp(self, value: Any, path: str) -> float | None:
        """An RFC 3339 timestamp as POSIX seconds; ``None`` when absent."""
        if value is None:
            return None
        text = self.string(value, path)
        try:
            return parse_time(text)
        except ValueError as exc:
            self.fail(path, str(exc))

    def string_map(self, value: Any, path: str) -> FrozenDict:
        out = {}
        for key, item in self.mapping(value, path).items():
            out[self.key(key, path)] = self.string(item, f"{path}.{key}")
        return StringMap(out)

    def key(self, key: Any, path: str) -> str:
        """A mapping's key (YAML allows keys that are not strings; JSON does not)."""
        if not isinstance(key, str):
            self.fail(path, f"expected string keys, got {type_name(key)} {key!r}")
        return key

    def labels(self, value: Any, path: str) -> FrozenDict:
        """A label map, checked as ``ValidateLabels`` does."""
        labels = self.string_map(value, path)
        self.check(_v.labels_errors(labels, path))
        return labels

    def strings(self, value: Any, path: str) -> tuple[str, ...]:
        return tuple(self.string(v, f"{path}[{i}]") for i, v in enumerate(self.seq(value, path)))

    def resources(self, value: Any, path: str,
                  names: Callable[[str, str], list[_v.FieldError]] | None = None) -> ResourceList:
        """A ResourceList: cpu in milli-cores, everything else in units, both rounded up."""
        return ResourceList({n: amount for n, (amount, _) in
                             self.quantities(value, path, names).items()})

    def quantities(self, value: Any, path: str,
                   names: Callable[[str, str], list[_v.FieldError]] | None = None
                   ) -> dict[str, tuple[int, str | int | float]]:
        """A ResourceList as name -> (amount in scheduler units, the text as written), each
        checked: its name by ``names`` (``validateContainerResourceName``, ...), its value by
        ``ValidateResourceQuantityValue`` (not negative; whole for integer resources),
        hugepages by ``validateResourceQuantityHugePageValue``, and its amount against int64."""
        out = {}
        for name, text in self.mapping(value, path).items():
            qpath = f"{path}.{self.key(name, path)}"
            if isinstance(text, bool) or not isinstance(text, str | int | float):
                self.fail(qpath, f"expected a quantity, got {type_name(text)}")
            amount, error = checked_quantity(name, text, qpath, names)
            if error is not None:
                self.fail(*error)
            out[name] = (amount, text)
        return out



def object_label(obj: Mapping[str, Any], kind: str, namespaced: bool) -> str:
    """How errors name an object: ``pod default/web``, ``node n1``, ``node <unnamed>``."""
    meta = obj.get("metadata")
    is_map = type(meta) is dict or isinstance(meta, Mapping)
    name = meta.get("name") if is_map else None
    namespace = (meta.get("namespace") or "default") if is_map else "default"
    if not isinstance(namespace, str):
        namespace = "default"
    label = f"{namespace}/{name}" if namespaced else f"{name}"
    return f"{kind.lower()} {label if isinstance(name, str) and name else '<unnamed>'}"


def read_metadata(obj: Mapping[str, Any], kind: str, namespaced: bool,
              name_check: Callable[[str], list[str]] = _v.name_is_dns1123_subdomain
              ) -> tuple[ManifestReader, Mapping]:
    """The reader of one object and its ``metadata``, checked as ``ValidateObjectMeta``
    does: a name (``name_check``), a namespace that is a DNS label, valid labels (by the
    caller, who reads them), RFC 3339 times, valid annotations; and a string ``apiVersion``."""
    if type(obj) is not dict and not isinstance(obj, Mapping):
        raise InvalidObjectError(kind.lower(), "", f"expected an object, got {type_name(obj)}")
    reader = ManifestReader(object_label(obj, kind, namespaced))
    meta = reader.mapping(obj.get("metadata"), "metadata")
    name = reader.string(meta.get("name"), "metadata.name")
    if not name:
        reader.check([_v.required("metadata.name", "name or generateName is required")])
    check_name(reader, name, "metadata.name", name_check)
    if namespaced:
        namespace = reader.string(meta.get("namespace"), "metadata.namespace")
        check_name(reader, namespace, "metadata.namespace", _v.is_dns1123_label)
    for field in _METADATA_TIMES[kind == "Pod":]:  # read_pod reads its creation time itself
        reader.timestamp(meta.get(field), f"metadata.{field}")
    reader.string(obj.get("apiVersion"), "apiVersion")  # TypeMeta: a string, or no decode
    if meta.get("annotations") is not None:
        reader.check(annotation_errors(reader, meta["annotations"], "metadata.annotations"))
    return reader, meta


#: The ``metav1.Time`` fields of ``metadata`` (RFC 3339, or the object does not decode).
_METADATA_TIMES = ("creationTimestamp", "deletionTimestamp")
#: ``TotalAnnotationSizeLimitB``.
_ANNOTATIONS_LIMIT = 256 * (1 << 10)


def too_long(path: str, limit: int) -> _v.FieldError:
    """``field.TooLong`` (its value is not shown)."""
    return _v.FieldError("Too long", path, _v.OMIT, f"may not be more than {limit} bytes")


def annotation_errors(r: ManifestReader, value: Any, path: str) -> list[_v.FieldError]:
    """``ValidateAnnotations``: a string map (or the object does not decode) whose keys are
    qualified names (lower-cased), 256 kB in all."""
    annotations = r.string_map(value, path)
    errs = [_v.invalid(path, key, msg) for key in annotations
            for msg in _v.label_key_messages(key.lower())]
    if sum(len(k) + len(v) for k, v in annotations.items()) > _ANNOTATIONS_LIMIT:
        errs.append(too_long(path, _ANNOTATIONS_LIMIT))
    return errs


class Memo:
    """How a manifest's parts are read when nothing is remembered: afresh, every time (the
    interface of :class:`ManifestMemo`)."""

    pod_specs: Mapping[bytes, tuple] = types.MappingProxyType({})
    affinities: Mapping[bytes, tuple] = types.MappingProxyType({})
    node_parts: Mapping[bytes, tuple] = types.MappingProxyType({})

    def key(self, value: Any) -> bytes | None:
        """What tells ``value`` apart from every other value (``None``: nothing does)."""
        return None

    def pod_spec_key(self, spec: Mapping[str, Any]) -> bytes | None:
        return None

    def remember(self, table: dict, key: Any, value: Any) -> None:
        pass

    def labels(self, r: ManifestReader, value: Any, path: str) -> FrozenDict:
        return r.labels(value, path)

    def controller(self, r: ManifestReader, value: Any, path: str) -> tuple[str, str, str] | None:
        return read_controller(r, value, path)

    def timestamp(self, r: ManifestReader, value: Any, path: str) -> float | None:
        return r.timestamp(value, path)

    def subdomain(self, r: ManifestReader, value: Any, path: str) -> str:
        """A string field naming an object by a DNS subdomain, when set (``spec.nodeName``)."""
        name = r.string(value, path)
        check_name(r, name, path, _v.name_is_dns1123_subdomain)
        return name


NO_MEMO = Memo()


def read_controller(r: ManifestReader, value: Any, path: str) -> tuple[str, str, str] | None:
    """The first owner reference with ``controller: true``, as (apiVersion, kind, name)."""
    controller = None
    for i, ref in enumerate(r.seq(value, path)):
        rpath = f"{path}[{i}]"
        ref = r.mapping(ref, rpath)
        if r.boolean(ref.get("controller"), f"{rpath}.controller") and controller is None:
            controller = (r.string(ref.get("apiVersion"), f"{rpath}.apiVersion"),
                          r.string(ref.get("kind"), f"{rpath}.kind"),
                          r.string(ref.get("name"), f"{rpath}.name"))
    return controller


def check_name(r: ManifestReader, name: str, path: str,
               check: Callable[[str], list[str]]) -> None:
    """An optional name field: checked when set."""
    if name and (messages := check(name)):
        r.check([_v.invalid(path, name, msg) for msg in messages])
