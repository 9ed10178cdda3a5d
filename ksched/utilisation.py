"""Cluster utilisation over virtual time: the requested and allocatable totals per resource,
kept up to date as pods are placed and removed (no pass over the nodes per event), and their
integral over the simulator's clock.

The mean utilisation of a run is the time average ``integral(requested / allocatable) dt /
duration``, not the mean of samples taken at events (a burst of events at one instant would
count many times, a long quiet hour once). The peak is the highest utilisation the cluster
held for any stretch of virtual time (or at the end): within one instant only the value the
cluster settles at counts, not the order the events of that instant were applied in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import numpy as np
import numpy.typing as npt

from ksched.resources import is_extended_resource

__all__ = ["Usage", "UtilisationMeter"]


def _ratio(requested: np.ndarray, allocatable: np.ndarray) -> np.ndarray:
    out = np.zeros(len(requested), dtype=np.float64)
    np.divide(requested, allocatable, out=out, where=allocatable > 0)
    return out


@attrs.frozen
class Usage:
    """A run's utilisation per resource, by resource name.

    Attributes
    ----------
    duration : virtual seconds the run covered.
    mean : time-averaged requested / allocatable (a fraction; the final value when the run
        took no virtual time).
    peak : the highest requested / allocatable held.
    requested_mean : time-averaged requested amount, in scheduler units (millicores, bytes,
        counts).
    allocatable, requested : the totals at the end, in scheduler units.
    """

    duration: float
    mean: Mapping[str, float]
    peak: Mapping[str, float]
    requested_mean: Mapping[str, float]
    allocatable: Mapping[str, int]
    requested: Mapping[str, int]

    @property
    def extended(self) -> tuple[str, ...]:
        """The extended resources (GPUs and the like) some node has."""
        return tuple(r for r, v in self.allocatable.items()
                     if is_extended_resource(r) and v > 0)

    def free(self, resource: str) -> int:
        """Allocatable minus requested of ``resource`` at the end."""
        return self.allocatable[resource] - self.requested[resource]


class UtilisationMeter:
    """Running totals of ``requested`` and ``allocatable`` per resource and their time
    integral.

    Parameters
    ----------
    state : the cluster at virtual time 0 (its totals are summed once).

    Examples
    --------
    >>> from ksched import ClusterState, Node
    >>> meter = UtilisationMeter(ClusterState.from_records(
    ...     [Node("n", allocatable={"cpu": 4000, "pods": 10})]))
    >>> column = meter.names.index("cpu")
    >>> vector = np.zeros(len(meter.names), dtype=np.int64)
    >>> vector[column] = 2000
    >>> meter.add(vector); meter.advance(30.0); meter.remove(vector); meter.advance(60.0)
    >>> round(meter.usage().mean["cpu"], 3), meter.usage().peak["cpu"]
    (0.25, 0.5)
    """

    def __init__(self, state: Any) -> None:
        self.time = 0.0
        self.names: tuple[str, ...] = ()
        self._alloc: list[int] = []
        self._req: list[int] = []
        self._integral: dict[str, float] = {}
        self._amount: dict[str, float] = {}
        self._peak: dict[str, float] = {}
        self.reset(state)

    @property
    def allocatable(self) -> npt.NDArray[np.int64]:
        """int64[R]: the allocatable totals now."""
        return np.array(self._alloc, dtype=np.int64)

    @property
    def requested(self) -> npt.NDArray[np.int64]:
        """int64[R]: the requested totals now."""
        return np.array(self._req, dtype=np.int64)

    def reset(self, state: Any) -> None:
        """Take the totals of ``state`` afresh (after its nodes changed; int64[N, R] summed
        once), keeping the integrals so far by resource name."""
        self._fold()
        self.names = tuple(state.resource_names)
        self._alloc = np.asarray(state.allocatable, dtype=np.int64).sum(axis=0).tolist()
        self._req = np.asarray(state.requested, dtype=np.int64).sum(axis=0).tolist()
        self._vectors()
        self._ratio: list[float] | None = None

    def _vectors(self) -> None:
        """The integrals over the current columns (zeros for new resources): a few resources,
        kept as Python floats (float64 arithmetic as numpy's, without its per-call cost)."""
        names = self.names
        self._int = [self._integral.get(r, 0.0) for r in names]
        self._amt = [self._amount.get(r, 0.0) for r in names]
        self._top = [self._peak.get(r, 0.0) for r in names]

    def _fold(self) -> None:
        """The integrals back into the by-name dicts (before the columns change)."""
        for j, r in enumerate(self.names):
            self._integral[r], self._amount[r] = self._int[j], self._amt[j]
            self._peak[r] = self._top[j]

    def add(self, vector: npt.NDArray[np.int64]) -> None:
        """A pod's footprint (int64[R], the state's columns) placed."""
        self._req = [q + v for q, v in zip(self._req, vector.tolist())]
        self._ratio = None

    def remove(self, vector: npt.NDArray[np.int64]) -> None:
        """A pod's footprint (int64[R]) taken off its node."""
        self._req = [q - v for q, v in zip(self._req, vector.tolist())]
        self._ratio = None

    def advance(self, now: float) -> None:
        """The clock moves to ``now``: the totals held since the last move count for the
        time between (their ratios made again, and the peak raised, only after a change)."""
        elapsed = now - self.time
        if elapsed <= 0:
            return
        ratio = self._ratio
        if ratio is None:  # as numpy divides int64 by int64: both as float64
            ratio = self._ratio = [float(q) / float(a) if a > 0 else 0.0
                                   for q, a in zip(self._req, self._alloc)]
            self._top = [max(top, r) for top, r in zip(self._top, ratio)]
        self._int = [i + r * elapsed for i, r in zip(self._int, ratio)]
        self._amt = [m + q * elapsed for m, q in zip(self._amt, self._req)]  # q as float
        self.time = now

    def replay(self, times: Sequence[float], changes: np.ndarray) -> np.ndarray:
        """:meth:`advance` to each of ``times`` (ascending, after :attr:`time`), then the
        requested totals changed by that row of ``changes`` (int64[K, R]: a footprint added,
        or taken off negated), as those calls one by one would leave the meter, float for
        float (the running sums accumulate in the same order; totals held for no time raise
        no peak). Returns the requested totals after each step (int64[K, R])."""
        alloc = np.array(self._alloc, dtype=np.float64)
        requested = np.array(self._req, dtype=np.int64) + np.vstack(
            [np.zeros((1, len(self._alloc)), dtype=np.int64), np.cumsum(changes, axis=0)])
        held = requested[:-1]  # the totals each step's elapsed time is held at
        elapsed = np.diff(np.concatenate([[self.time], np.asarray(times, dtype=np.float64)]))
        ratio = np.zeros(held.shape, dtype=np.float64)
        np.divide(held.astype(np.float64), alloc, out=ratio, where=alloc > 0)
        held_for_time = ratio[elapsed > 0]
        if len(held_for_time):
            self._top = np.maximum(np.array(self._top), held_for_time.max(axis=0)).tolist()
        self._int = np.cumsum(np.vstack([self._int, ratio * elapsed[:, None]]),
                              axis=0)[-1].tolist()
        self._amt = np.cumsum(np.vstack([self._amt, held * elapsed[:, None]]),
                              axis=0)[-1].tolist()
        self._req = requested[-1].tolist()
        self._ratio = None
        self.time = float(times[-1])
        return requested[1:]

    def columns(self) -> tuple[tuple[str, ...], list[int], list[int]]:
        """The resources' names with their allocatable and requested totals now (shared:
        read, never written)."""
        return self.names, self._alloc, self._req

    def totals(self) -> dict[str, tuple[int, int]]:
        """Per resource, ``(allocatable, requested)`` now."""
        return {r: (a, q) for r, a, q in zip(self.names, self._alloc, self._req)}

    def usage(self) -> Usage:
        """The run so far: time averages, peaks (the value now included) and totals."""
        self._fold()
        now = _ratio(self.requested, self.allocatable)
        duration = self.time
        names: Sequence[str] = list(self._integral)
        final = dict(zip(self.names, now.tolist()))
        mean = {r: self._integral[r] / duration if duration > 0 else final.get(r, 0.0)
                for r in names}
        amount = dict(zip(self.names, self.requested.tolist()))
        requested_mean = {r: self._amount[r] / duration if duration > 0
                          else float(amount.get(r, 0)) for r in names}
        peak = {r: max(self._peak[r], final.get(r, 0.0)) for r in names}
        totals = self.totals()
        return Usage(duration, mean, peak, requested_mean,
                     {r: totals.get(r, (0, 0))[0] for r in names},
                     {r: totals.get(r, (0, 0))[1] for r in names})
