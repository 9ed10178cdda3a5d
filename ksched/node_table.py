"""Fleets of nodes described by templates and counts, with no Python object per node.

Capacity planners model a fleet as "3,000 of these, 500 of those". :class:`GeneratedNames` names
the nodes ``<template>-<i>`` without storing the strings, :class:`NameIndex` finds a node's row
from its name, and :class:`NodeTable` gives a node's :class:`~ksched.api.Node` record only when
someone asks for it.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Mapping, Sequence

import attrs
import numpy as np

from ksched.api import Node
from ksched.constants import LABEL_HOSTNAME


class LazySequence(Sequence):
    """A read-only sequence whose items are made on demand by ``_item(i)`` (``0 <= i < len``);
    this class does the slicing, negative indices and range checks."""

    __slots__ = ()

    def _item(self, index: int):  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    def __getitem__(self, index):  # type: ignore[override]
        length = len(self)
        if isinstance(index, slice):
            return [self._item(i) for i in range(*index.indices(length))]
        index = int(index)
        if index < 0:
            index += length
        if not 0 <= index < length:
            raise IndexError(f"{type(self).__name__} index out of range")
        return self._item(index)


class EqualSequence(LazySequence):
    """A :class:`LazySequence` equal to any sequence holding equal items in the same order
    (unhashable, as a list)."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


class GeneratedNames(LazySequence):
    """Names ``f"{prefix}{k}"``, ``k`` in ``range(count)``, for each ``(prefix, count)`` block."""

    __slots__ = ("_prefixes", "_starts", "_length")

    def __init__(self, blocks: Sequence[tuple[str, int]]) -> None:
        self._prefixes = [prefix for prefix, _ in blocks]
        self._starts = [0]
        for _, count in blocks:
            self._starts.append(self._starts[-1] + count)
        self._length = self._starts[-1]

    def __len__(self) -> int:
        return self._length

    def _item(self, index: int) -> str:
        block = bisect.bisect_right(self._starts, index) - 1
        return f"{self._prefixes[block]}{index - self._starts[block]}"

    def row_of(self, name: str) -> int | None:
        """The position of ``name``, or ``None``."""
        for block, prefix in enumerate(self._prefixes):
            if not name.startswith(prefix):
                continue
            suffix = name[len(prefix):]
            if suffix.isdigit() and (suffix == "0" or suffix[0] != "0"):
                k = int(suffix)
                if k < self._starts[block + 1] - self._starts[block]:
                    return self._starts[block] + k
        return None


class NameIndex(Mapping[str, int]):
    """Node name -> row, for generated names."""

    __slots__ = ("_names",)

    def __init__(self, names: GeneratedNames) -> None:
        self._names = names

    def __getitem__(self, name: str) -> int:
        row = self._names.row_of(name) if isinstance(name, str) else None
        if row is None:
            raise KeyError(name)
        return row

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


class NodeTable(LazySequence):
    """Node records made on demand from templates: row ``i`` is a copy of template
    ``template_of[i]`` named ``names[i]`` (its hostname label, if any, set to that name)."""

    __slots__ = ("_templates", "_template_of", "_names")

    def __init__(self, templates: Sequence[Node], template_of: np.ndarray,
                 names: Sequence[str]) -> None:
        self._templates = tuple(templates)
        self._template_of = template_of
        self._names = names

    def __len__(self) -> int:
        return len(self._names)

    def _item(self, index: int) -> Node:
        template = self._templates[int(self._template_of[index])]
        name = self._names[index]
        labels = template.labels
        if LABEL_HOSTNAME in labels:
            labels = {**labels, LABEL_HOSTNAME: name}
        return attrs.evolve(template, name=name, labels=labels)


def gather_csr(indptr: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows ``rows`` of a CSR structure: (new indptr, positions of the entries to take)."""
    lengths = (indptr[1:] - indptr[:-1])[rows]
    new_indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lengths, out=new_indptr[1:])
    starts = np.repeat(indptr[:-1][rows] - new_indptr[:-1], lengths)
    return new_indptr, starts + np.arange(new_indptr[-1], dtype=np.int64)
