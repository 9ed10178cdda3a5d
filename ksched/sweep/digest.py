"""Content hashes that stay the same across processes and runs: the key a sweep resumes by.

Python's ``hash`` of strings changes from one process to the next, and so does the order of a
set's items; pickles change with them. :func:`digest` walks the value instead: attrs records
field by field (caches, the fields compared with ``eq=False``, left out), mappings in order,
sets sorted, numpy arrays by dtype, shape and bytes. Sub-values met twice (the containers
copies of a pod share) are hashed once.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from typing import Any

import attrs
import numpy as np

from ksched.state import ClusterState

__all__ = ["digest", "params_key"]


def digest(value: Any) -> str:
    """The SHA-256 of ``value``'s content, as hex.

    Examples
    --------
    >>> digest({"a": frozenset({"x", "y"})}) == digest({"a": frozenset({"y", "x"})})
    True
    """
    return _Hasher().of(value).hex()


def params_key(base: str, study: str, params: Mapping[str, Any]) -> str:
    """The resume key of one scenario: the base's digest, the study and the parameters."""
    text = json.dumps({"base": base, "study": study, "params": params}, sort_keys=True,
                      default=repr, allow_nan=True)
    return hashlib.sha256(text.encode()).hexdigest()


class _Hasher:
    """One walk; ``memo`` maps ``id`` of containers and records met to the value and its
    digest (the value held, so that no ``id`` is reused during the walk)."""

    def __init__(self) -> None:
        self.memo: dict[int, tuple[Any, bytes]] = {}

    def of(self, value: Any) -> bytes:
        if value is None or isinstance(value, bool | int | str | bytes):
            return _leaf(type(value).__name__, repr(value))
        if isinstance(value, float):
            return _leaf("float", "nan" if math.isnan(value) else repr(value))
        found = self.memo.get(id(value))
        if found is None:
            found = self.memo[id(value)] = (value, self._compound(value))
        return found[1]

    def _compound(self, value: Any) -> bytes:
        if isinstance(value, np.ndarray):
            array = np.ascontiguousarray(value)
            return _leaf(f"array:{array.dtype.str}:{array.shape}",
                         hashlib.sha256(array.view(np.uint8).reshape(-1)).hexdigest())
        if isinstance(value, np.generic):
            return self.of(value.item())
        if isinstance(value, ClusterState):  # its records: the columns follow from them
            return self._join("cluster", [self.of(getattr(value, name)) for name in
                                          ("nodes", "pods", "namespaces", "objects")])
        if attrs.has(type(value)):
            fields = [f.name for f in attrs.fields(type(value)) if f.eq]
            return self._join(f"record:{type(value).__qualname__}",
                              [self.of(name) + self.of(getattr(value, name)) for name in fields])
        if isinstance(value, Mapping):
            return self._join("map", [self.of(k) + self.of(v) for k, v in value.items()])
        if isinstance(value, set | frozenset):
            return self._join("set", sorted(self.of(v) for v in value))
        if hasattr(value, "__len__") and hasattr(value, "__getitem__"):
            return self._join(f"seq:{type(value).__name__}", [self.of(v) for v in value])
        if hasattr(value, "__fspath__"):
            return _leaf("path", str(value))
        return _leaf(f"object:{type(value).__qualname__}", repr(value))

    @staticmethod
    def _join(tag: str, parts: list[bytes]) -> bytes:
        h = hashlib.sha256(tag.encode())
        for part in parts:
            h.update(part)
        return h.digest()


def _leaf(tag: str, text: str) -> bytes:
    return hashlib.sha256(f"{tag}\0{text}".encode()).digest()
