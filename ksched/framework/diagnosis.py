"""What a failed scheduling cycle says: the per-node statuses and the FitError message.

Mirrors ``pkg/scheduler/framework/types.go`` (``NodeToStatus``, ``Diagnosis``,
``FitError.Error``; the wording itself is :func:`ksched.status.counted_fit_error_message`)
and ``RunPreFilterPlugins``' message when the PreFilter node subsets leave no node
(``framework/runtime/framework.go``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import attrs
import numpy as np
import numpy.typing as npt

from ksched.errors import KschedError
from ksched.status import Status, counted_fit_error_message, fit_error_message, unresolvable


class SchedulingError(KschedError):
    """A plugin returned an Error status (the scheduling attempt fails, as upstream)."""


@attrs.frozen(eq=False)
class StaticVerdicts:
    """The node-static filters of one pod class on every node: the position (in the filter
    list) of the first that fails (-1: none) and its status, an index into ``table``."""

    signature: tuple
    layout: tuple
    first: npt.NDArray[np.int64]
    ids: npt.NDArray[np.int64]
    table: tuple[Status, ...]


class NodeStatuses(Mapping[int, Status]):
    """Node row -> failure status (``NodeToStatus``), held as arrays: the nodes in order, and
    for each an index into ``table``, the statuses they share. Reading it as a mapping is
    node by node; :meth:`counts` and :meth:`codes` are not."""

    __slots__ = ("nodes", "ids", "table", "_counts", "_lookups", "_where")

    def __init__(self, nodes: Any, ids: Any, table: Sequence[Status]) -> None:
        self.nodes = np.asarray(nodes, dtype=np.int64)
        self.ids = np.asarray(ids, dtype=np.int64)
        self.table = tuple(table)
        self._counts: list[tuple[Status, int]] | None = None
        self._lookups, self._where = 0, None

    def __len__(self) -> int:
        return len(self.nodes)

    def __iter__(self) -> Iterator[int]:
        return iter(self.nodes.tolist())

    def _position(self, node: object) -> int | None:
        """Where ``node`` stands (a scan for the first few lookups, then a dict)."""
        if self._where is None:
            self._lookups += 1
            if self._lookups <= 4:
                found = np.flatnonzero(self.nodes == node)
                return int(found[0]) if len(found) else None
            self._where = {n: i for i, n in reversed(list(enumerate(self.nodes.tolist())))}
        return self._where.get(node)

    def __getitem__(self, node: int) -> Status:
        at = self._position(node)
        if at is None:
            raise KeyError(node)
        return self.table[self.ids[at]]

    def __contains__(self, node: object) -> bool:
        return self._position(node) is not None

    def __repr__(self) -> str:
        return f"NodeStatuses({dict(self.items())!r})"

    def values(self) -> list[Status]:  # type: ignore[override]
        return [self.table[i] for i in self.ids.tolist()]

    def items(self) -> list[tuple[int, Status]]:  # type: ignore[override]
        return list(zip(self.nodes.tolist(), self.values()))

    def with_first(self, node: int, status: Status) -> NodeStatuses:
        """A copy with ``node`` put first, failing with ``status``."""
        return NodeStatuses(np.concatenate([[node], self.nodes]),
                            np.concatenate([[len(self.table)], self.ids]),
                            self.table + (status,))

    def counts(self) -> list[tuple[Status, int]]:
        """Each status of the table with the number of nodes that have it."""
        if self._counts is None:
            numbers = np.bincount(self.ids, minlength=len(self.table)).tolist()
            self._counts = list(zip(self.table, numbers))
        return self._counts

    def distinct(self) -> list[Status]:
        """The statuses some node has."""
        return [s for s, count in self.counts() if count]

    def codes(self, num_nodes: int, absent: Status) -> npt.NDArray[np.int64]:
        """Every node row's status code (``absent``'s where the node has no entry)."""
        out = np.full(num_nodes, int(absent.code), dtype=np.int64)
        if len(self.nodes):
            table = np.array([int(s.code) for s in self.table], dtype=np.int64)
            out[self.nodes] = table[self.ids]
        return out

    @classmethod
    def of(cls, statuses: Mapping[int, Status]) -> NodeStatuses:
        if isinstance(statuses, NodeStatuses):
            return statuses
        return cls(list(statuses), np.arange(len(statuses)), list(statuses.values()))


def failure_message(num_all: int, failures: Mapping[int, Status], absent: Status | None) -> str:
    """:func:`~ksched.status.fit_error_message` over ``failures``, counting each distinct
    status once."""
    if not isinstance(failures, NodeStatuses):
        return fit_error_message(num_all, failures.values(), absent=absent)
    return counted_failure_message(num_all, failures.counts(), absent)


def counted_failure_message(num_all: int, counts: Iterable[tuple[Status, int]],
                            absent: Status | None) -> str:
    """The FitError message from the distinct statuses and how many nodes have each."""
    return counted_fit_error_message(num_all, counts, absent)


def unsatisfied_subsets(plugins: Sequence[str]) -> Status:
    """``RunPreFilterPlugins``' status when the merged node subsets leave no node: the
    plugins sorted (``sets.List``), and no plugin set on the status."""
    if len(plugins) == 1:
        return unresolvable(f"node(s) didn't satisfy plugin {plugins[0]}")
    return unresolvable(
        f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(plugins))}] simultaneously")
