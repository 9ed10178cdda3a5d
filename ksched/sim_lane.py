"""Stretches of a simulation that need nothing of the queue, run by the compiled loop at once.

While no pod is pending, in flight, waiting at Permit or nominated, kube-scheduler's loop does
the same for each pod created: activeQ takes it, pops it at once, and its cycle places it and
binds it; later the pod finishes and leaves its node. Where the compiled loop's placement is
the pod's whole cycle (:meth:`Driver.plain_class <ksched.driver.Driver.plain_class>`: one
profile, no Permit, nothing reserved, no pods counted), a stretch of such arrivals and finishes
goes through the loop as one run of pods and removals (``schedule_loop``'s ``remove_node``), up
to the first sample due, ``until``, or anything else on the timeline. The decisions, the
utilisation, the cache's pods in their per-node order, the finish events of the pods still
running and the queue's counters are then what the loop one pod at a time leaves. Events at
one virtual time end a stretch (the queue's order among them is the Simulator's), and a pod
that fits nowhere ends it before that pod: its walk is undone and the Simulator schedules it
as usual.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from ksched.decisions import BOUND, FINISHED, Decision
from ksched.driver import loop_skips_binding
from ksched.framework.tiebreak import RANDOM
from ksched.timeline import Event

__all__ = ["ArrivalRuns", "MAX_STRETCH"]

#: The most timeline steps one run of the loop takes.
MAX_STRETCH = 4096


class _Step(NamedTuple):
    """One step of a stretch: a pod of class ``c`` created (``pod``, running ``duration``) or
    leaving (``pod`` None) node row ``where`` (< 0: the node step ``-1 - where`` placed it on),
    and the timeline entry it came from (``None``: a finish of a pod the stretch placed)."""

    time: float
    key: str
    c: int
    pod: Any
    duration: float | None
    where: int
    entry: tuple | None


def _shared(t: float, heap: list) -> bool:
    """Whether a heap whose root is at time ``t`` holds another entry at ``t`` (the next
    smallest is a child of the root)."""
    return any(heap[k][0] == t for k in (1, 2) if k < len(heap))


class ArrivalRuns:
    """The :class:`~ksched.simulator.Simulator`'s stretches of arrivals and finishes (a mixin:
    it reads and writes the Simulator's own state)."""

    def _arrival_loop(self) -> Any:
        """The compiled loop of the only profile when a stretch may start now, else ``None``."""
        if not self.batched or not self.use_fast_path or self.on_cycle is not None \
                or self.cycle_seconds or self.pdbs or len(self.frameworks) != 1 \
                or self.tie_breaker.code == RANDOM or len(self.waiting_pods):
            return None
        queue = self.queue
        if any(queue.lengths().values()) or queue.in_flight_pods() or queue.nominated_pods():
            return None
        framework = next(iter(self.frameworks.values()))
        fast = self.driver.fast_path(framework)
        return fast if fast is not None and loop_skips_binding(framework) else None

    def _run_arrivals(self, until: float | None, progress: Callable[[int], None] | None) -> bool:
        """Run the stretch that starts now, if any; returns whether one ran."""
        fast = self._arrival_loop()
        if fast is None:
            return False
        steps, taken = self._stretch(fast, until)
        done, nodes = self._place_stretch(fast, steps) if steps else (0, None)
        for entry in taken[sum(s.entry is not None for s in steps[:done]):]:
            heapq.heappush(self._timeline, entry)  # back, as they were
        if not done:
            return False
        self._commit_stretch(steps[:done], nodes)
        if progress is not None:
            progress(sum(s.pod is not None for s in steps[:done]))
        return True

    # ------------------------------------------------------------------ the stretch

    def _stretch(self, fast: Any, until: float | None) -> tuple[list[_Step], list[tuple]]:
        """The steps of the stretch that starts now, and the timeline entries taken for them
        (in order)."""
        timeline, steps, taken = self._timeline, [], []
        finishes: list[tuple[float, int, str]] = []  # of the pods placed here
        placed: dict[str, int] = {}
        last, due = self.now, self._next_sample
        while len(steps) < MAX_STRETCH:
            entry = timeline[0] if timeline else None
            mine = finishes[0] if finishes else None
            if mine is not None and (entry is None or mine[0] < entry[0]):
                t, key = mine[0], mine[2]
                if t <= last or (until is not None and t > until) or _shared(t, finishes):
                    break
                heapq.heappop(finishes)
                j = placed[key]
                step = _Step(t, key, steps[j].c, None, None, -1 - j, None)
            else:
                if entry is None:
                    break
                t = entry[0]
                if t <= last or (until is not None and t > until) \
                        or (mine is not None and mine[0] == t) or _shared(t, timeline):
                    break
                step = self._timeline_step(fast, entry, placed)
                if step is None:
                    break
                taken.append(heapq.heappop(timeline))
                if step.pod is not None:
                    placed[step.key] = len(steps)
                    if step.duration is not None:
                        heapq.heappush(finishes, (t + step.duration, len(steps), step.key))
            steps.append(step)
            last = t
            if t >= due:
                break
        return steps, taken

    def _timeline_step(self, fast: Any, entry: tuple, placed: dict[str, int]) -> _Step | None:
        """The step a timeline entry is, when the stretch can take it, else ``None``."""
        t, _, event = entry
        if event.kind == "create":
            pod = self._admit(event.pod)
            key = pod.key
            if key in self._pods or key in placed or pod.claim_sources \
                    or getattr(pod, "scheduling_gates", ()) \
                    or self.frameworks.get(pod.scheduler_name) is not fast.framework:
                return None
            c = self.driver.plain_class(fast, pod)
            return None if c is None else _Step(t, key, c, pod, event.duration, 0, entry)
        if event.kind != "finish" or self._finish_at.get(event.name) != t:
            return None
        key = event.name
        row = self.assumer.row_of(key)
        c = self.driver.known_class(key)
        if row is None or c is None or not self.driver.plain(fast, c):
            return None
        return _Step(t, key, c, None, None, self.assumer.node_row(row), entry)

    def _place_stretch(self, fast: Any, steps: list[_Step]) -> tuple[int, np.ndarray]:
        """Run the loop over ``steps``; returns how many of them stand (a pod that fits
        nowhere and the steps after it are undone: the Simulator takes them) and each step's
        node row."""
        n = len(steps)
        classes = np.array([s.c if s.pod is not None else -1 - s.c for s in steps],
                           dtype=np.int64)
        removals = np.array([s.where for s in steps], dtype=np.int64)
        out_node = np.full(n, -1, dtype=np.int64)
        out_start = np.zeros(n, dtype=np.int64)
        out_walk = np.zeros((n, 4), dtype=np.int64)
        fast.fail_epoch[:] = -1  # (a cache: no class's last failure stands for this run)
        self.tie_breaker.reserve(int((classes >= 0).sum()))
        stop = self.driver.run_loop(fast, classes, 0, out_node, out_start, out_walk, None,
                                    removals)
        if stop == n and (out_node >= 0).all():
            return n, out_node
        failed = int(np.flatnonzero(out_node[:stop] < 0)[0])
        counters = self.driver.counters  # as the walk of the pod that failed left them
        counters.next_start_index = int(out_start[failed])
        counters.nodes_evaluated -= int(out_walk[failed, 0])
        return failed, out_node

    def _commit_stretch(self, steps: list[_Step], nodes: np.ndarray) -> None:
        """The Simulator's records of the steps the loop ran (``nodes``: each one's node row;
        see the module)."""
        names = self._node_names()
        gone = {s.key for s in steps if s.pod is None}
        width = len(self._usage.names)
        changes = np.zeros((len(steps), width), dtype=np.int64)
        entries = []
        for j, step in enumerate(steps):
            node = int(nodes[j])
            key, t = step.key, step.time
            footprint = self._class_footprint(step.c, key, step.pod)
            if step.pod is None:
                self.decisions.append(Decision(t, key, FINISHED, node=names[node]))
                self._finish_at.pop(key, None)
                self._pods.pop(key, None)
                self.driver.forget_class(key)
                entries.append((key, node, None))
                changes[j] = -footprint
                continue
            self._created.setdefault(key, t)
            if step.duration is not None:
                self._durations[key] = float(step.duration)
            elif key in self._durations:
                del self._durations[key]
            self.decisions.append(Decision(t, key, BOUND, node=names[node], attempt=1))
            pod = step.pod
            if key not in gone:
                pod = self._pods[key] = pod.with_status(self.start_time + t, "")
                if step.duration is not None:
                    self._finish_at[key] = t + self._durations[key]
                    self.push(Event(self._finish_at[key], "finish", name=key))
            entries.append((key, node, pod))
            changes[j] = footprint
        self.assumer.replay(entries)
        times = [s.time for s in steps]
        self._usage.replay(times, changes)
        self.queue.passed_through(times[-1], sum(s.pod is not None for s in steps))
        self.now = times[-1]

    def _node_names(self) -> list[str]:
        """The nodes' names as a list (made once per node list: they may be made on demand)."""
        names = self.assumer.state.node_names
        if self._names[0] is not names:
            self._names = (names, list(names))
        return self._names[1]

    def _class_footprint(self, c: int, key: str, pod: Any) -> np.ndarray:
        """What a pod of class ``c`` adds to ``requested`` (kept per class)."""
        found = self._footprints.get(c)
        if found is None:
            if pod is None:
                pod = self.assumer.logged(self.assumer.row_of(key))
            found = self._footprints[c] = self.assumer.footprint(pod)[0]
        return found
