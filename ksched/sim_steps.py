"""The steps of the Simulator's stretches (:mod:`ksched.sim_lane`): what each is, the parked pods
they retry, and what the Simulator reads of them as columns (when it samples, the flushes
between them)."""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from ksched.decisions import FINISHED

__all__ = ["Columns", "Parked", "Retry", "Step", "left_at", "sampled_after", "shared_at",
           "step_columns", "with_flushes"]


class Step(NamedTuple):
    """One step of a stretch: a pod of class ``c`` created (``pod``, running ``duration``) or
    leaving (``pod`` None) node row ``where`` (< 0: the node step ``-1 - where`` placed it on),
    and the heap and entry it came from (``None``: a finish of a pod the stretch placed); a
    pod leaving is recorded as ``left`` (finished, or deleted by the timeline)."""

    time: float
    key: str
    c: int
    pod: Any
    duration: float | None
    where: int
    entry: tuple | None
    left: str = FINISHED


class Retry(NamedTuple):
    """Parked pods ``keys`` moved at ``time`` (by the finish that is the step before, or by
    a leftover flush), popped and failing again, after the first ``position`` steps."""

    position: int
    time: float
    keys: tuple[str, ...]


class Parked(dict):
    """The parked pods a stretch carries (:meth:`ArrivalRuns._hopeless_parked
    <ksched.sim_lane.ArrivalRuns._hopeless_parked>`), by key: their class and next leftover
    flush; ``tick``: the soonest of those flushes."""

    tick = math.inf

    def parked_again(self, keys: tuple[str, ...], tick: float) -> None:
        """Pods ``keys`` parked again, their next flush at ``tick``."""
        for key in keys:
            self[key][1] = tick
        self.tick = tick if len(keys) == len(self) else min(at for _, at in self.values())


def with_flushes(columns: Columns, sampled: np.ndarray, retries: Sequence[Retry]
                 ) -> tuple[Columns, np.ndarray]:
    """The steps' ``columns`` and whether a sample may follow each (``sampled``), with a
    moment of no event (class -1) at each leftover flush among ``retries``: a time of its
    own, between two steps', where the Simulator's clock stops and samples (a retry at a
    step's time is one of that time's pods leaving moved)."""
    times, n = columns.times, len(columns.times)
    if not retries:
        return columns, sampled
    position = np.fromiter((r.position for r in retries), dtype=np.int64, count=len(retries))
    at = np.fromiter((r.time for r in retries), dtype=np.float64, count=len(retries))
    flush = np.ones(len(retries), dtype=np.bool_)
    if n:  # not at the time of the step before it, nor of the step after it
        flush &= ~((position > 0) & (times[np.maximum(position - 1, 0)] == at))
        flush &= ~((position < n) & (times[np.minimum(position, n - 1)] == at))
    if not flush.any():
        return columns, sampled
    where = position[flush]
    return Columns(np.insert(times, where, at[flush]), np.insert(columns.classes, where, -1),
                   np.insert(columns.where, where, 0),
                   np.insert(columns.arrived, where, False)), np.insert(sampled, where, True)


def shared_at(t: float, heap: list) -> bool:
    """Whether a heap whose root is at time ``t`` holds another entry at ``t`` (the next
    smallest is a child of the root)."""
    n = len(heap)
    return (n > 1 and heap[1][0] == t) or (n > 2 and heap[2][0] == t)


class Columns(NamedTuple):
    """Steps (and the flushes between them) as columns: their times (float64), classes
    (int64; -1: a flush) and node rows (int64), and whether each is a pod created (bool)."""

    times: np.ndarray
    classes: np.ndarray
    where: np.ndarray
    arrived: np.ndarray


def step_columns(steps: Sequence[Step]) -> Columns:
    """The steps as :class:`Columns`."""
    if not steps:
        return Columns(np.zeros(0, np.float64), np.zeros(0, np.int64), np.zeros(0, np.int64),
                       np.zeros(0, np.bool_))
    times, _, classes, pods, _, where, _, _ = zip(*steps)
    return Columns(np.array(times, dtype=np.float64), np.array(classes, dtype=np.int64),
                   np.array(where, dtype=np.int64),
                   np.fromiter(map(operator.is_not, pods, itertools.repeat(None)),
                               dtype=np.bool_, count=len(pods)))


def sampled_after(columns: Columns, cut: float | None) -> np.ndarray:
    """bool[K]: whether the Simulator samples after each step (their ``columns``): once the
    queue is empty again, after the events of a time and the pods created then (not the
    finishes of those that run 0 s: they come after), and not at ``cut`` (the queue has pods
    then)."""
    times, _, where, created = columns
    placed_at = np.where(where < 0, -1 - where, 0)  # the step that placed a pod leaving
    late = ~created & (where < 0) & (times[placed_at] == times)
    after = np.ones(len(times), dtype=np.bool_)  # the last step, and where the time moves on
    after[:-1] = (times[1:] != times[:-1]) | (late[1:] & ~late[:-1])
    return after & (times != cut) if cut is not None else after


def left_at(steps: list[Step], position: int, t: float) -> bool:
    """Whether a pod left at time ``t`` among the steps before ``position`` (the pods
    leaving come first in a time's steps)."""
    k = position - 1
    while k >= 0 and steps[k].time == t:
        if steps[k].pod is None:
            return True
        k -= 1
    return False
