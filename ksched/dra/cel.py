"""CEL device selectors as the scheduler evaluates them (``dynamic-resource-allocation/cel``).

Built on ``cel-expr-python`` (Google's C++ CEL runtime): the environment has the ``device``
variable (``driver``, ``attributes[domain][id]``, ``capacity[domain][id]``), ``cel.bind``
(``ext.Bindings``), the strings extension, and the Kubernetes ``quantity()`` / ``semver()``
libraries for the functions device selectors use (``compareTo``, ``isGreaterThan``,
``isLessThan``, ``asInteger``, ``asApproximateFloat``, ``sign``, ``isInteger``, ``major``,
``minor``, ``patch``). Version attributes are ``Semver`` values, capacities ``Quantity``
values, and bare attribute names belong to the driver's domain (``DeviceMatches``).

Compile once (:func:`compile_selector`, cached per expression), evaluate per device. A selector
must evaluate to ``bool`` (or dyn); a compile error is kept on the selector and reported by
the reader naming the field. A runtime error is raised as :class:`CelRuntimeError`, which the
allocator words as ``selectorsMatch`` does.

Known difference: upstream declares ``device`` as a typed object, so ``device.foo`` or
``device.driver == 1`` are compile errors there; here ``device`` is a ``map(string, dyn)`` and
such mistakes surface at runtime. An ``attributes``/``capacity`` domain that the device does not
have reads as an empty map (upstream's default map) for every domain named by a string literal
in the expression.
"""

from __future__ import annotations

import re
from fractions import Fraction
from collections.abc import Mapping
from typing import Any

from ksched.errors import KschedError
from ksched.quantity import parse_quantity

__all__ = ["CelSelector", "CelRuntimeError", "compile_selector"]


class CelRuntimeError(KschedError):
    """A selector failed while evaluating on a device."""


_ENV: Any = None
_TYPES: dict[str, Any] = {}
_COMPILED: dict[str, CelSelector] = {}
_LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"|\'((?:[^\'\\]|\\.)*)\'')
_SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
                     r"(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+([0-9A-Za-z-.]+))?$")


def _semver_key(text: str) -> tuple:
    """Semver 2.0 precedence: numbers, then a pre-release sorts before the release."""
    m = _SEMVER.match(text)
    if m is None:
        raise ValueError(f"invalid semver: {text}")
    pre = m[4]
    parts: tuple = ()
    if pre is not None:
        parts = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split("."))
    return (int(m[1]), int(m[2]), int(m[3]), 1 if pre is None else 0, parts)


def _cmp(a: Any, b: Any) -> int:
    return (a > b) - (a < b)


