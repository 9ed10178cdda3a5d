"""The scheduling driver: each pod's cycle routed to the compiled loop, the compiled preemption
cycles or the framework, on one cache (``pkg/scheduler/schedule_one.go``: ``ScheduleOne``).

:func:`ksched.engine.schedule_batch` and the :class:`~ksched.simulator.Simulator` both place
pods through a :class:`Driver`: it owns the cache (:class:`~ksched.cache.Assumer`), the
running counters the compiled loop and the framework hand each other (:class:`Counters`), the
tie-break state, and per profile the compiled loop (:class:`~ksched.fused_loop.FusedLoop`) and the
compiled preemption cycles (:class:`~ksched.compiled_preemption.CompiledPreemption`). A batch sends
runs of pods to the loop at once (:meth:`Driver.run_loop`); the simulator sends one pod at a
time through :meth:`Driver.schedule_one`, and a failed framework cycle through
:meth:`Driver.post_filter`. Every placement goes through the same bookkeeping, and the binding
cycle's Reserve and Unreserve get the cache's volume assume cache (:meth:`Driver.binding_cycle`).

A pod that uses something ksched does not model (a plugin raises
:class:`~ksched.errors.UnsupportedFeatureError`) fails alone: its cycle ends in a
:class:`~ksched.compiled_preemption.Failure` that names the feature (:func:`run_cycle`), and
the other pods go on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from ksched.api import Pod
from ksched.bound_pods import log_pod
from ksched.cache import Assumer
from ksched.fused_loop import FusedLoop, Tallies, supports
from ksched.loop_call import NO_REMOVALS
from ksched.compiled_preemption import Failure, CompiledPreemption, preemption_handle
from ksched.errors import UnsupportedFeatureError
from ksched.framework.capabilities import is_node_static_filter
from ksched.framework.interfaces import Cycle
from ksched.framework.nominator import NominatedPods
from ksched.framework.runtime import Framework
from ksched.framework.schedule_one import ScheduleResult
from ksched.framework.tiebreak import TieBreaker
from ksched.kernels.schedule_loop import EVALUATED_AT, KNOWN_FAILURE, NEXT_START_AT, PLACED_AT
from ksched.plugins.inter_pod_affinity import has_required_anti_affinity
from ksched.plugins.inter_pod_affinity_index import running_pods
from ksched.state import ClusterState
from ksched.status import NO_NODES_AVAILABLE, Code, Status, fit_error_message, with_post_filter
from ksched.dra.state import CLAIM_CACHE
from ksched.volume_binder import ASSUME_CACHE
from ksched.waiting_pods import WaitingPods


def unsupported(error: UnsupportedFeatureError) -> Failure:
    """The failed cycle of a pod that uses what ksched does not model: the error names the
    pod, the field and the feature."""
    return Failure(str(error), frozenset())


def run_cycle(framework: Framework, state: ClusterState, pod: Pod,
              **options: Any) -> ScheduleResult | Failure:
    """``framework.schedule_one(state, pod, **options)``, or :func:`unsupported` for a pod
    that uses what ksched does not model."""
    try:
        return framework.schedule_one(state, pod, **options)
    except UnsupportedFeatureError as error:
        return unsupported(error)


#: The pod condition message of a pod SchedulingGates holds (``PodReasonSchedulingGated``, as
#: the API server's pod strategy words it).
SCHEDULING_GATED_MESSAGE = "Scheduling is blocked due to non-empty scheduling gates"


def held_reason(framework: Framework, pod: Pod, state: ClusterState) -> str:
    """``runPreEnqueuePlugins`` over the profile's PreEnqueue plugins: why one keeps ``pod``
    out of the queue (so it is never scheduled), ``""`` when none does. SchedulingGates' hold
    reads as the pod's condition message; another plugin's as its status message
    (DynamicResources, where a configuration enables it there, is given the state)."""
    for name, plugin in framework.points["preEnqueue"]:
        status = (plugin.pre_enqueue(pod, state) if name == "DynamicResources"
                  else plugin.pre_enqueue(pod))
        if status is not None and not status.is_success:
            return SCHEDULING_GATED_MESSAGE if name == "SchedulingGates" else status.message
    return ""


def loop_skips_binding(framework: Framework) -> bool:
    """Whether a batch may leave out the binding cycle of the pods the compiled loop places,
    but the Reserve of the pods a Reserve plugin declares it reserves for
    (:meth:`Driver.loop_placed`): no Permit plugin, and every Reserve plugin an enabled
    node-static Filter too, whose ``node_static_for`` keeps from the loop the other pods it
    would reserve something for (DynamicResources: resource claims)."""
    filters = [plugin for _, plugin in framework.points["filter"]]
    return not framework.points["permit"] and all(
        is_node_static_filter(plugin) and any(plugin is f for f in filters)
        for _, plugin in framework.points["reserve"])


def _counter(position: int, doc: str) -> property:
    def get(self: Counters) -> int:
        return int(self.array[position])

    def put(self: Counters, value: int) -> None:
        self.array[position] = value

    return property(get, put, doc=doc)


class Counters:
    """What one pod's cycle hands the next, by name, over the ``int64[5]`` array the compiled
    loop updates in place (:attr:`array`, at ``schedule_loop``'s ``*_AT`` positions; the
    tie-break keeps its own there too, see :meth:`TieBreaker.save
    <ksched.framework.tiebreak.TieBreaker.save>`)."""

    __slots__ = ("array",)

    def __init__(self) -> None:
        self.array = np.zeros(5, dtype=np.int64)

    next_start_index = _counter(NEXT_START_AT, "``nextStartNodeIndex``: where the next node "
                                               "walk starts.")
    placed = _counter(PLACED_AT, "Pods placed so far (the loop's failure cache is per count).")
    nodes_evaluated = _counter(EVALUATED_AT, "Node evaluations (filter runs) so far.")


class Driver:
    """Pods placed one after another on one cache, each by the compiled loop, the compiled
    preemption cycles or its profile's framework.

    Parameters
    ----------
    assumer : the cache the pods are assumed into.
    tie_breaker : the tie-break state (shared by every profile, as upstream).
    percentage : the scheduler-wide ``percentageOfNodesToScore`` (a profile's own wins).
    counters : the counters to go on with (default: fresh ones).
    pending : the pods to come, when known (the loop sizes its pod-affinity keys by them).
    count_pods : keep every compiled loop's counts of placed pods up to date (a batch); the
        simulator's loop runs only classes that count no pods, as pods also leave there.
    """

    def __init__(self, assumer: Assumer, tie_breaker: TieBreaker, percentage: int, *,
                 counters: Counters | None = None, pending: Sequence[Pod] = (),
                 count_pods: bool = True) -> None:
        self.assumer, self.tie_breaker, self.percentage = assumer, tie_breaker, percentage
        self.counters = counters if counters is not None else Counters()
        self.pending, self.count_pods = pending, count_pods
        #: Bumped when a node's requests change; shared by every profile's score cache (from 1:
        #: a cache row of zeros is stale).
        self.node_version = np.ones(assumer.state.num_nodes, dtype=np.int64)
        self.fast_paths: dict[int, FusedLoop | None] = {}
        #: Per framework, the compiled failing cycle and retry; per pod key, its class (a
        #: nominated pod's spec differs from its class's only by the nomination).
        self._preemptions: dict[int, CompiledPreemption] = {}
        self._classes: dict[str, int | None] = {}
        self._simple: dict[tuple[int, int], bool] = {}
        self._plain: dict[tuple[int, int], bool] = {}
        self._anti_seen: tuple[int, bool] = (0, False)
        #: (loop, class) whose last pod fitted nowhere: its next pod tries the failing cycle
        #: first (a retry after a pod left mostly fails again), the loop only if it fits.
        self._failing: set[tuple[int, int]] = set()
        #: :meth:`_loop_one`'s class and outputs (the loop's arrays of one pod), made once.
        self._one = tuple(np.zeros(1, np.int64) for _ in range(3))

    # ------------------------------------------------------------------ the compiled loop

    def percentage_for(self, framework: Framework) -> int:
        own = framework.profile.percentage_of_nodes_to_score
        return own if own is not None else self.percentage

    def fast_path(self, framework: Framework | None) -> FusedLoop | None:
        """The framework's compiled loop, or ``None`` when the loop cannot run its profile."""
        key = id(framework)
        if key not in self.fast_paths:
            self.fast_paths[key] = (FusedLoop(framework, self.assumer.state, self.node_version,
                                             self.pending, self.count_pods)
                                    if framework is not None and supports(framework) else None)
        return self.fast_paths[key]

    def run_loop(self, fast: FusedLoop, classes: np.ndarray, begin: int, out_node: np.ndarray,
                 out_start: np.ndarray, out_walk: np.ndarray | None = None,
                 tallies: Tallies | None = None, removals: np.ndarray = NO_REMOVALS) -> int:
        """The compiled loop over ``classes[begin:]`` (it assumes what it places into the
        arrays; :meth:`loop_placed` records each); returns where it stopped. ``out_walk``:
        each pod's walk (:data:`~ksched.kernels.loop_steps.WALK_EVALUATED`), when kept;
        ``tallies``: where it records the failures it words (none: it stops at each new
        one); ``removals``: where the pods of the negative ``classes`` leave (see
        :meth:`FusedLoop.run`)."""
        if fast.counts_attachments(classes, begin):
            self.assumer.sync()  # the loop's attach counts start from the state's pods
        tie_breaker, counters = self.tie_breaker, self.counters.array
        tie_breaker.save(counters)
        stop = fast.run(self.assumer.state, classes, begin, self.percentage_for(fast.framework),
                        tie_breaker.code, tie_breaker.draws, counters, out_node, out_start,
                        out_walk, tallies, removals)
        tie_breaker.load(counters)
        return stop

    def loop_placed(self, fast: FusedLoop, pod: Pod, node: int, c: int = -1) -> None:
        """Record a pod the loop placed (of class ``c``: where the loop says a Reserve
        plugin reserves something for its pods, run Reserve); the other loops count it (it
        counted it itself)."""
        self.assumer.record(pod, node)
        if c >= 0 and fast.binds(c):
            name = self.assumer.state.node_names[node]
            status = fast.framework.run_reserve(self.binding_cycle(pod), name)
            if not status.is_success:
                raise AssertionError(f"Reserve of {pod.key} on {name}, placed by the compiled "
                                     f"loop, failed: {status.message}")
        if self.count_pods and len(self.fast_paths) > 1:
            for other in self.fast_paths.values():
                if other is not None and other is not fast and other.counters:
                    other.note_placement(pod, node, self.assumer.state)

    def loop_placed_many(self, fast: FusedLoop, pods: Sequence[Pod | tuple[Any, int]],
                         nodes: np.ndarray, classes: np.ndarray,
                         affinity: np.ndarray | None = None) -> None:
        """:meth:`loop_placed` for pods placed in this order (``nodes``: their node rows,
        ``classes``: theirs, ``affinity``: whether each has pod affinity, if known; a pod may
        be a ``(pod table, row)`` pair, see :meth:`Assumer.record_many
        <ksched.cache.Assumer.record_many>`): recorded at once unless a class runs Reserve or
        another loop counts pods, then one by one."""
        others = self.count_pods and len(self.fast_paths) > 1 and any(
            other is not None and other is not fast and other.counters
            for other in self.fast_paths.values())
        binds = np.array(fast.tables.binds, dtype=np.bool_)
        if not others and not (len(classes) and binds[classes].any()):
            self.assumer.record_many(pods, nodes, affinity)
            return
        for pod, node, c in zip(map(log_pod, pods), nodes.tolist(), classes.tolist()):
            self.loop_placed(fast, pod, node, c)

    # ------------------------------------------------------------------ the framework

    def framework_cycle(self, framework: Framework, pod: Pod,
                        placed: Callable[[], Pod] | None = None,
                        nominated: Mapping[int, Sequence[Pod]] | None = None, *,
                        bind: bool = False) -> ScheduleResult | Failure:
        """One cycle of ``framework`` (``schedulePod``) from the counters; the pod (as
        ``placed()`` makes it) is assumed where it goes. With ``bind`` (a batch) its Reserve
        and Permit plugins run too: when one fails, the pod is unreserved and forgotten, and
        the cycle ends in a :class:`Failure` with the scheduler's wording."""
        self.assumer.sync()
        counters = self.counters
        outcome = run_cycle(
            framework, self.assumer.state, pod, next_start_index=counters.next_start_index,
            percentage_of_nodes_to_score=self.percentage, tie_breaker=self.tie_breaker,
            nominated=nominated)
        if isinstance(outcome, Failure):
            return outcome
        if not outcome.nominated_fast_path:
            counters.next_start_index = outcome.next_start_index
        counters.nodes_evaluated += len(outcome.evaluated)
        if outcome.node is None:
            return outcome
        pod = pod if placed is None else placed()
        self.assumer.assume(pod, outcome.node)
        if bind:
            status = self._reserve_and_permit(framework, self.binding_cycle(pod, outcome),
                                              outcome.node)
            if not status.is_success:
                self.assumer.remove([pod.key])
                self.node_version[outcome.node] += 1
                return Failure(fit_error_message(1, [status]) if status.is_rejected
                               else status.message, frozenset({status.plugin} - {""}))
        self._counted(pod, outcome.node)
        return outcome

    # ------------------------------------------------------------------ the binding cycle

    def binding_cycle(self, pod: Pod, outcome: ScheduleResult | None = None) -> Cycle:
        """The cycle Reserve, Permit and the binding plugins run in: the scheduling cycle's
        data (``outcome``'s, where the framework ran it), the pod as placed, the cache's
        state, and the volume assume cache under ``ASSUME_CACHE``."""
        data = outcome.cycle.data if outcome is not None and outcome.cycle is not None else {}
        cycle = Cycle(self.assumer.state, pod, data)
        data[ASSUME_CACHE] = self.assumer.storage_cache
        data[CLAIM_CACHE] = self.assumer.claim_cache
        return cycle

    def _reserve_and_permit(self, framework: Framework, cycle: Cycle, node: int) -> Status:
        """A batch's Reserve and Permit (``RunReservePluginsReserve``,
        ``RunPermitPlugins``), Unreserve on a failure. A batch has no clock: a pod a Permit
        plugin makes wait stays placed (the Simulator models the wait)."""
        name = self.assumer.state.node_names[node]
        status = framework.run_reserve(cycle, name)
        if status.is_success:
            cycle.data.setdefault("waiting_pods", WaitingPods())
            status, _ = framework.run_permit(cycle, name)
            if status.code == Code.WAIT:
                return Status()
        if not status.is_success:
            framework.run_unreserve(cycle, name)
        return status

    def _counted(self, pod: Pod, node: int) -> None:
        """Count an assumed pod: the counters, the node's version, the loops' counts."""
        self.counters.placed += 1
        self.node_version[node] += 1
        if self.count_pods:
            for fast in filter(None, self.fast_paths.values()):
                fast.note_placement(pod, node, self.assumer.state)

    def diagnose(self, framework: Framework, pod: Pod, start: int) -> str:
        """The framework's wording of a failure the loop found (the state is unchanged)."""
        self.assumer.sync()
        outcome = framework.schedule_one(
            self.assumer.state, pod, next_start_index=start,
            percentage_of_nodes_to_score=self.percentage)
        if outcome.node is not None:
            raise AssertionError(f"compiled loop and framework disagree on {pod.key}")
        return outcome.message

    def post_filter(self, framework: Framework, pod: Pod, diagnosis: ScheduleResult,
                    nominated: NominatedPods, pdbs: Sequence[Any],
                    rng: np.random.Generator | None) -> Failure:
        """``handleSchedulingFailure``'s PostFilter after a framework cycle: the message and,
        where preemption found one, the node to nominate and the victims."""
        failure = Failure(diagnosis.message, diagnosis.unschedulable_plugins)
        if not framework.points["postFilter"] or diagnosis.message == NO_NODES_AVAILABLE:
            return failure
        handle = preemption_handle(framework, self.assumer, nominated=nominated, pdbs=pdbs,
                                   rng=rng)
        cycle = diagnosis.cycle
        if cycle is None or cycle.state is not self.assumer.state or cycle.pod is not pod:
            cycle = Cycle(self.assumer.state, pod)
        try:
            result, status = framework.run_post_filter(cycle, diagnosis, handle)
        except UnsupportedFeatureError as error:
            return unsupported(error)
        failure = Failure(with_post_filter(diagnosis.message, status), failure.plugins)
        if result is not None:
            failure = attrs.evolve(failure, nominated_node=result.nominated_node,
                                   victims=tuple(v.key for v in result.victims))
        return failure

    # ------------------------------------------------------------------ pods that leave

    def remove(self, keys: Iterable[str]) -> list[Pod]:
        """Take bound pods off their nodes; the loops' failure caches no longer hold, nor
        their classes (a pod created again under the same name may differ)."""
        removed = self.assumer.remove(keys)
        for pod in removed:
            self.node_version[self.assumer.state.node_index[pod.node_name]] += 1
            self._classes.pop(pod.key, None)
        for fast in filter(None, self.fast_paths.values()):
            fast.fail_epoch[:] = -1
        return removed

    def replace(self, pod: Pod) -> tuple[Pod, Pod]:
        """A bound pod changed in place, the cache's ``UpdatePod`` (``RemovePod``, then
        ``AddPod`` on the same node): ``pod`` takes the place of the bound pod of its key.
        Returns the old and the new pod, both bound."""
        [old] = self.remove([pod.key])
        pod = pod if pod.node_name == old.node_name else pod.bound_to(old.node_name)
        node = self.assumer.state.node_index[old.node_name]
        self.assumer.assume(pod, node)
        self.node_version[node] += 1
        return old, pod

    def plain_class(self, fast: FusedLoop, pod: Pod) -> int | None:
        """The class of new ``pod`` when its whole cycle is the compiled loop's placement
        (:meth:`plain`, its class not failing last time, no running pod's anti-affinity
        unmodelled, no nomination); else ``None``. A pod with resource claims takes the
        class, compiled before, it is of once its claims are made from their templates
        (:meth:`DeviceClasses.template_class
        <ksched.device_classes.DeviceClasses.template_class>`)."""
        if pod.nominated_node_name:
            return None
        if pod.resource_claims:
            c = fast.tables.device_classes.template_class(pod, self.assumer.state)
        elif fast.lasting(pod):
            c = fast.class_of(pod, self.assumer.state)
        else:
            return None
        if c is None or not self.plain(fast, c) or (id(fast), c) in self._failing \
                or self._anti_affinity_unmodelled(fast):
            return None
        return c

    def plain(self, fast: FusedLoop, c: int) -> bool:
        """Whether the loop may also take the pods of class ``c`` off their nodes (its
        ``remove_node``): they count no pods, attach no volumes (the devices they hold are
        their own claims', given back), and no Reserve plugin reserves anything for them
        but those devices."""
        key = (id(fast), c)
        found = self._plain.get(key)
        if found is None:
            found = self._plain[key] = self._counts_no_pods(fast, c) and not fast.binds(c) \
                and fast.tables.attach[c] is None
        return found

    def hopeless_class(self, framework: Framework, fast: FusedLoop, pod: Pod) -> int | None:
        """The class of parked ``pod`` when its cycle is the compiled failing one
        (:meth:`_compiled`: its class plain and failing last time, no running pod's
        anti-affinity unmodelled, no nomination, no claims for PreEnqueue to wait for) and it
        fails whatever pods come and go (:meth:`CompiledPreemption.hopeless
        <ksched.compiled_preemption.CompiledPreemption.hopeless>`); else ``None``."""
        c = self.known_class(pod.key)
        if c is None or pod.nominated_node_name or pod.resource_claims or not self.plain(fast, c) \
                or (id(fast), c) not in self._failing or self._anti_affinity_unmodelled(fast):
            return None
        state, compiled = self.assumer.state, self._preemption(framework)
        plan = compiled.plan(c, pod, state)
        return c if plan is not None and compiled.hopeless(c, plan, state) else None

    def hopeless_walked(self, framework: Framework, c: int, pod: Pod,
                        nominated: NominatedPods) -> np.ndarray:
        """bool[N]: the nodes whose requests the failure of a pod of :meth:`hopeless_class`
        ``c`` reads (:meth:`CompiledPreemption.walked
        <ksched.compiled_preemption.CompiledPreemption.walked>`)."""
        state, compiled = self.assumer.state, self._preemption(framework)
        return compiled.walked(c, compiled.plan(c, pod, state), nominated, state)

    def hopeless_failure(self, framework: Framework, c: int, pod: Pod, nominated: NominatedPods,
                         rng: np.random.Generator | None, requested: np.ndarray,
                         again: Failure | None = None) -> Failure:
        """The cycle of a pod of :meth:`hopeless_class` ``c``, on the nodes with
        ``requested`` (their requests then), as :meth:`schedule_one` runs it: the failure,
        its nodes counted as evaluated. ``again``: the pod's last failure, where none of the
        nodes :meth:`hopeless_walked` changed since (it stands)."""
        self.failures_stood(1)
        if again is not None:
            return again
        state = self.assumer.state
        compiled = self._preemption(framework)
        failure = compiled.fail(c, compiled.plan(c, pod, state), pod, self.assumer, nominated,
                                rng, requested)
        if failure is None:
            raise RuntimeError(f"pod {pod.key}: its class was found to fit nowhere, yet it "
                               f"fits or its failure is not modelled")
        return failure

    def failures_stood(self, cycles: int) -> None:
        """``cycles`` failing cycles whose failure stands as last found (no walk again):
        each evaluated every node, as kube-scheduler's failing cycle does."""
        self.counters.nodes_evaluated += cycles * self.assumer.state.num_nodes

    def known_class(self, key: str) -> int | None:
        """The class the compiled cycle found for pod ``key`` (``None``: none is known)."""
        c = self._classes.get(key, -1)
        return None if c == -1 else c

    def remember_class(self, fast: FusedLoop, pod: Pod, c: int) -> None:
        """``pod``, placed by a run of ``fast`` as class ``c``, keeps that class while it
        runs (as :meth:`schedule_one` keeps it): its deletion can then join a stretch."""
        if fast.lasting(pod):
            self._classes[pod.key] = c

    def forget_class(self, key: str) -> None:
        """The pod ``key`` changed or went: its class is found again next time."""
        self._classes.pop(key, None)

    # ------------------------------------------------------------------ one pod at a time

    def schedule_one(self, framework: Framework, key: str, pod: Pod,
                     placed: Callable[[], Pod], nominated: NominatedPods, *,
                     compiled: bool = True, pdbs: Sequence[Any] = (),
                     rng: np.random.Generator | None = None) -> int | Failure | ScheduleResult:
        """One pod's cycle: the node it went to (assumed) by a compiled cycle, the failure of
        the compiled failing cycle (PostFilter run, nothing evicted yet) or of a pod using
        what ksched does not model, or the framework's outcome (assumed where it has a node;
        ``compiled=False``: always the framework)."""
        framework.vectorized = compiled
        outcome = self._compiled(framework, key, pod, placed, nominated, pdbs, rng) \
            if compiled else None
        if outcome is not None:
            return outcome
        return self.framework_cycle(framework, pod, placed, nominated)

    def _compiled(self, framework: Framework, key: str, pod: Pod, placed: Callable[[], Pod],
                  nominated: NominatedPods, pdbs: Sequence[Any],
                  rng: np.random.Generator | None) -> int | Failure | None:
        """The compiled cycle's outcome, or ``None``: use the framework."""
        fast = self.fast_path(framework)
        if fast is None:
            return None
        c = self._classes.get(key, -1)
        if c == -1:
            c = fast.class_of(pod, self.assumer.state)
            if fast.lasting(pod):
                self._classes[key] = c
        if c is None or not self._counts_no_pods(fast, c):
            return None
        if pod.nominated_node_name:
            return self._retry(framework, c, pod, placed, nominated)
        if self._anti_affinity_unmodelled(fast):
            return None
        key, free = (id(fast), c), not nominated.any_before(pod)
        looped = free and key not in self._failing
        if looped:
            node = self._loop_one(fast, c, placed)
            if node is not None:
                return node
        compiled = self._preemption(framework)
        plan = compiled.plan(c, pod, self.assumer.state)
        failure = None
        if plan is not None and not pdbs:  # the compiled dry run counts no PDB violations
            failure = compiled.fail(c, plan, pod, self.assumer, nominated, rng)
        if failure is None:
            self._failing.discard(key)
            return self._loop_one(fast, c, placed) if free and not looped else None
        self._failing.add(key)
        if not looped:  # the loop's failing walk counts its nodes
            self.counters.nodes_evaluated += self.assumer.state.num_nodes
        return failure

    def _preemption(self, framework: Framework) -> CompiledPreemption:
        """The framework's compiled failing cycle and retry, its plans made again whenever
        pods with pod affinity come or go (InterPodAffinity's PreFilter may skip no more)."""
        key = id(framework)
        version = self.assumer.affinity_version
        found = self._preemptions.get(key)
        if found is None or found.affinity_version != version:
            found = self._preemptions[key] = CompiledPreemption(framework, self.node_version,
                                                            version)
        return found

    def _loop_one(self, fast: FusedLoop, c: int, placed: Callable[[], Pod]) -> int | None:
        """The compiled loop's placement of one pod (assumed), or ``None``: it fits nowhere
        (the start index is left where the walk began, as the framework's cycle will; a
        failure known from its class's last walk evaluated every node, as that cycle does)."""
        classes, out_node, out_start = self._one
        classes[0], out_node[0], out_start[0] = c, 0, 0
        self.tie_breaker.reserve(1)
        self.run_loop(fast, classes, 0, out_node, out_start)
        if out_node[0] < 0:
            self.counters.next_start_index = int(out_start[0])
            if out_node[0] == KNOWN_FAILURE:
                self.failures_stood(1)
            return None
        self.assumer.record(placed(), int(out_node[0]))
        return int(out_node[0])

    def _retry(self, framework: Framework, c: int, pod: Pod, placed: Callable[[], Pod],
               nominated: NominatedPods) -> int | None:
        """``evaluateNominatedNode`` compiled: the nominated node (assumed) when the pod fits
        there, else ``None`` (the framework runs the whole cycle)."""
        state = self.assumer.state
        compiled = self._preemption(framework)
        plan = compiled.plan(c, pod, state)
        node = state.node_index.get(pod.nominated_node_name)
        if plan is None or node is None or \
                not compiled.fits_nominated_node(plan, pod, node, state, nominated):
            return None
        self.assumer.add(placed(), node)
        self.node_version[node] += 1
        self.counters.placed += 1
        self.counters.nodes_evaluated += 1
        return node

    def _anti_affinity_unmodelled(self, fast: FusedLoop) -> bool:
        """Whether a running pod's required anti-affinity may reject a pod the loop would
        place (``satisfyExistingPodsAntiAffinity``) with no row of the loop's for it: the
        loop was made knowing no such pod, and one runs now (checked again whenever pods
        with affinity come or go)."""
        if fast.counts.anti_columns:
            return False  # every class then has rows for them, and counts pods
        version = self.assumer.affinity_version
        if self._anti_seen[0] != version:
            self.assumer.sync()
            self._anti_seen = (version, bool(running_pods(self.assumer.state).term_groups(
                has_required_anti_affinity)))
        return self._anti_seen[1]

    def _counts_no_pods(self, fast: FusedLoop, c: int) -> bool:
        """Whether a class's cycle counts no pods (no spreading, no pod affinity): then
        departures cannot leave the loop's counters stale."""
        key = (id(fast), c)
        if key not in self._simple:
            self._simple[key] = not fast.counts_pods(c)
        return self._simple[key]


__all__ = ["Driver", "Counters", "run_cycle", "unsupported", "loop_skips_binding", "held_reason",
           "SCHEDULING_GATED_MESSAGE"]
