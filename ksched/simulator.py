"""A time-driven simulation of kube-scheduler over a timeline of cluster events.

The :class:`Simulator` feeds a :class:`~ksched.queue.SchedulingQueue` from a timeline (pods
created, updated (bound ones in place), finishing or deleted; nodes added, cordoned or
removed) and runs kube-scheduler's loop (``pkg/scheduler/schedule_one.go``) on a virtual
clock: pop a pod, run the scheduling cycle, on success assume it and run Reserve, Permit and the
binding cycle (PreBind, Bind, PostBind), on failure run PostFilter (DefaultPreemption) and hand
the pod back to the queue. Cycles take no virtual time; the clock jumps to the next event,
backoff expiry or queue flush.

Each cycle goes through the :class:`~ksched.driver.Driver` ``schedule_batch`` uses too. Pods
whose cycle the compiled loop models exactly (no pods counted: no spreading, no pod affinity of
theirs or the running pods'; no nominated pods in the way) are scheduled by it, one at a time,
on their class's arrays and the state the framework uses for the others; while the queue is idle,
whole stretches of arrivals and finishes go through it at once (:mod:`ksched.sim_lane`). Where only
NodeResourcesFit of the filters looks at pods, a pod that fits nowhere and preempts, and its
retry on the nominated node, are compiled too (:mod:`ksched.compiled_preemption`). The events are
:mod:`ksched.timeline`'s; the pods waiting at Permit, :mod:`ksched.waiting_pods`'. A pod
using something ksched does not model is recorded unschedulable, the reason naming it.
"""

from __future__ import annotations

import heapq
import itertools
import time as wallclock
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from ksched.api import Pod
from ksched.cache import Assumer, StorageCache
from ksched.decisions import (
    BOUND,
    DELETED,
    FINISHED,
    IGNORED,
    PREEMPTED,
    PREEMPTING,
    REJECTED,
    UNSCHEDULABLE,
    WAITING,
    Decision,
    Sample,
    SimulationResult,
)
from ksched.disruption import pdb_status, workload_replicas
from ksched.driver import Counters, Driver
from ksched.dra.controller import claims_created, claims_released
from ksched.engine import no_profile_reason
from ksched.compiled_preemption import Failure
from ksched.framework.diagnosis import SchedulingError
from ksched.framework.interfaces import Cycle
from ksched.framework.nominator import NominatedPods
from ksched.framework.runtime import Framework
from ksched.framework.tiebreak import TieBreaker
from ksched.gc_pause import collector_paused
from ksched.inputs import (
    as_cluster,
    check_flag,
    check_percentage,
    check_profile,
    check_progress,
    check_seed,
    check_tie_break,
    merged_classes,
    policy_objects,
)
from ksched.io import priority_admission
from ksched.profile import default_profile
from ksched.queue import ASSIGNED_POD_DELETE, NODE_ADD, QueuedPodInfo, SchedulingQueue
from ksched.queue.hints import PodAddHints, PodUpdateHints
from ksched.state import ClusterState
from ksched.decision_log import DecisionLog
from ksched.samples import SampleLog
from ksched.sim_lane import MIN_STRETCH, ArrivalRuns
from ksched.sim_nodes import NodeChanges
from ksched.sim_support import Placed, check_resize, finite_argument, next_sample_time
from ksched.status import Code
from ksched.timeline import EVENT_KINDS, Event, as_events, as_seconds, check_timeline
from ksched.utilisation import UtilisationMeter
from ksched.waiting_pods import PermitWaits, WaitingPod, WaitingPods