def _env() -> Any:
    """The DRA environment, built on first use."""
    global _ENV
    if _ENV is not None:
        return _ENV
    from cel_expr_python import cel
    from cel_expr_python.ext import ext_bindings, ext_strings
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    fdp = descriptor_pb2.FileDescriptorProto(name="ksched_dra_cel.proto", package="kubernetes",
                                             syntax="proto3")
    for name in ("Semver", "Quantity"):
        m = fdp.message_type.add(name=name)
        m.field.add(name="text", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
                    label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    classes = message_factory.GetMessages([fdp], pool=pool)
    _TYPES["Semver"] = classes["kubernetes.Semver"]
    _TYPES["Quantity"] = classes["kubernetes.Quantity"]
    T = cel.Type
    SV, Q = T("kubernetes.Semver"), T("kubernetes.Quantity")

    def semver(text: str) -> Any:
        _semver_key(text)
        return _TYPES["Semver"](text=text)

    def quantity(text: str) -> Any:
        parse_quantity(text)
        return _TYPES["Quantity"](text=text)

    def sv(a: Any) -> tuple:
        return _semver_key(a.text)

    def qv(a: Any) -> Fraction:
        return parse_quantity(a.text)

    def as_integer(a: Any) -> int:
        value = qv(a)
        if value.denominator != 1 or not -(2 ** 63) <= value < 2 ** 63:
            raise ValueError("cannot convert value to integer")
        return int(value)

    def key(a: Any) -> Any:
        """A Semver's precedence key or a Quantity's exact value."""
        return _semver_key(a.text) if type(a) is _TYPES["Semver"] else parse_quantity(a.text)

    def overloads(name: str, ret: Any, params: list, member: bool, impl: Any,
                  both: bool = False) -> Any:
        """One declaration; with ``both``, for Semver and Quantity receivers alike (the
        runtime dispatches on the message kind, so one implementation serves both)."""
        found = [cel.Overload(f"{name}_0", ret, params, is_member=member, impl=impl)]
        if both:
            found.append(cel.Overload(f"{name}_1", ret, [Q if p is SV else p for p in params],
                                      is_member=member))
        return cel.FunctionDecl(name, found)

    functions = [
        overloads("semver", SV, [T.STRING], False, semver),
        overloads("quantity", Q, [T.STRING], False, quantity),
        overloads("isSemver", T.BOOL, [T.STRING], False,
                  lambda s: _SEMVER.match(s) is not None),
        overloads("compareTo", T.INT, [SV, SV], True, lambda a, b: _cmp(key(a), key(b)), True),
        overloads("isGreaterThan", T.BOOL, [SV, SV], True, lambda a, b: key(a) > key(b), True),
        overloads("isLessThan", T.BOOL, [SV, SV], True, lambda a, b: key(a) < key(b), True),
        overloads("major", T.INT, [SV], True, lambda a: sv(a)[0]),
        overloads("minor", T.INT, [SV], True, lambda a: sv(a)[1]),
        overloads("patch", T.INT, [SV], True, lambda a: sv(a)[2]),
        overloads("asInteger", T.INT, [Q], True, as_integer),
        overloads("isInteger", T.BOOL, [Q], True, lambda a: qv(a).denominator == 1),
        overloads("asApproximateFloat", T.DOUBLE, [Q], True, lambda a: float(qv(a))),
        overloads("sign", T.INT, [Q], True, lambda a: _cmp(qv(a), 0)),
    ]
    _ENV = cel.NewEnv(descriptor_pool=pool, variables={"device": T.Map(T.STRING, T.DYN)},
                      functions=functions,
                      extensions=[ext_bindings.ExtBindings(), ext_strings.ExtStrings()])
    return _ENV


class CelSelector:
    """One compiled selector: ``error`` (a compile error, else ``None``) and
    :meth:`evaluate`. Compared by identity: one object per expression."""

    __slots__ = ("expression", "error", "_program", "_domains")

    def __init__(self, expression: str, error: str | None, program: Any,
                 domains: tuple[str, ...]) -> None:
        self.expression, self.error = expression, error
        self._program, self._domains = program, domains

    def __repr__(self) -> str:
        return f"CelSelector({self.expression!r})"

    def evaluate(self, driver: str, attributes: Mapping[str, tuple[str, Any]],
                 capacity: Mapping[str, str]) -> bool | CelRuntimeError:
        """``DeviceMatches``: the verdict, or the runtime error (returned, to be cached)."""
        if self._program is None:
            return CelRuntimeError(f"compile error: {self.error}")
        attrs_by_domain: dict[str, dict[str, Any]] = {d: {} for d in self._domains}
        for name, (kind, value) in attributes.items():
            domain, ident = _split(name, driver)
            if kind == "version":
                value = _TYPES["Semver"](text=value)
            attrs_by_domain.setdefault(domain, {})[ident] = value
        cap_by_domain: dict[str, dict[str, Any]] = {d: {} for d in self._domains}
        for name, text in capacity.items():
            domain, ident = _split(name, driver)
            cap_by_domain.setdefault(domain, {})[ident] = _TYPES["Quantity"](text=text)
        try:
            result = self._program.eval(data={"device": {
                "driver": driver, "attributes": attrs_by_domain, "capacity": cap_by_domain}})
        except Exception as exc:  # the runtime's own failure
            return CelRuntimeError(str(exc))
        value = result.value()
        if isinstance(value, bool):
            return value
        kind = result.type().name().lower()
        if kind == "error":
            return CelRuntimeError(_runtime_message(str(value)))
        return CelRuntimeError(f"CEL result of type {kind} could not be converted to bool")


def _runtime_message(text: str) -> str:
    """The runtime's status text in cel-go's words where they differ."""
    m = re.match(r'NOT_FOUND: Key not found in map : "(.*)"$', text)
    if m:
        return f"no such key: {m[1]}"
    return re.sub(r"^[A-Z_]+: ", "", text)


def _split(name: str, driver: str) -> tuple[str, str]:
    """``parseQualifiedName``: ``domain/id``, a bare id in the driver's domain."""
    domain, sep, ident = name.rpartition("/")
    return (domain, ident) if sep else (driver, name)


def compile_selector(expression: str) -> CelSelector:
    """The compiled selector of ``expression`` (one object per distinct expression)."""
    found = _COMPILED.get(expression)
    if found is not None:
        return found
    env = _env()
    domains = tuple(sorted({a or b for a, b in _LITERAL.findall(expression)}))
    try:
        program = env.compile(expression)
    except RuntimeError as exc:
        text = str(exc)
        text = re.sub(r"^INVALID_ARGUMENT: ", "", text)
        text = re.sub(r" \[INVALID_ARGUMENT\]$", "", text)
        found = CelSelector(expression, f"compilation failed: {text}", None, domains)
    else:
        kind = program.return_type().name().lower()
        if kind not in ("bool", "dyn"):
            found = CelSelector(expression, f"must evaluate to bool or the unknown type, not "
                                            f"{kind}", None, domains)
        else:
            found = CelSelector(expression, None, program, domains)
    _COMPILED[expression] = found
    return found
