"""Stretches of a simulation that need nothing of the queue, run by the compiled loop at once.

While no pod is pending, in flight, waiting at Permit or nominated, kube-scheduler's loop does the
same for each pod created: activeQ takes it, pops it at once, and its cycle places it and binds it;
later the pod finishes and leaves its node. Where the compiled loop's placement is the pod's whole
cycle (:meth:`Driver.plain_class <ksched.driver.Driver.plain_class>`: one profile, no Permit, no
volume claims, no pods counted; devices only from claims the resourceclaim controller makes from
templates, counted by the loop), a stretch of such arrivals and finishes goes through the loop as
one run of pods and removals (``schedule_loop``'s ``remove_node``), up to ``until`` or anything
else on the timeline. The decisions, the samples, the utilisation, the cache's pods in their
per-node order, the claims and the queue's counters are then what the Simulator one event at a time
leaves; the finishes of the pods still running are held until due, then join the timeline as the
Simulator pushed them.

The events at one virtual time go in the Simulator's order: the finishes, then the pods
created, as the queue pops them (by priority), then the finishes of those that run 0 s. A pod
that fits nowhere ends the stretch before that pod: its walk is undone, and it and the pods
created with it that were not placed go to the queue, as the queue would hold them then.

Pods parked in unschedulablePods may wait meanwhile when each fits nowhere whatever pods come and
go (a pod larger than every node, or whose selector no node matches: a planner's "never fits").
Every finish moves them (AssignedPodDelete), as does a leftover flush after five quiet minutes;
each is popped (among the pods created then, as the queue orders them) and fails again, changing
nothing of the nodes: a stretch takes those retries with the time's events
(:meth:`ArrivalRuns._time`). After the loop ran, each retry's failure is judged on the nodes'
requests as the steps before it left them (the last one stands while no node its walk visits
changed), and the queue takes the retries in order with the records (all at once for one pod).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ksched.decisions import BOUND, DELETED, FINISHED, UNSCHEDULABLE
from ksched.dra.compiled import DeviceColumns
from ksched.dra.controller import claims_released, generate_claims
from ksched.driver import loop_skips_binding
from ksched.framework.tiebreak import RANDOM
from ksched.kernels.samples import sampled_moments
from ksched.queue.events import ASSIGNED_POD_DELETE
from ksched.queue.queued_pod_info import QueuedPodInfo, priority_sort_key
from ksched.queue.ticks import UNSCHEDULABLE_FLUSH_PERIOD, leftover_tick
from ksched.sim_steps import Parked, Retry, Step, left_at, sampled_after, shared_at, \
    step_columns, with_flushes
from ksched.timeline import Event

__all__ = ["ArrivalRuns", "MAX_STRETCH", "MIN_STRETCH"]

#: The most timeline steps one run of the loop takes, and the fewest it starts from: the limit
#: doubles after each stretch the loop ran whole and falls back after one a pod that fits
#: nowhere cut short (the steps after that pod are made again).
MAX_STRETCH, MIN_STRETCH = 65536, 256


class ArrivalRuns:
    """The :class:`~ksched.simulator.Simulator`'s stretches of arrivals and finishes (a mixin:
    it reads and writes the Simulator's own state)."""

    def _arrival_loop(self) -> Any:
        """The compiled loop of the only profile when a stretch may start now, else ``None``."""
        if not self.batched or len(self.waiting_pods) \
                or not self.use_fast_path or self.on_cycle is not None or self.cycle_seconds \
                or self.pdbs or len(self.frameworks) != 1 or self.tie_breaker.code == RANDOM:
            return None
        driver = self.driver
        if self._lane_loop[0] is not driver:
            framework = next(iter(self.frameworks.values()))
            fast = driver.fast_path(framework)
            self._lane_loop = (driver, fast if fast is not None
                               and loop_skips_binding(framework) else None)
        return self._lane_loop[1]

    def _hopeless_parked(self, fast: Any) -> Parked | None:
        """The pods the queue holds, all parked, by key with their class and the next
        leftover flush that moves them, when a stretch can carry them (see the module): each
        fails whatever pods come and go (:meth:`Driver.hopeless_class
        <ksched.driver.Driver.hopeless_class>`), no pod bound moves it (no plugin that
        rejected it registered for AssignedPodAdd) and, once moved, it is popped at once
        (``SchedulerPopFromBackoffQ``); else ``None``."""
        queue = self.queue
        parked = queue.parked()
        if not parked:
            return None if parked is None else Parked()
        if not queue.pop_from_backoff:
            return None
        out, moved_by_binds = Parked(), set(self._pod_add.plugins)
        for info in parked:
            pod = self._pods.get(info.key)
            c = None if pod is None or (info.unschedulable_plugins | info.pending_plugins) \
                & moved_by_binds else self.driver.hopeless_class(fast.framework, fast, pod)
            if c is None:
                return None
            out[info.key] = [c, self._flush_after(queue.now, info.timestamp)]
        out.tick = min(at for _, at in out.values())
        return out

    def _run_arrivals(self, until: float | None, progress: Callable[[int], None] | None) -> bool:
        """Run the stretch that starts now, if any; returns whether one ran."""
        fast = self._arrival_loop()
        parked = None if fast is None else self._hopeless_parked(fast)
        if parked is None:
            return False
        steps, retries = self._stretch(fast, until, self._stretch_limit, parked)
        if not steps:
            return False
        before = self.assumer.state.requested.copy() if retries else None
        done, nodes = self._place_stretch(fast, steps)
        self._stretch_limit = min(2 * self._stretch_limit, MAX_STRETCH) if done == len(steps) \
            else MIN_STRETCH
        # a time cut short by a pod that fits nowhere: its pods not placed are in the queue
        cut = steps[done].time if 0 < done < len(steps) \
            and steps[done - 1].time == steps[done].time else None
        for step in steps[done:]:
            if step.entry is not None and step.time != cut:
                heapq.heappush(*step.entry)  # back, as it was
        if not done:
            return False
        retries = [r for r in retries if r[0] <= done]
        failures = self._parked_failures(fast, steps, nodes, retries, parked, before)
        self._commit_stretch(steps[:done], nodes, cut, retries, failures)
        for step in sorted((s for s in steps[done:] if s.time == cut and s.pod is not None),
                           key=lambda s: s.entry[1][1]):
            self._create(step.entry[1][2].pod, step.duration)  # as the timeline had them
        if progress is not None:
            progress(sum(s.pod is not None for s in steps[:done])
                     + sum(len(keys) for _, _, keys in retries))
        return True

    # ------------------------------------------------------------------ the stretch

    def _stretch(self, fast: Any, until: float | None, limit: int, parked: Parked
                 ) -> tuple[list[Step], list[Retry]]:
        """The steps of the stretch that starts now (at most ``limit``, but whole times),
        taken off their heaps (each step knows its entry: put back when the step is undone),
        and the retries of the ``parked`` pods (:meth:`_hopeless_parked`) they make.
        The events at one virtual time go as the Simulator takes them: the finishes in the
        order they were pushed, then the pods created in the order the queue pops them
        (:meth:`_time`), then the finishes of those that run 0 s (pushed as they are bound,
        due when the queue is empty again). With pods parked, a time holds pods leaving
        (then the parked pods' retries: the queue pops them once all have left) or pods
        created, and a leftover flush that moves one comes between two times
        (:meth:`_flushes`)."""
        timeline, held, steps, retries = self._timeline, self._held_finishes, [], []
        local: list[tuple[float, int, str]] = []  # the finishes of the pods placed here
        placed: dict[str, int] = {}
        last, inf = -math.inf, math.inf  # (events due now: a run's first, or finishes pushed since)
        while len(steps) < limit:
            t0 = timeline[0][0] if timeline else inf
            t1 = held[0][0] if held else inf
            t2 = local[0][0] if local else inf
            t = min(t0, t1, t2)
            if t == inf or (until is not None and t > until):
                break
            if parked and t <= last:
                break
            # a leftover flush due at ``t`` moves parked pods before the time's events: a
            # time of pods leaving only then (those move them all), retried once after them
            flushing = bool(parked) and parked.tick <= t \
                and not self._flushes(parked, t, len(steps), retries)
            if t <= last:  # only the finishes of pods placed at ``last`` that run 0 s
                if t < last or t0 == t or t1 == t:
                    break
                while local and local[0][0] == t:
                    steps.append(self._heap_step(fast, local, heapq.heappop(local), steps,
                                                 local, placed))
                continue
            heap = timeline if t == t0 else held if t == t1 else local
            if (t0 == t) + (t1 == t) + (t2 == t) > 1 or shared_at(t, heap):
                if not self._time(fast, t, steps, local, placed, limit, parked, flushing,
                                  retries):
                    break
            elif heap is local:  # one event at ``t`` (the usual case): a pod placed here leaves
                _, j, key = heapq.heappop(local)
                steps.append(Step(t, key, steps[j].c, None, None, -1 - j, None))
                if parked:  # AssignedPodDelete moves every parked pod
                    self._retry(parked, tuple(parked), t, len(steps), retries)
            else:
                step = self._heap_step(fast, heap, heap[0], steps, local, placed)
                if step is None or (flushing and step.pod is not None):
                    break
                heapq.heappop(heap)
                self._take(step, steps, local, placed)
                if parked and step.pod is None:
                    self._retry(parked, tuple(parked), t, len(steps), retries)
            last = t
        return steps, retries

    def _flushes(self, parked: Parked, t: float, position: int,
                 retries: list[Retry]) -> bool:
        """The retries of the leftover flushes before ``t`` (after ``position`` steps), of
        the parked pods each moves; ``False`` where one falls at ``t`` (the queue's timers
        run before the time's events: the stretch takes that time only if pods leave then,
        as those move every parked pod, and ends before it if pods are created)."""
        while parked:
            tick = parked.tick
            if tick >= t:
                return tick > t
            self._retry(parked, tuple(k for k, (_, at) in parked.items() if at == tick), tick,
                        position, retries)
        return True

    def _flush_after(self, now: float, timestamp: float) -> float:
        """The first ``flushUnschedulablePodsLeftover`` tick after ``now`` that moves a pod
        parked at ``timestamp`` (unless something moves it before)."""
        return leftover_tick(now, timestamp, self.queue.max_in_unschedulable,
                             UNSCHEDULABLE_FLUSH_PERIOD)

    def _retry(self, parked: Parked, keys: tuple[str, ...], t: float, position: int,
               retries: list[Retry]) -> None:
        """Parked pods ``keys`` moved, popped and parked again at ``t``: their next flush."""
        retries.append(Retry(position, t, keys))
        parked.parked_again(keys, self._flush_after(t, t))

    def _time(self, fast: Any, t: float, steps: list[Step], local: list, placed: dict,
              limit: int, parked: Parked, flushing: bool, retries: list[Retry]
              ) -> bool:
        """Append to ``steps`` the events due at ``t``, more than one (see :meth:`_stretch`),
        and return ``True``; or leave them where they are and return ``False`` where the
        stretch cannot take one of them, or they would pass ``limit``. Pods created at one
        time are popped by priority (PrioritySort; a custom sort: one at a time), then as
        they came. Pods leaving (or a leftover flush due, ``flushing``) move the ``parked``
        pods: retried once after the pods leaving, popped among the pods created as the
        queue would (:meth:`_parked_pop`)."""
        due = [h for h in (self._timeline, self._held_finishes, local) if h and h[0][0] == t]
        finishes: list[tuple[tuple[int, int], Step]] = []
        creates: list[tuple[int, Step]] = []
        taken: list[tuple[list, tuple]] = []  # (heap, entry), to put back
        refused = False
        for heap in due:
            while not refused and heap and heap[0][0] == t:
                entry = heapq.heappop(heap)
                taken.append((heap, entry))
                step = self._heap_step(fast, heap, entry, steps, local, placed)
                if step is None or (steps and len(steps) + len(taken) > limit):
                    refused = True
                elif heap is local:  # placed here: their finishes pushed after all others
                    finishes.append(((1, len(taken)), step))
                elif step.pod is None:
                    finishes.append(((0, entry[1]), step))
                else:
                    creates.append((entry[1], step))
        creates.sort(key=lambda c: (priority_sort_key(QueuedPodInfo(pod=c[1].pod, timestamp=t)),
                                    c[0]))  # then as the queue took them
        moved = bool(parked) and (flushing or bool(finishes))
        at = self._parked_pop(parked, t, creates, flushing, retries) if moved and creates \
            else len(creates)
        if refused or at is None or (len(creates) > 1 and (
                not self._priority_sort or len({s.key for _, s in creates}) < len(creates))):
            for heap, entry in taken:
                heapq.heappush(heap, entry)
            return False
        finishes.sort(key=lambda f: f[0])
        for _, step in finishes:
            self._take(step, steps, local, placed)
        for k, (_, step) in enumerate(creates + [(None, None)]):
            if moved and k == at:
                self._retry(parked, tuple(parked), t, len(steps), retries)
            if step is not None:
                self._take(step, steps, local, placed)
        return True

    def _parked_pop(self, parked: Parked, t: float, creates: list[tuple[int, Step]],
                    flushing: bool, retries: list[Retry]) -> int | None:
        """How many of the pods created at ``t`` (``creates``, in pop order) the queue pops
        before the one parked pod, which pods leaving then moved: all of them where it went
        to backoffQ (popped once activeQ is empty), else those ranking above it
        (PrioritySort: its timestamp is its last failure's, before ``t``). ``None`` where
        the stretch cannot tell: several pods parked, another sort, or a leftover flush due
        at ``t`` (it would move the pod before those pods come)."""
        if len(parked) != 1 or not self._priority_sort or flushing:
            return None
        ((key, _),) = parked.items()
        info = next((i for i in self.queue.parked() or () if i.key == key), None)
        if info is None:
            return None
        # every retry of this stretch is its failure (the parked pods stay those of its start)
        timestamp, count = (retries[-1].time, info.unschedulable_count + len(retries)) \
            if retries else (info.timestamp, info.consecutive_errors_count
                             or info.unschedulable_count)
        if self.queue.backing_off(timestamp, count, t):
            return len(creates)
        rank = priority_sort_key(QueuedPodInfo(pod=info.pod, timestamp=timestamp))
        return sum(priority_sort_key(QueuedPodInfo(pod=step.pod, timestamp=t)) < rank
                   for _, step in creates)

    def _heap_step(self, fast: Any, heap: list, entry: tuple, steps: list[Step], local: list,
                   placed: dict) -> Step | None:
        """The step of an entry of the timeline, of the held finishes or of ``local`` (the
        finishes of the pods this stretch placed), when the stretch can take it."""
        if heap is local:
            _, j, key = entry
            return Step(entry[0], key, steps[j].c, None, None, -1 - j, None)
        if heap is not self._held_finishes:
            return self._timeline_step(fast, entry, steps, placed)
        t, _, key = entry
        found = self._lane_bound.get(key)
        if found is None or self._finish_at.get(key) != t:
            return None  # no longer the pod placed here: the Simulator's (see _run)
        return Step(t, key, found[1], None, None, found[0], (heap, entry))

    @staticmethod
    def _take(step: Step, steps: list[Step], local: list, placed: dict) -> None:
        """Append ``step``; a pod created is placed at that step, and finishes, if it
        runs for a time, then (``local``)."""
        if step.pod is not None:
            placed[step.key] = len(steps)
            if step.duration is not None:
                heapq.heappush(local, (step.time + step.duration, len(steps), step.key))
        steps.append(step)

    def _release_finishes(self, upto: float) -> None:
        """The finishes the stretches hold that are due by ``upto`` join the timeline, as
        the Simulator pushed them when the pods were bound (the same order among events)."""
        held = self._held_finishes
        while held and held[0][0] <= upto:
            t, seq, key = heapq.heappop(held)
            heapq.heappush(self._timeline, (t, seq, Event(t, "finish", name=key)))
            self._lane_bound.pop(key, None)

    def _timeline_step(self, fast: Any, entry: tuple, steps: list[Step],
                       placed: dict[str, int]) -> Step | None:
        """The step a timeline entry is, when the stretch can take it, else ``None``: a pod
        created, a bound pod's finish, or its deletion (one placed by the stretch: when it
        has no runtime to cancel)."""
        t, _, event = entry
        if event.kind == "create":
            pod = self._admit(event.pod)
            key = pod.key
            if key in self._pods or key in placed or pod.scheduling_gates \
                    or self.frameworks.get(pod.scheduler_name) is not fast.framework:
                return None
            c = self.driver.plain_class(fast, pod)
            return None if c is None else Step(t, key, c, pod, event.duration, 0,
                                               (self._timeline, entry))
        key = event.name
        if event.kind == "finish":
            if self._finish_at.get(key) != t:
                return None
        elif event.kind != "delete" or key in self._finish_at:
            return None  # (a pod bound with a runtime: its finish would be cancelled)
        elif key in placed:
            j = placed[key]
            return None if steps[j].duration is not None else Step(
                t, key, steps[j].c, None, None, -1 - j, (self._timeline, entry), DELETED)
        row = self.assumer.row_of(key)
        c = self.driver.known_class(key)
        if row is None or c is None or not self.driver.plain(fast, c):
            return None
        return Step(t, key, c, None, None, self.assumer.node_row(row), (self._timeline, entry),
                    FINISHED if event.kind == "finish" else DELETED)

    def _place_stretch(self, fast: Any, steps: list[Step]) -> tuple[int, np.ndarray]:
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

    def _parked_failures(self, fast: Any, steps: list[Step], nodes: np.ndarray,
                         retries: list[Retry], parked: Parked,
                         requested: np.ndarray | None) -> list[dict[str, Any]]:
        """Per retry, each pod's failure (:meth:`Driver.hopeless_failure
        <ksched.driver.Driver.hopeless_failure>`), judged on the nodes' requests then:
        ``requested`` (before the stretch; changed here) plus the steps before it, added up
        only when a failure is judged anew (the last one stands while none of the nodes its
        walk visits changed: counted per pod over the steps)."""
        out: list[dict[str, Any]] = []
        if not retries:
            return out
        index, framework, driver = self._nominations(), fast.framework, self.driver
        end = max(r.position for r in retries)
        rows = nodes[:end]
        _, classes, _, arrived = step_columns(steps[:end])
        signs = np.where(arrived, 1, -1)[:, None]
        changes = self._footprint_table(steps[:end], classes)[classes] * signs if end \
            else np.zeros((0, requested.shape[1]), dtype=np.int64)
        touched = {}  # per pod, how many of the steps before each touch a node its walk visits
        for key, (c, _) in parked.items():
            walked = driver.hopeless_walked(framework, c, self._pods[key], index)
            touched[key] = np.concatenate([[0], np.cumsum(walked[rows])]).tolist()
        last: dict[str, tuple[Any, int]] = {}  # each pod's last failure, and where judged
        added, stood = 0, 0  # the steps added to ``requested``; the failures that stood
        for position, _, keys in retries:
            for key in keys:
                found = last.get(key)
                if found is not None and touched[key][position] == touched[key][found[1]]:
                    stood += 1  # it stands (its cycle counted below)
                    continue
                if added < position:
                    np.add.at(requested, rows[added:position], changes[added:position])
                    added = position
                last[key] = driver.hopeless_failure(framework, parked[key][0], self._pods[key],
                                                    index, self.rng, requested), position
            out.append({key: last[key][0] for key in keys})
        driver.failures_stood(stood)
        return out

    def _retried_at_once(self, retries: Sequence[Retry], failures: Sequence[dict]
                         ) -> list[int] | None:
        """Where one pod is parked (and its retries nominate nothing), the queue takes them
        all at once (:meth:`SchedulingQueue.retried
        <ksched.queue.scheduling_queue.SchedulingQueue.retried>`): the pod's attempts before
        them, counted on as they are recorded; else ``None`` (each is replayed)."""
        keys = {r.keys for r in retries}
        if len(keys) != 1 or len(next(iter(keys))) != 1 or len(self.queue.parked() or ()) != 1:
            return None
        (key,) = next(iter(keys))
        if any(found[key].nominated_node or found[key].victims for found in failures):
            return None
        return [self._timed(self.queue.retried, key, [r.time for r in retries],
                            failures[-1][key].plugins)]

    def _record_retry(self, steps: list[Step], created: int, attempts: list[int] | None,
                      rows: list[tuple], retry: Retry, failures: dict[str, Any]) -> int:
        """The records of ``retry`` (:meth:`_retried_at_once`'s ``attempts``, into ``rows``; or
        replayed with the pods ``created`` before it); returns the pods created since the last
        replay."""
        if attempts is None:
            self._retry_parked(steps, created, retry, failures)
            return 0
        (key,) = retry.keys
        attempts[0] += 1
        rows.append((retry.time, key, UNSCHEDULABLE, None, failures[key].message, (), attempts[0]))
        return created

    def _retry_parked(self, steps: list[Step], created: int, retry: Retry,
                      failures: dict[str, Any]) -> None:
        """The queue's part of ``retry`` and its records: the ``created`` pods before it
        passed through, the parked pods moved (by a pod leaving at its time before it, or the
        flush due then), popped and parked again with their ``failures``."""
        queue, (position, t, keys) = self.queue, retry
        if created:
            self._timed(queue.passed_through, steps[position - 1].time, created)
        self._timed(queue.advance, t)  # the flush due at ``t``, if any, moves them
        if left_at(steps, position, t):
            self._timed(queue.move_all_to_active_or_backoff, ASSIGNED_POD_DELETE)
        self.now = t
        for _ in keys:
            info = self._timed(queue.pop)
            if info is None or info.key not in failures:
                raise RuntimeError(f"a stretch's retry at {t}: the queue popped "
                                   f"{info and info.key!r}, not a parked pod")
            pod = info.pod = self._pods[info.key]
            self._requeue_failed(info, pod, failures[info.key])

    def _commit_stretch(self, steps: list[Step], nodes: np.ndarray, cut: float | None = None,
                        retries: Sequence[Retry] = (), failures: Sequence[dict] = ()) -> None:
        """The Simulator's records of the steps the loop ran (``nodes``: each one's node row;
        ``cut``: a time whose pods the loop placed only some of; see the module) and of the
        parked pods' ``retries`` among them, with their ``failures``."""
        names, node_rows = self._node_names(), nodes.tolist()
        gone = {s.key for s in steps if s.pod is None}
        made, entries = self._stretch_claims(steps, node_rows), []
        pods, finish_at, durations, bound = self._pods, self._finish_at, self._durations, \
            self._lane_bound
        held, seq, start = self._held_finishes, self._seq, self.start_time
        forget_class, created_at = self.driver.forget_class, self._created.setdefault
        pending = list(zip(retries, failures))[::-1]
        attempts = self._retried_at_once(retries, failures)
        rows: list[tuple] = []  # add's arguments, recorded at once (replays record their own)
        record = rows.append if attempts is not None else lambda row: self.decisions.add(*row)
        created = 0  # pods created since the last retry replayed (passed through the queue)
        push, remember = heapq.heappush, self.driver.remember_class
        for k, (step, node) in enumerate(zip(steps, node_rows)):
            while pending and pending[-1][0].position == k:
                created = self._record_retry(steps, created, attempts, rows, *pending.pop())
            t, key, c, pod, duration, _, _, left = step
            if pod is None:
                record((t, key, left, names[node], "", (), 0))
                finish_at.pop(key, None)
                bound.pop(key, None)
                pods.pop(key, None)
                forget_class(key)
                entries.append((key, node, None))
                continue
            created += 1
            created_at(key, t)
            if duration is not None:
                durations[key] = float(duration)
            elif key in durations:
                del durations[key]
            record((t, key, BOUND, names[node], "", (), 1))
            if key not in gone:
                if duration is None:  # (one with a runtime leaves by its held finish)
                    remember(self._lane_loop[1], pod, c)
                pod = pods[key] = (made.get(key, pod) if made else pod).with_status(start + t, "")
                if duration is not None:  # held here until due (_release_finishes)
                    at = finish_at[key] = t + durations[key]
                    push(held, (at, next(seq), key))
                    bound[key] = (node, c)
            entries.append((key, node, pod))
        while pending:
            created = self._record_retry(steps, created, attempts, rows, *pending.pop())
        self.decisions.extend(rows)
        columns = step_columns(steps)
        table = self._footprint_table(steps, columns.classes)
        (times, classes, _, arrived), sampled = with_flushes(
            columns, sampled_after(columns, cut), retries)
        signs = np.where(arrived, 1, -1) * (classes >= 0)
        changes = table[classes] * signs[:, None]
        running = self.assumer.num_bound
        self.assumer.replay(entries, names)
        requested = self._usage.replay(times, changes)
        self._stretch_samples(times, sampled, requested, running + np.cumsum(signs))
        self.now = float(times[-1])
        self.queue.passed_through(self.now, created)

    def _stretch_claims(self, steps: list[Step], nodes: list[int]) -> dict[str, Any]:
        """The claims of the steps' pods, in order: made from their templates when the pod is
        created (the resourceclaim controller) and written as Reserve and PreBind leave them
        on its node (one write: nothing reads them between), released when it leaves. A pod
        that leaves as it is bound (the next step) leaves nothing behind, so its claims are
        neither made nor allocated. Returns the pods that stay as the controller leaves
        them, by key."""
        if not self._lane_loop[1].tables.device_classes.needs:
            return {}  # no class of the loop counts devices: no pod here has claims
        cache, made, skip, columns = self.assumer.claim_cache, {}, False, None
        with cache.deferred():
            for j, step in enumerate(steps):
                if skip:
                    skip = False
                elif step.pod is None:
                    pod = made.get(step.key) or self._pods.get(step.key)
                    if pod is not None:
                        claims_released(pod, cache)
                elif step.pod.claim_sources:
                    after = steps[j + 1] if j + 1 < len(steps) else None
                    skip = after is not None and after.pod is None and after.where == -1 - j
                    if not skip:  # the controller's claims, written as PreBind writes them
                        pod, claims = generate_claims(step.pod, cache.current)
                        columns = columns or DeviceColumns.of(self.assumer.state)
                        cache.write(columns.bound_claims(pod, claims, nodes[j], cache.current))
                        made[step.key] = pod
        return made

    def _stretch_samples(self, times: np.ndarray, sampled: np.ndarray, requested: np.ndarray,
                         running: np.ndarray) -> None:
        """The samples due at the moments (the steps and the flushes between them, at
        ``times``) the Simulator samples after (``sampled``; ``requested``: the totals after
        each, ``running``: the pods bound then), as :meth:`Simulator._sample` takes them (the
        queue as it stands after each: as now, its parked pods parked again)."""
        candidates = np.flatnonzero(sampled)
        taken, due = sampled_moments(times[candidates], self._next_sample, self.sample_every)
        taken = candidates[taken]
        self._samples.extend(times[taken], self.queue.lengths(), *self._usage.columns()[:2],
                             requested[taken], running[taken])
        self._next_sample = due

    def _footprint_table(self, steps: list[Step], classes: np.ndarray) -> np.ndarray:
        """Per class of the ``steps`` (their ``classes``), what a pod of it adds to
        ``requested`` (:meth:`_class_footprint`), by class; the last row, zeros, for a flush
        (class -1)."""
        seen, first = np.unique(classes, return_index=True)
        table = np.zeros((int(seen[-1]) + 2, len(self._usage.names)), dtype=np.int64)
        for c, k in zip(seen.tolist(), first.tolist()):
            if c >= 0:
                table[c] = self._class_footprint(c, steps[k].key, steps[k].pod)
        return table

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