class Simulator(ArrivalRuns, NodeChanges, PermitWaits):
    """kube-scheduler's loop over a timeline, on a virtual clock.

    Parameters
    ----------
    cluster : the cluster at time 0 (never modified).
    profile : a :class:`Profile` or a :class:`~ksched.config.SchedulerConfig` (its backoff
        settings included); default: the default profile.
    pdbs : PodDisruptionBudgets (preemption respects them; their status is recomputed as
        pods go, with ``replicas`` giving each controller's ``spec.replicas``, by default
        the cluster's workloads'); default: the cluster's (read with its nodes).
    priority_classes : PriorityClasses, besides the cluster's (one of the same name
        replaces the cluster's); created pods without ``spec.priority`` are admitted with
        them (the Priority admission plugin).
    seed : seeds the random tie-break (``tie_break="random"``) and preemption's offset.
    start_time : the POSIX time of virtual time 0 (pods' ``status.startTime``).
    sample_every : virtual seconds between queue-length and utilisation samples.
    cycle_seconds : virtual seconds one scheduling attempt takes (due events apply after it).
    on_cycle : ``on_cycle(simulator, idle)``, called after each attempt and when the queue is
        drained (``idle``: only a later event can change anything); it may read the
        :attr:`decisions` so far, :meth:`push` events and :meth:`change` the cluster.
    batched : run stretches of arrivals and finishes that need nothing of the queue through
        the compiled loop at once (:mod:`ksched.sim_lane`; the same outcome, faster).
    """

    def __init__(self, cluster: ClusterState, *, profile: Any = None, pdbs: Sequence[Any] = (),
                 replicas: Mapping[tuple[str, str, str], int] | None = None,
                 priority_classes: Sequence[Any] = (),
                 seed: int | None = 0, tie_break: str = "round-robin",
                 percentage_of_nodes_to_score: int | None = None, fast_path: bool = True,
                 start_time: float = 0.0, sample_every: float = 60.0, cycle_seconds: float = 0.0,
                 on_cycle: Callable[[Simulator, bool], None] | None = None,
                 batched: bool = True) -> None:
        profile, seed = check_profile(profile), check_seed(seed)
        tie_break = check_tie_break(tie_break)
        percentage_of_nodes_to_score = check_percentage(percentage_of_nodes_to_score)
        self.cluster = as_cluster(cluster)
        self.config = profile if hasattr(profile, "profiles") else None
        profiles = self.config.profiles if self.config else [profile or default_profile()]
        registry = self.config.registry if self.config else None
        self.frameworks = {p.scheduler_name: Framework(p, registry) for p in profiles}
        #: DynamicResources per profile: its PreEnqueue holds pods whose claims are missing.
        self._claim_plugins = {name: p for name, fw in self.frameworks.items()
                               for n, p in fw.points["preFilter"] if n == "DynamicResources"}
        plugins = {name: fw.plugins for name, fw in self.frameworks.items()}
        self._pod_add, self._pod_update = PodAddHints(plugins), PodUpdateHints(plugins)
        if percentage_of_nodes_to_score is None:
            percentage_of_nodes_to_score = (self.config.percentage_of_nodes_to_score
                                            if self.config else 0)
        self.percentage = percentage_of_nodes_to_score or 0
        self.pdbs = list(pdbs) or list(policy_objects(self.cluster, "pdbs"))
        self.priority_classes = merged_classes(self.cluster, priority_classes)
        self._admit = priority_admission(self.priority_classes)
        self.replicas = {**workload_replicas(self.cluster), **(replicas or {})}
        self.tie_breaker = TieBreaker(tie_break, seed)
        self.rng = np.random.default_rng(seed)
        self.use_fast_path = check_flag(fast_path, "fast_path")
        self.batched = check_flag(batched, "batched")
        self.start_time = finite_argument(start_time, "start_time")
        self.sample_every = as_seconds(sample_every, "Simulator", "sample_every", positive=True,
                                       argument=True)
        self.cycle_seconds = as_seconds(cycle_seconds, "Simulator", "cycle_seconds", argument=True)
        self.on_cycle = on_cycle

    # ------------------------------------------------------------------ running

    def run(self, events: Iterable[Event], *, until: float | None = None,
            progress: Callable[[int], None] | None = None) -> SimulationResult:
        """Play ``events`` (any order; equal times keep their order) until virtual time
        ``until`` (the clock then stands at ``until``), or until the timeline is over and no
        pod waits at Permit: after that nothing changes, so pods still pending would only fail
        again.

        ``events`` are :class:`Event` records or their dicts as a timeline file has them. A
        timeline the API server would certainly refuse part of is refused before the run:
        creating a pod that exists (and cannot have finished yet), updating or deleting one
        never created or already deleted, adding a node that exists, removing or cordoning one
        that does not. A create for a pod whose earlier incarnation may still run (it was
        created with a duration) is decided at its time: recorded as ``ignored`` with the API
        server's ``pods "NAME" already exists`` if the pod is still there."""
        if until is not None:
            until = as_seconds(until, "Simulator.run", "until", argument=True)
        events, progress = as_events(events), check_progress(progress)
        check_timeline(events, self.cluster)
        with collector_paused():  # a run makes millions of objects without cycles
            return self._run(events, until, progress)

    def _run(self, events: list[Event], until: float | None,
             progress: Callable[[int], None] | None) -> SimulationResult:
        started = wallclock.perf_counter()
        self._reset(events)
        while True:
            self._drain(progress)
            self._sample()
            if self.on_cycle is not None:
                self.on_cycle(self, not (self.queue.lengths()["backoff"] or self.waiting_pods or
                                         self._timeline and self._timeline[0][0] <= self.now))
            if self._run_arrivals(until, progress):
                continue
            if not self._timeline and not self._held_finishes and not self.waiting_pods:
                break  # nothing can change any more: retrying the pods left changes nothing
            upcoming = [t for t in (self._timeline[0][0] if self._timeline else None,
                                    self._held_finishes[0][0] if self._held_finishes else None,
                                    self._timed(self.queue.next_event_time),
                                    self.waiting_pods.next_deadline()) if t is not None]
            next_time = max(min(upcoming), self.now)
            if until is not None and next_time > until:
                self._usage.advance(until)
                self.now = until  # the clock ran to ``until``; nothing happened meanwhile
                break
            self._release_finishes(next_time)
            self._advance(next_time)
        self._sample(force=True)
        self.assumer.sync()
        pending = tuple(pod for pod, _ in self.queue.pending_pods())
        return SimulationResult(self.decisions.frozen(), self._samples.samples(),
                                self.assumer.frozen(), dict(self._created), pending,
                                wallclock.perf_counter() - started, self._queue_seconds,
                                self._usage.usage())

    def _reset(self, events: list[Event]) -> None:
        less = None
        first = next(iter(self.frameworks.values()))
        sorts = first.points["queueSort"]
        if sorts and sorts[0][0] != "PrioritySort":
            less = sorts[0][1].less
        self._priority_sort = less is None  # the queue pops pods created at once by priority
        config = self.config
        self.queue = SchedulingQueue(
            initial_backoff=config.pod_initial_backoff_seconds if config else 1.0,
            max_backoff=config.pod_max_backoff_seconds if config else 10.0, less=less,
            pre_enqueue=self._held_by_claims)
        self.now = 0.0
        self._seq = itertools.count()
        self._timeline: list[tuple[float, int, Event]] = []
        for event in events:
            self.push(event)
        self._pending_specs = [e.pod for e in events if e.pod is not None]
        self._nodes: list | None = None  # the node records, made on the first node event
        self._counters = Counters()
        self._usage: UtilisationMeter | None = None
        self._new_assumer(self.cluster)
        self._pods: dict[str, Pod] = {}
        #: Finishes of pods a stretch bound, held until due, and those pods' nodes and classes.
        self._held_finishes: list[tuple[float, int, str]] = []
        self._lane_bound: dict[str, tuple[int, int]] = {}
        self._stretch_limit = MIN_STRETCH
        self._lane_loop: tuple = (None, None)  # (driver, its loop for stretches or None)
        self._created: dict[str, float] = {}
        self._durations: dict[str, float] = {}
        #: When each bound pod with a duration finishes, and the finish events of pods that
        #: left earlier (ignored when due: a pod created again under the name may run then).
        self._finish_at: dict[str, float] = {}
        self._cancelled: set[tuple[str, float]] = set()
        self.decisions = DecisionLog()
        self._samples = SampleLog()
        self._next_sample = 0.0
        self._queue_seconds = 0.0
        self.waiting_pods = WaitingPods()

    def _new_assumer(self, state: ClusterState, storage_cache: StorageCache | None = None
                     ) -> None:
        """A fresh cache (and driver) for ``state``; the counters, the tie-break and the
        volume bindings assumed so far (``storage_cache``) go on."""
        self.driver = Driver(Assumer(state, self._pending_specs, storage_cache),
                             self.tie_breaker, self.percentage, counters=self._counters,
                             count_pods=False)
        self.assumer = self.driver.assumer
        self._nominated_index: NominatedPods | None = None
        self._footprints: dict[int, np.ndarray] = {}  # per class of the driver's loop
        self._names: tuple = (None, [])
        if self._usage is None:
            self._usage = UtilisationMeter(self.assumer.state)
        else:
            self._usage.reset(self.assumer.state)  # the nodes changed: summed once

    def _held_by_claims(self, pod: Pod) -> str | None:
        """DynamicResources' PreEnqueue: its name while a claim of ``pod`` is missing."""
        plugin = self._claim_plugins.get(pod.scheduler_name)
        if plugin is None or plugin.pre_enqueue(pod, self.assumer.state).is_success:
            return None
        return plugin.NAME

    def push(self, event: Event) -> None:
        """Add ``event`` (due now or later) to the timeline (of the run going on)."""
        heapq.heappush(self._timeline, (float(event.time), next(self._seq), event))

    def _timed(self, call: Callable[..., Any], *args: Any) -> Any:
        """``call(*args)``, its wall time counted as the queue's (an error ends the run)."""
        began = wallclock.perf_counter()
        out = call(*args)
        self._queue_seconds += wallclock.perf_counter() - began
        return out

    def _record(self, pod: str, outcome: str, **fields: Any) -> None:
        self.decisions.add(self.now, pod, outcome, **fields)

    def _sample(self, force: bool = False) -> None:
        if not force and self.now < self._next_sample:
            return
        self._samples.add(self.now, self.queue.lengths(), *self._usage.columns(),
                          self.assumer.num_bound)
        self._next_sample = next_sample_time(float(self._next_sample), float(self.now),
                                             float(self.sample_every))

    def _advance(self, now: float) -> None:
        """The clock to ``now``: the queue's timers, the events due, Permit timeouts."""
        self._usage.advance(now)
        self.now = now
        self._timed(self.queue.advance, now)
        while self._timeline and self._timeline[0][0] <= now:
            self._apply(heapq.heappop(self._timeline)[2])
        self._expire_permits()

    def change(self, nodes: Sequence[Any] | None = None, volumes: Sequence[Any] = (),
               claims: Sequence[Any] = (), event: str | None = None) -> None:
        """During a run: add PersistentVolumes and PersistentVolumeClaims; replace the node
        records (bound pods stay on the nodes of their names), then ``event`` (``"NodeAdd"``,
        ``"NodeUpdate"``) moves the pods waiting for it back to the queue."""
        cache = self.assumer.storage_cache
        cache.api = cache.api.updated(volumes, claims)
        cache.assume(volumes, claims)
        if nodes is not None:
            self._nodes = list(nodes)
            self._rebuild(event)

    # ------------------------------------------------------------------ timeline events

    def _apply(self, event: Event) -> None:
        if event.kind == "create":
            self._create(event.pod, event.duration)
        elif event.kind == "update":
            self._update(event.pod)
        elif event.kind == "delete":
            self._delete(event.name, DELETED)
        elif event.kind == "finish":
            if (event.name, event.time) in self._cancelled:
                self._cancelled.discard((event.name, event.time))
            elif self._finish_at.get(event.name, event.time) == event.time:
                self._delete(event.name, FINISHED)
        elif event.kind == "node-add":
            self._node_list().append(event.node)
            self._rebuild(NODE_ADD)
        else:
            self._change_node(event.kind, event.name)

    def _create(self, pod: Pod, duration: float | None) -> None:
        pod = self._admit(pod)
        key = pod.key
        if key in self._pods:  # it was created with a duration that has not run out
            self._record(key, IGNORED, reason=f'pods "{pod.name}" already exists')
            return
        self._created.setdefault(key, self.now)
        if duration is not None:
            self._durations[key] = float(duration)
        elif key in self._durations:  # created again, without the runtime it had before
            del self._durations[key]
        if pod.scheduler_name not in self.frameworks:
            self._record(key, IGNORED, reason=no_profile_reason(pod))
            return
        pod, _ = claims_created(pod, self.assumer.claim_cache)  # the resourceclaim controller
        self._pods[key] = pod
        self._timed(self.queue.add, pod)

    def _update(self, pod: Pod) -> None:
        """A pod changed: pending (``Update``) or bound (:meth:`_update_bound`)."""
        pod = self._admit(pod)
        old, row = self._pods.get(pod.key), self.assumer.row_of(pod.key)
        if pod.key in self.waiting_pods:
            return
        if row is not None:
            check_resize(self.assumer.state, self.assumer.node_row(row), pod,
                         self.assumer.footprint(pod)[0])
            self._update_bound(pod.with_status(self.assumer.logged(row).start_time, ""))
            return
        if old is None:
            return
        if old.nominated_node_name and not pod.nominated_node_name:
            pod = attrs.evolve(pod, nominated_node_name=old.nominated_node_name)
        self._pods[pod.key] = pod
        self.driver.forget_class(pod.key)
        self._timed(self.queue.update, old, pod)

    def _update_bound(self, pod: Pod) -> None:
        """``updatePodInCache``: a bound pod changed in place (labels, requests), kept on its
        node: the cache's ``UpdatePod``, then the events of the change for the queue."""
        old, pod = self.driver.replace(pod)
        self._lane_bound.pop(pod.key, None)  # a held finish of the old pod's class is stale
        self._usage.remove(self.assumer.footprint(old)[0])
        self._usage.add(self.assumer.footprint(pod)[0])
        self._pods[pod.key] = pod
        if self.pdbs:
            self._update_pdbs()
        self._timed(self._pod_update.send, self.queue, old, pod, self.assumer.state)

    def _delete(self, key: str, outcome: str) -> None:
        """A pod goes away: off its node (freeing it), out of the queue, or out of Permit."""
        pod = self._pods.pop(key, None)
        if pod is None and self.assumer.row_of(key) is None:
            return  # gone already (preempted, evicted, finished)
        self._cancel_finish(key, outcome)
        self.driver.forget_class(key)
        waiting = self.waiting_pods.pop(key)
        if waiting is not None:
            self._unreserve(waiting, forget=True)
        if self.assumer.row_of(key) is not None:
            pod = self._remove_bound([key])[0]
            claims_released(pod, self.assumer.claim_cache)
            self._record(key, outcome, node=pod.node_name)
            self._timed(self.queue.move_all_to_active_or_backoff, ASSIGNED_POD_DELETE)
        else:
            self._timed(self.queue.delete, pod)
            self._record(key, outcome)
            if claims_released(pod, self.assumer.claim_cache):
                self._timed(self.queue.move_all_to_active_or_backoff, "ResourceClaimDelete")

    def _cancel_finish(self, key: str, outcome: str) -> None:
        """The pod ``key`` left (``outcome``): its finish event, if one is to come, is void."""
        at = self._finish_at.pop(key, None)
        if at is not None and outcome != FINISHED:
            self._cancelled.add((key, at))

    def _remove_bound(self, keys: Sequence[str]) -> list[Pod]:
        removed = self.driver.remove(keys)
        for pod in removed:
            self._usage.remove(self.assumer.footprint(pod)[0])
            self._lane_bound.pop(pod.key, None)  # its held finish is stale now
        if removed and self.pdbs:
            self._update_pdbs()
        return removed

    def _update_pdbs(self) -> None:
        self.assumer.sync()
        pods = list(self.assumer.state.pods)
        self.pdbs = [pdb_status(pdb, pods, self.replicas) for pdb in self.pdbs]

    # ------------------------------------------------------------------ the scheduling loop

    def _drain(self, progress: Callable[[int], None] | None) -> None:
        while True:
            self._settle_permits()
            info = self._timed(self.queue.pop)
            if info is None:
                return
            pod = self._pods.get(info.key)
            if pod is None or self.assumer.row_of(info.key) is not None:
                self._timed(self.queue.done, info.key)
                continue
            info.pod = pod
            self._schedule(info, pod)
            if self.cycle_seconds:
                self._advance(self.now + self.cycle_seconds)
            if self.on_cycle is not None:
                self.on_cycle(self, False)
            if progress is not None:
                progress(1)

    def _nominations(self) -> NominatedPods:
        """The queue's nominated pods per node row, as an index brought up to date with the
        nodes whose nominations changed since the last call."""
        queue, state = self.queue, self.assumer.state
        changed = queue.take_nomination_changes()
        index = self._nominated_index
        if index is None or not index.matches(state):
            index = self._nominated_index = NominatedPods(state)
            changed = set(queue.nominated_pods())
        for name in changed:
            row = state.node_index.get(name)
            if row is not None:
                index.set_node(row, queue.nominated_pods_for_node(name))
        return index

    def _schedule(self, info: QueuedPodInfo, pod: Pod) -> None:
        """``ScheduleOne``: find a node; assume and bind, or run PostFilter and requeue."""
        framework = self.frameworks[pod.scheduler_name]
        nominated = self._nominations()
        placed = Placed(pod, self.start_time + self.now)
        try:
            outcome = self.driver.schedule_one(framework, info.key, pod, placed, nominated,
                                               compiled=self.use_fast_path, pdbs=self.pdbs,
                                               rng=self.rng)
        except SchedulingError as exc:
            self._record(info.key, UNSCHEDULABLE, reason=str(exc), attempt=info.attempts)
            self._timed(self.queue.add_unschedulable_if_not_present, info,
                        self.queue.scheduling_cycle)
            return
        if isinstance(outcome, Failure):
            self._requeue_failed(info, pod, outcome)
            return
        node = outcome if isinstance(outcome, int) else outcome.node
        if node is None:  # ``handleSchedulingFailure`` after PostFilter
            self._requeue_failed(info, pod, self.driver.post_filter(
                framework, pod, outcome, self._nominations(), self.pdbs, self.rng))
            return
        self._timed(self.queue.delete_nominated, pod)
        self._usage.add(self.assumer.footprint(pod)[0])
        self._pods[info.key] = placed()
        cycle = self.driver.binding_cycle(placed(), None if isinstance(outcome, int) else outcome)
        self._reserve_and_permit(info, framework, cycle, self.assumer.state.node_names[node])

    # ------------------------------------------------------------------ after the cycle

    def _requeue_failed(self, info: QueuedPodInfo, pod: Pod, failure: Failure) -> None:
        """Evict the victims, nominate, record, and hand the pod back to the queue."""
        node = failure.nominated_node
        if node:
            self._preempt(pod, node, failure.victims, info.attempts)
        if node is not None:
            if pod.nominated_node_name != node:
                pod = pod.with_status(pod.start_time, node)
                self._pods[info.key] = info.pod = pod
            self._timed(self.queue.add_nominated, pod, node)
        self._record(info.key, UNSCHEDULABLE, reason=failure.message, attempt=info.attempts)
        info.unschedulable_plugins = failure.plugins
        self._timed(self.queue.add_unschedulable_if_not_present, info,
                    self.queue.scheduling_cycle)

    def _preempt(self, pod: Pod, node: str, victims: Sequence[str], attempt: int) -> None:
        """``prepareCandidate``: evict the victims, clear lower-priority nominations there."""
        self._record(pod.key, PREEMPTING, node=node, victims=tuple(victims), attempt=attempt)
        for key in victims:
            if key in self.waiting_pods:
                self._reject_waiting(key, "preempted", "")
            self._pods.pop(key, None)
            self._cancel_finish(key, PREEMPTED)
        for victim in self._remove_bound(victims):
            self._record(victim.key, PREEMPTED, node=victim.node_name,
                         reason=f"preempted by {pod.key}")
        self._timed(self.queue.move_all_to_active_or_backoff, ASSIGNED_POD_DELETE)
        for other in self.queue.nominated_pods_for_node(node):
            if other.priority < pod.priority:
                cleared = attrs.evolve(other, nominated_node_name="")
                self._timed(self.queue.delete_nominated, other)
                if other.key in self._pods:
                    self._pods[other.key] = cleared

    def _reserve_and_permit(self, info: QueuedPodInfo, framework: Framework, cycle: Cycle,
                            node: str) -> None:
        status = framework.run_reserve(cycle, node)
        if not status.is_success:
            self._unreserve(WaitingPod(info, framework, cycle, node), forget=True,
                            reason=status.message, plugin=status.plugin)
            return
        cycle.data["waiting_pods"] = self.waiting_pods
        status, waits = framework.run_permit(cycle, node)
        if status.code == Code.WAIT:
            self.waiting_pods.add(info.key, WaitingPod(info, framework, cycle, node, {
                plugin: self.now + timeout for plugin, timeout in waits.items()}))
            self._record(info.key, WAITING, node=node, attempt=info.attempts)
        elif not status.is_success:
            self._unreserve(WaitingPod(info, framework, cycle, node), forget=True,
                            reason=status.message, plugin=status.plugin)
        else:
            self._bind(info, framework, cycle, node)

    def _bind(self, info: QueuedPodInfo, framework: Framework, cycle: Cycle, node: str) -> None:
        """The binding cycle: PreBind, Bind, PostBind (``bindingCycle``)."""
        self._timed(self.queue.done, info.key)
        status = framework.run_pre_bind(cycle, node)
        if status.is_success:
            status = framework.run_bind(cycle, node)
        if not status.is_success:
            self._unreserve(WaitingPod(info, framework, cycle, node), forget=True,
                            reason=status.message or "binding failed", plugin=status.plugin)
            self._timed(self.queue.move_all_to_active_or_backoff, ASSIGNED_POD_DELETE)
            return
        framework.run_post_bind(cycle, node)
        key = info.key
        self._record(key, BOUND, node=node, attempt=info.attempts)
        self._timed(self._pod_add.send, self.queue, cycle.pod, node, self.assumer.state)
        if key in self._durations:
            self._finish_at[key] = self.now + self._durations[key]
            self.push(Event(self._finish_at[key], "finish", name=key))

    def _unreserve(self, waiting: WaitingPod, forget: bool, reason: str = "",
                   plugin: str = "") -> None:
        """Unreserve in reverse order, forget the assumed pod, and requeue it (with backoff,
        as after an error) unless it was deleted."""
        waiting.framework.run_unreserve(waiting.cycle, waiting.node)
        key = waiting.info.key
        if forget and self.assumer.row_of(key) is not None:
            self._remove_bound([key])
        if key not in self._pods:
            self._timed(self.queue.done, key)
            return
        self._pods[key] = waiting.info.pod
        self._record(key, REJECTED, node=waiting.node, reason=reason,
                     attempt=waiting.info.attempts)
        waiting.info.unschedulable_plugins = frozenset({plugin} if plugin else ())
        self._timed(self.queue.add_unschedulable_if_not_present, waiting.info,
                    self.queue.scheduling_cycle)


__all__ = ["Simulator", "SimulationResult", "Event", "Decision", "Sample", "WaitingPods",
           "EVENT_KINDS"]
