"""Python data (a dict built in Python) checked as the JSON data it stands for, with the bounds
the YAML and JSON readers apply: string keys, JSON values only, bounded nesting, bounded
sharing and no cycles.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np

from ksched.yamlio.decode import AliasBudget
from ksched.yamlio.files import MAX_DEPTH, LoadError

__all__ = ["plain_data"]


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
    alias expansion against the :class:`AliasBudget`."""

    def __init__(self) -> None:
        self.budget = AliasBudget("value contains excessive aliasing (shared lists or mappings "
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
