"""Failures the fused loop words itself (:func:`ksched.kernels.failure_tally.tally_failure`).

A pod of a class that fits on no node fails inside the loop: for a class whose nodes can only
fail a node-static filter or NodeResourcesFit (:func:`worded`), the loop tallies each node's
first failing filter, in filter order, from the class's node-static verdicts
(:class:`StaticStatuses`, judged once when the class is compiled) and NodeResourcesFit's fit
code on the node, into a record (:class:`Tallies`); :class:`FailureWording` turns a record
into the FitError message the framework's cycle gives (``0/N nodes are available: ...``). The
loop goes on after it, and a later pod of the class that meets the same state (nothing placed
since) takes the same record without a walk.
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from ksched.framework.diagnosis import counted_failure_message
from ksched.framework.interfaces import Cycle
from ksched.state import ClusterState
from ksched.status import Status

__all__ = ["StaticStatuses", "Tallies", "FailureWording", "worded"]


@attrs.frozen(eq=False)
class StaticStatuses:
    """A class's node-static filter verdicts as its failures are worded: per node the id of
    its first failing node-static filter's status (``sid`` int32[N], -1: it passes them
    all), the statuses (naming their plugins), and per status whether its filter runs after
    NodeResourcesFit (``late`` bool[S]: NodeResourcesFit's failure then comes first)."""

    sid: np.ndarray
    statuses: tuple[Status, ...]
    late: np.ndarray

    @staticmethod
    def builder(n: int) -> _Builder:
        """A builder over ``n`` judged nodes, told each filter's result in filter order."""
        return _Builder(n)


class _Builder:
    """:class:`StaticStatuses` made filter by filter (``None`` when a plugin gives a plain
    mask: such failures are not worded by the loop)."""

    def __init__(self, n: int) -> None:
        self.sid = np.full(n, -1, dtype=np.int32)
        self.statuses: list[Status] | None = []
        self.late: list[bool] = []

    def add(self, name: str, result: Any, late: bool) -> None:
        """Filter ``name``'s result (a FilterResult, or a plain mask); ``late``: it runs
        after NodeResourcesFit."""
        if isinstance(result, np.ndarray) or self.statuses is None:
            self.statuses = None
            return
        newly = (self.sid < 0) & ~result.passed
        self.sid[newly] = len(self.statuses) + result.status_ids[newly]
        self.statuses += [s.with_plugin(name) for s in result.statuses]
        self.late += [late] * len(result.statuses)

    def made(self, spread: Any) -> StaticStatuses | None:
        """The verdicts, spread from the judged nodes to every node by ``spread``."""
        if self.statuses is None:
            return None
        return StaticStatuses(self.sid[spread], tuple(self.statuses),
                              np.array(self.late, dtype=np.bool_))


def worded(tables: Any, c: int, wording: StaticStatuses, num_nodes: int) -> bool:
    """Whether the loop words class ``c``'s failures itself: a node can fail only by a
    node-static filter (as ``wording`` says) or by NodeResourcesFit, the way the framework's
    compiled walk judges it: no node subset, no host port it could conflict on, no volumes
    counted, no hard spread constraint, no pod (anti-)affinity term of its own or of other
    pods that could match it, and the loop's static verdicts (``tables``: the
    :class:`~ksched.class_tables.ClassTables`) those of ``wording``."""
    t = tables
    return num_nodes > 0 and not t.has_subset[c] and not len(t.port_check[c]) \
        and t.attach[c] is None and not t.spread[c] and not t.ipa_affinity[c] \
        and not t.ipa_anti[c] and not t.ipa_existing[c] \
        and np.array_equal(t.static_ok[c], wording.sid < 0)


class Tallies:
    """The failures one run of the loop words itself: ``out_fail`` int64[n_pods] each failed
    pod's record (-1: none), and the records: their class, and CSR ``rec_indptr`` over the
    (``rec_keys``, ``rec_counts``) entries; ``used``: records and entries filled.
    :meth:`clear` empties the records for the next run over the same pods (when they are
    full, the loop stops at the next new failure and leaves its wording to the caller)."""

    __slots__ = ("out_fail", "rec_class", "rec_indptr", "rec_keys", "rec_counts", "used")

    def __init__(self, pods: int, records: int = 4096, entries: int = 1 << 16) -> None:
        self.out_fail = np.full(pods, -1, dtype=np.int64)
        self.rec_class = np.zeros(records, dtype=np.int64)
        self.rec_indptr = np.zeros(records + 1, dtype=np.int64)
        self.rec_keys = np.zeros(entries, dtype=np.int64)
        self.rec_counts = np.zeros(entries, dtype=np.int64)
        self.used = np.zeros(2, dtype=np.int64)

    def entries(self, f: int) -> tuple[np.ndarray, np.ndarray]:
        """Record ``f``'s keys and counts."""
        a, b = self.rec_indptr[f], self.rec_indptr[f + 1]
        return self.rec_keys[a:b], self.rec_counts[a:b]

    def clear(self) -> None:
        self.used[:] = 0


class FailureWording:
    """The FitError messages of the loop's tallies for one framework and state layout: a
    record's keys are a node-static status id of its class (``tables.wording[c]``) or minus
    a fit code of NodeResourcesFit (``fit``, named ``fit_name``), worded for the class's
    pod (``tables.pods[c]``). Messages are kept per tally, statuses per class and code."""

    def __init__(self, tables: Any, layout: ClusterState, fit: Any, fit_name: str) -> None:
        self.tables, self.layout, self.fit, self.fit_name = tables, layout, fit, fit_name
        self._messages: dict[tuple, str] = {}
        self._fit_statuses: dict[tuple[int, int], Status] = {}
        self._cycles: dict[int, Cycle] = {}
        #: Per fit status (by identity, with it), the same status naming the plugin.
        self._named: dict[int, tuple[Status, Status]] = {}

    def message(self, c: int, keys: np.ndarray, counts: np.ndarray) -> str:
        """The message of class ``c``'s tally (``counts``: the nodes with each key)."""
        key = (c, keys.tobytes(), counts.tobytes())
        found = self._messages.get(key)
        if found is None:
            statuses = self.tables.wording[c].statuses
            tally = [(statuses[k] if k >= 0 else self._fit_status(c, -k), n)
                     for k, n in zip(keys.tolist(), counts.tolist())]
            found = counted_failure_message(self.layout.num_nodes, tally, None)
            if len(self._messages) >= 4096:
                self._messages.clear()
            self._messages[key] = found
        return found

    def _fit_status(self, c: int, code: int) -> Status:
        """NodeResourcesFit's status for fit code ``code`` of class ``c``'s pod."""
        found = self._fit_statuses.get((c, code))
        if found is None:
            cycle = self._cycles.get(c)
            if cycle is None:
                cycle = self._cycles[c] = Cycle(self.layout, self.tables.pods[c])
            status = self.fit.status_of_code(cycle, code)  # (one object per wording)
            named = self._named.get(id(status))
            if named is None or named[0] is not status:
                named = self._named[id(status)] = status, status.with_plugin(self.fit_name)
            found = self._fit_statuses[(c, code)] = named[1]
        return found
