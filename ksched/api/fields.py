"""The vocabulary of ksched's frozen records: immutable mappings, field checks and converters.

Records check themselves: every field's type is checked at construction (``Node(unschedulable=
"false")`` raises :class:`~ksched.errors.InvalidObjectError`), and resource lists take quantity
strings where users write them (``{"cpu": "8", "memory": "32Gi"}`` is 8 cores) and integers in
the units the scheduler uses (cpu in milli-cores, everything else in units). A record class
declares its fields with :func:`checked_field` (or the converters here) and is made a frozen
attrs class by :func:`record`, which compiles one check of all its fields.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, ItemsView, Iterator, KeysView, Mapping, ValuesView
from typing import Any

import attrs

from ksched import quantity as _quantity
from ksched import validation as _v
from ksched.errors import InvalidObjectError

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


class FrozenDict(Mapping[str, Any]):
    """An immutable, hashable mapping (labels, resource lists)."""

    __slots__ = ("_data", "_hash")

    def __init__(self, data: Mapping[str, Any] | None = None) -> None:
        self._data = dict(data or {})
        self._hash: int | None = None

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def keys(self) -> KeysView[str]:
        """The keys, as the underlying dict's view (set operations at dict speed)."""
        return self._data.keys()

    def items(self) -> ItemsView[str, Any]:
        """The items, as the underlying dict's view (iterated at dict speed)."""
        return self._data.items()

    def values(self) -> ValuesView[Any]:
        """The values, as the underlying dict's view."""
        return self._data.values()

    def get(self, key: str, default: Any = None) -> Any:
        """``Mapping.get`` at dict speed (the mixin's raises and catches a miss)."""
        return self._data.get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self._data.items()))
        return self._hash

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FrozenDict):
            return self._data == other._data
        if isinstance(other, Mapping):
            return self._data == dict(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"FrozenDict({self._data!r})"


class StringMap(FrozenDict):
    """A :class:`FrozenDict` already checked to map strings to strings."""

    __slots__ = ()


class ResourceList(FrozenDict):
    """A checked resource list: name -> amount in scheduler units (cpu in milli-cores,
    everything else in units), each amount an int in ``[0, 2**63 - 1]``."""

    __slots__ = ()


_EMPTY_STRINGS = StringMap()
_EMPTY_RESOURCES = ResourceList()


# --------------------------------------------------------------------------- record checks

_TYPE_NAMES = {dict: "an object", list: "a list", tuple: "a list", str: "a string",
               bool: "a boolean", int: "an integer", float: "a number", type(None): "null"}


def type_name(value: Any) -> str:
    name = _TYPE_NAMES.get(type(value))
    if name is not None:
        return name
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


def _owner(record: Any) -> str:
    """How errors name a record: ``pod default/web``, ``node n1``, ``container c``, ``taint``."""
    kind = type(record).__name__.lower()
    name = getattr(record, "name", None)
    if not isinstance(name, str):
        return kind
    namespace = getattr(record, "namespace", None)
    return f"{kind} {namespace}/{name}" if isinstance(namespace, str) else f"{kind} {name}"


def _refuse(record: Any, path: str, problem: str) -> None:
    raise InvalidObjectError(_owner(record), path, problem)


def _is_int(value: Any) -> bool:
    return type(value) is int or (isinstance(value, numbers.Integral)
                                  and not isinstance(value, bool))


def _is_real(value: Any) -> bool:
    return type(value) is float or _is_int(value) or (isinstance(value, numbers.Real)
                                                      and not isinstance(value, bool))


@attrs.frozen
class _Check:
    """How a record checks one field: ``fast``, a Python expression over ``{v}`` (the value)
    true for the common valid values, by exact type; and ``slow(record, name, value)``, which
    raises the error when the value is invalid after all. ``env`` names what ``fast`` uses
    (as ``{K}`` and ``{A}``)."""

    fast: str
    slow: Callable[[Any, str, Any], None]
    env: Mapping[str, Any] = attrs.field(factory=dict)


def _simple(fast: str, what: str, test: Callable[[Any], bool]) -> _Check:
    def slow(record: Any, name: str, value: Any) -> None:
        if not test(value):
            _refuse(record, name, f"expected {what}, got {type_name(value)}")
    return _Check(fast, slow)


STR = _simple("type({v}) is str", "a string", lambda v: isinstance(v, str))
BOOL = _simple("{v} is True or {v} is False", "a boolean", lambda v: isinstance(v, bool))
INT = _simple("type({v}) is int", "an integer", _is_int)
INT32 = _Check("type({v}) is int and -2147483648 <= {v} <= 2147483647",
                lambda record, name, value: _check_int32(record, name, value))
OPT_INT = _simple("{v} is None or type({v}) is int", "an integer or null",
                   lambda v: v is None or _is_int(v))
OPT_TIME = _simple("{v} is None or type({v}) is float or type({v}) is int",
                    "a number of seconds or null", lambda v: v is None or _is_real(v))


def _check_int32(record: Any, name: str, value: Any) -> None:
    """An ``int32`` field of the API (ports, weights, priorities, skews)."""
    INT.slow(record, name, value)
    if not INT32_MIN <= value <= INT32_MAX:
        _refuse(record, name, f"Invalid value: {value}: must be a 32-bit integer")


def instance_of(kind: type) -> _Check:
    """A field holding a ``kind`` record."""
    return _Check("type({v}) is {K}", _simple("", f"a {kind.__name__}",
                                              lambda v: isinstance(v, kind)).slow, {"K": kind})


INT_OR_PERCENT = _simple("{v} is None or type({v}) is int or type({v}) is str",
                          "an integer, a percentage or null",
                          lambda v: v is None or _is_int(v) or isinstance(v, str))


def items_of(kind: type, what: str) -> _Check:
    """A tuple field (or ``None``): every item of type ``kind``."""
    def slow(record: Any, name: str, value: Any) -> None:
        for i, item in enumerate(value or ()):
            if not isinstance(item, kind):
                _refuse(record, f"{name}[{i}]", f"expected {what}, got {type_name(item)}")
    return _Check("not {v} or all([type(x) is {K} for x in {v}])", slow, {"K": kind})


def optional_of(kind: type) -> _Check:
    """A field holding a ``kind`` record or ``None``."""
    return _Check("{v} is None or type({v}) is {K}",
                  _simple("", f"a {kind.__name__} or null",
                          lambda v: v is None or isinstance(v, kind)).slow, {"K": kind})


def one_of(*allowed: str, optional: bool = False) -> _Check:
    """An enum field, its errors worded as ``field.NotSupported``."""
    shown = [a for a in allowed if a]
    accepted = frozenset(allowed)

    def slow(record: Any, name: str, value: Any) -> None:
        if value is None and optional:
            return
        if not isinstance(value, str):
            _refuse(record, name, f"expected a string, got {type_name(value)}")
        if value not in accepted:
            _refuse(record, name, error_body(_v.not_supported(name, value, shown)))
    fast = "type({v}) is str and {v} in {A}"
    return _Check("{v} is None or " + fast if optional else fast, slow, {"A": accepted})


def checked_field(check: _Check, **kw: Any) -> Any:
    """An attrs field checked by ``check`` (see :func:`record`)."""
    return attrs.field(metadata={"check": check}, **kw)


#: The compiled check of each record class.
_CHECKS: dict[type, Callable[[Any], None]] = {}


def _compile_checks(cls: type) -> Callable[[Any], None]:
    """One function testing every checked field of ``cls`` in one expression (the common
    case costs a few attribute loads), running the fields' slow checks only when it fails."""
    fields = [f for f in attrs.fields(cls) if "check" in f.metadata]
    env: dict[str, Any] = {}
    tests = []
    for i, f in enumerate(fields):
        check = f.metadata["check"]
        env.update({f"{key}{i}": value for key, value in check.env.items()})
        tests.append("(" + check.fast.format(v=f"r.{f.name}", K=f"K{i}", A=f"A{i}") + ")")
    exec("def fast(r):\n    return " + (" and ".join(tests) or "True"), env)  # noqa: S102
    fast = env["fast"]

    def check(record: Any) -> None:
        if not fast(record):
            for f in fields:
                f.metadata["check"].slow(record, f.name, getattr(record, f.name))
    return check


def record(cls: type) -> type:
    """``attrs.frozen``, the fields checked after ``__init__`` (by :func:`_compile_checks`),
    before the class's own ``__attrs_post_init__`` (its defaulting)."""
    own = cls.__dict__.get("__attrs_post_init__")

    def __attrs_post_init__(self: Any) -> None:
        _CHECKS[type(self)](self)
        if own is not None:
            own(self)

    cls.__attrs_post_init__ = __attrs_post_init__
    record = attrs.frozen(cls)
    _CHECKS[record] = _compile_checks(record)
    return record


def assembler(cls: type, *groups: tuple[str, ...]) -> Callable[..., Any]:
    """A constructor of ``cls`` from its fields' values in their final form, no converter,
    check or defaulting run again (the values come from records of ``cls``, or were read
    and checked as its constructor would): ``assemble(values_1, values_2, ...)``, a
    sequence per group of field names, in the group's order (every field in one group)."""
    names = [f.name for f in attrs.fields(cls)]
    if sorted(sum(groups, ())) != sorted(names):
        raise ValueError(f"{cls.__name__}: every field in one group")
    lines = [f"    set(record, {name!r}, values_{g}[{i}])"
             for g, group in enumerate(groups) for i, name in enumerate(group)]
    source = (f"def assemble({', '.join(f'values_{g}' for g in range(len(groups)))}):\n"
              "    record = new(cls)\n" + "\n".join(lines) + "\n    return record\n")
    env = {"new": object.__new__, "set": object.__setattr__, "cls": cls}
    exec(source, env)  # noqa: S102
    return env["assemble"]


def error_body(err: _v.FieldError) -> str:
    """A field error's text after its path (``ErrorBody``)."""
    return str(err)[len(err.field) + 2:]


def _seq(value: Any, record: Any, field: Any) -> tuple:
    """Converter: any iterable (not a string or mapping) to a tuple; ``None`` to ``()``."""
    if value is None:
        return ()
    if type(value) is tuple:
        return value
    if isinstance(value, str | bytes | Mapping) or not hasattr(value, "__iter__"):
        _refuse(record, field.name, f"expected a list, got {type_name(value)}")
    return tuple(value)


def _opt_seq(value: Any, record: Any, field: Any) -> tuple | None:
    return None if value is None else _seq(value, record, field)


SEQ = attrs.Converter(_seq, takes_self=True, takes_field=True)
_OPT_SEQ = attrs.Converter(_opt_seq, takes_self=True, takes_field=True)


def _string_map(value: Any, record: Any, field: Any) -> StringMap:
    """Converter: a mapping of strings to strings, checked once (a checked map passes)."""
    if type(value) is StringMap:
        return value if value else _EMPTY_STRINGS
    if value is None or (isinstance(value, Mapping) and not value):
        return _EMPTY_STRINGS  # one empty map for all: replicas share their field objects
    if not isinstance(value, Mapping):
        _refuse(record, field.name, f"expected an object, got {type_name(value)}")
    for key, item in value.items():
        if not isinstance(key, str):
            _refuse(record, field.name, f"expected string keys, got {type_name(key)}")
        if not isinstance(item, str):
            _refuse(record, f"{field.name}.{key}", f"expected a string, got {type_name(item)}")
    return StringMap(value)


def _opt_string_map(value: Any, record: Any, field: Any) -> StringMap | None:
    return None if value is None else _string_map(value, record, field)


STRING_MAP = attrs.Converter(_string_map, takes_self=True, takes_field=True)
OPT_STRING_MAP = attrs.Converter(_opt_string_map, takes_self=True, takes_field=True)


def _amount(name: str, value: Any, record: Any, path: str) -> int:
    """One resource amount: an int in scheduler units as it is, a quantity (string or float)
    converted (cpu to milli-cores, the rest to units, rounded up)."""
    if type(value) is int and 0 <= value <= INT64_MAX:
        return value
    if _is_int(value):
        if not 0 <= value <= INT64_MAX:
            shown = _v.invalid(path, int(value), "must be greater than or equal to 0"
                               if value < 0 else f"must be at most {INT64_MAX}")
            _refuse(record, path, error_body(shown))
        return int(value)
    if isinstance(value, str | float) and not isinstance(value, bool):
        try:
            if _quantity.parse_quantity(value) < 0:
                _refuse(record, path, error_body(_v.invalid(path, _quantity.canonical(value),
                                                       "must be greater than or equal to 0")))
            return _quantity.scheduler_amount(name, value)
        except _quantity.QuantityError as exc:
            _refuse(record, path, str(exc))
    _refuse(record, path, f"expected a quantity, got {type_name(value)}")


def _resource_list(value: Any, record: Any, field: Any) -> ResourceList:
    """Converter: a resource list in scheduler units, checked once (a checked list passes)."""
    if type(value) is ResourceList:
        return value if value else _EMPTY_RESOURCES
    if value is None or (isinstance(value, Mapping) and not value):
        return _EMPTY_RESOURCES
    if not isinstance(value, Mapping):
        _refuse(record, field.name, f"expected an object, got {type_name(value)}")
    out = {}
    for name, amount in value.items():
        if not isinstance(name, str):
            _refuse(record, field.name, f"expected string keys, got {type_name(name)}")
        out[name] = _amount(name, amount, record, f"{field.name}.{name}")
    return ResourceList(out)


def _opt_resource_list(value: Any, record: Any, field: Any) -> ResourceList | None:
    return None if value is None else _resource_list(value, record, field)


RESOURCES = attrs.Converter(_resource_list, takes_self=True, takes_field=True)
OPT_RESOURCES = attrs.Converter(_opt_resource_list, takes_self=True, takes_field=True)


def tuple_of(kind: type, optional: bool = False) -> Any:
    """A tuple field of ``kind`` items, from any iterable (``None`` if ``optional``)."""
    what = "a string" if kind is str else f"a {kind.__name__}"
    if optional:
        return checked_field(items_of(kind, what), default=None, converter=_OPT_SEQ)
    return checked_field(items_of(kind, what), default=(), converter=SEQ)


def strings_field(**kw: Any) -> Any:
    return checked_field(items_of(str, "a string"), default=(), converter=SEQ, **kw)
