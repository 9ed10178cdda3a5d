"""``schedule_batch``: place pending pods one after another, as kube-scheduler's cycle would.

Each pod walks the ``percentageOfNodesToScore`` window from the rotating start index, is scored
on the feasible nodes it found, goes to the best one, and is assumed onto it before the next
pod is considered. Runs of pods the compiled loop models (:mod:`ksched.fused_loop`) are scheduled
there without Python between two pods; the others go through the object-level framework, one
cycle each, on the same arrays (both through :class:`ksched.driver.Driver`). Both give the
same placements.

A placed pod's Reserve and Permit plugins run before the next pod is considered (VolumeBinding
assumes its volume bindings there); when one fails the pod is unreserved and left unplaced. A
pod that uses something ksched does not model is left unplaced with a reason naming it, and the
batch goes on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import attrs
import numpy as np

from ksched.api import Pod
from ksched.cache import Assumer
from ksched.compiled_preemption import Failure
from ksched.driver import Driver, loop_skips_binding
from ksched.fused_loop import FusedLoop
from ksched.framework.diagnosis import SchedulingError
from ksched.framework.registry import Registry
from ksched.framework.runtime import Framework
from ksched.framework.schedule_one import ScheduleResult
from ksched.framework.tiebreak import TieBreaker
from ksched.inputs import (
    as_cluster,
    as_pods,
    check_flag,
    check_not_running,
    check_percentage,
    check_profile,
    check_progress,
    check_registry,
    check_seed,
    check_tie_break,
)
from ksched.kernels import schedule_loop as loop_kernels
from ksched.profile import Profile, default_profile
from ksched.state import ClusterState

if TYPE_CHECKING:
    from ksched.config import SchedulerConfig


class Placement(NamedTuple):
    """Where one pod went: ``node`` is ``None`` when it could not be placed, and ``reason``
    then gives the scheduler's diagnosis (``0/3 nodes are available: ...``)."""

    pod: Pod
    node: str | None
    reason: str = ""

    @property
    def scheduled(self) -> bool:
        return self.node is not None


@attrs.frozen(eq=False)
class Result:
    """The outcome of a batch: one placement per pod, in input order, and the new cluster."""

    placements: tuple[Placement, ...]
    state: ClusterState
    #: How many node evaluations (filter runs) the batch took, the ns-per-node denominator.
    nodes_evaluated: int = 0

    @property
    def scheduled(self) -> tuple[Placement, ...]:
        return tuple(p for p in self.placements if p.scheduled)

    @property
    def unschedulable(self) -> tuple[Placement, ...]:
        return tuple(p for p in self.placements if not p.scheduled)

    def node_of(self, pod_key: str) -> str | None:
        """The node of pod ``namespace/name`` (the last one of that key in the batch)."""
        found = [p.node for p in self.placements if p.pod.key == pod_key]
        if not found:
            raise KeyError(pod_key)
        return found[-1]

    def to_records(self) -> list[dict[str, Any]]:
        """JSON-ready rows: namespace, name, node, reason."""
        return [{"namespace": p.pod.namespace, "name": p.pod.name, "node": p.node,
                 "reason": p.reason} for p in self.placements]



def schedule_batch(cluster: ClusterState | Any, pods: Sequence[Pod] | Any, *,
                   profile: Profile | SchedulerConfig | None = None,
                   percentage_of_nodes_to_score: int | None = None,
                   tie_break: str = "round-robin",
                   seed: int | np.random.Generator | None = None,
                   progress: Any = None, fast_path: bool = True,
                   registry: Registry | None = None) -> Result:
    """Schedule ``pods`` in order on ``cluster``, each seeing the ones placed before it.

    Parameters
    ----------
    cluster : the cluster before the batch (never modified): a :class:`ClusterState`, or
        anything :func:`ksched.load_cluster` reads.
    pods : pending pods, in the order the scheduling queue would pop them: ``Pod`` records,
        Kubernetes dicts (camelCase, or the kubernetes client's snake_case ``to_dict()``),
        kubernetes-client ``V1Pod`` objects, a path (its pending pods), a single pod or any
        iterable of these (see :func:`ksched.inputs.as_pods`). Two pods with one
        namespace/name, or a pod already bound in ``cluster``, are refused.
    profile : a :class:`Profile` that schedules every pod (default: kube-scheduler v1.35's
        default profile), or a :class:`~ksched.config.SchedulerConfig` whose profiles take the
        pods naming them in ``spec.schedulerName``; a pod naming no profile is left unplaced,
        with the reason, as kube-scheduler ignores it. Profiles share the node walk's start
        index and the tie-break state, as they do upstream.
    percentage_of_nodes_to_score : the scheduler-wide value, an integer in [0, 100] (default:
        the configuration's, or 0, adaptive, as upstream's default). A profile's own value wins.
    tie_break : ``"round-robin"`` (deterministic) or ``"random"`` (uniform, from ``seed``).
    seed : ``None``, a non-negative integer or a ``numpy.random.Generator`` (random mode).
    progress : optional callable ``progress(n)`` told as pods are done (e.g. a tqdm ``update``).
    fast_path : run eligible pods through the compiled loop (``False``: the object-level
        framework for every pod; both give the same placements).
    registry : the plugins profiles may name (default: a configuration's own registry, else
        the in-tree plugins).

    Bad arguments raise :class:`~ksched.errors.KschedError` (``ArgumentError`` for options,
    ``InvalidObjectError`` for objects), naming the argument or the object and field.

    Examples
    --------
    >>> from ksched import ClusterState, Node, Pod, Container, schedule_batch
    >>> node = Node("n1", allocatable={"cpu": 2000, "memory": 2**32, "pods": 110})
    >>> pod = Pod("web", containers=[Container("c", requests={"cpu": 500})])
    >>> schedule_batch(ClusterState.from_records([node]), [pod]).placements[0].node
    'n1'
    """
    options = Options.of(profile, percentage_of_nodes_to_score, tie_break, seed, registry)
    progress, fast_path = check_progress(progress), check_flag(fast_path, "fast_path")
    cluster = as_cluster(cluster)
    pods = as_pods(pods)
    check_not_running(pods, cluster)
    batch = _Batch(options.route, cluster, pods, options.percentage, options.tie_breaker(),
                   progress)
    batch.run(fast_path)
    return Result(tuple(batch.placements), batch.assumer.frozen(),
                  nodes_evaluated=batch.driver.counters.nodes_evaluated)


@attrs.frozen(eq=False)
class Options:
    """``schedule_batch``'s options, checked, with the frameworks of the profiles built
    (``explain`` takes the same)."""

    #: The framework of a ``spec.schedulerName`` (``None``: no such profile).
    route: Callable[[str], Framework | None]
    #: The scheduler-wide ``percentageOfNodesToScore`` (0: adaptive).
    percentage: int
    tie_break: str
    seed: int | np.random.Generator | None

    @classmethod
    def of(cls, profile: Any, percentage: Any, tie_break: Any, seed: Any,
           registry: Any) -> Options:
        """Check the options and build the frameworks (``profile.NewMap``)."""
        profile, percentage = check_profile(profile), check_percentage(percentage)
        tie_break, seed = check_tie_break(tie_break), check_seed(seed)
        registry = check_registry(registry)
        if isinstance(profile, Profile) or profile is None:
            only = Framework(profile or default_profile(), registry)
            return cls(lambda name: only, percentage or 0, tie_break, seed)
        frameworks = {p.scheduler_name: Framework(p, registry or profile.registry)
                      for p in profile.profiles}
        if percentage is None:
            percentage = profile.percentage_of_nodes_to_score
        return cls(frameworks.get, percentage or 0, tie_break, seed)

    def tie_breaker(self) -> TieBreaker:
        """A fresh tie-break state for one batch."""
        return TieBreaker(self.tie_break, self.seed)


def no_profile_reason(pod: Pod) -> str:
    return f'no scheduler profile named "{pod.scheduler_name}": the pod is not scheduled'


class _Batch:
    """One ``schedule_batch`` call: its pods, their placements so far, and the driver shared
    by both paths and every profile (the cache, the node walk's start index and the
    tie-break state)."""

    def __init__(self, route: Callable[[str], Framework | None], cluster: ClusterState,
                 pods: Sequence[Pod], percentage: int, tie_breaker: TieBreaker,
                 progress: Any) -> None:
        self.pods = list(pods)
        self.frameworks = [route(p.scheduler_name) for p in self.pods]
        self.progress = progress
        tie_breaker.reserve(len(self.pods))
        self.driver = Driver(Assumer(cluster, self.pods), tie_breaker, percentage,
                             pending=self.pods)
        self.assumer = self.driver.assumer
        self.placements: list[Placement] = []
        #: The diagnosis of each (profile, pod class) latest failure in the compiled loop.
        self.failure_messages: dict[tuple[int, int], str] = {}

    def _done(self, count: int) -> None:
        if self.progress is not None:
            self.progress(count)

    def run(self, fast_path: bool) -> None:
        """Runs of consecutive pods of one profile that the compiled loop models go through
        it; every other pod through its profile's framework, one cycle each."""
        classes = np.full(len(self.pods), -1, dtype=np.int64)
        if fast_path:
            # The loop leaves out the binding cycle but the Reserve its pods need: only
            # profiles without Permit plugins (asked once per profile).
            skips = {id(f): f is not None and loop_skips_binding(f)
                     for f in {id(f): f for f in self.frameworks}.values()}
            for i, (pod, framework) in enumerate(zip(self.pods, self.frameworks)):
                fast = self.driver.fast_path(framework)
                if fast is not None and skips[id(framework)]:
                    classes[i] = _class_or_minus_one(fast.class_of(pod, self.assumer.state))
        begin = 0
        while begin < len(self.pods):
            framework, looped = self.frameworks[begin], classes[begin] >= 0
            end = begin + 1
            while (end < len(self.pods) and self.frameworks[end] is framework
                   and (classes[end] >= 0) == looped and looped):
                end += 1
            if looped:
                self._run_loop(self.driver.fast_paths[id(framework)], classes[begin:end], begin)
            else:
                self._run_framework(begin, framework)
            begin = end

    def _run_framework(self, index: int, framework: Framework | None) -> None:
        """One pod through the object-level framework."""
        pod = self.pods[index]
        if framework is None:
            self.placements.append(Placement(pod, None, no_profile_reason(pod)))
        else:
            try:
                outcome = self.driver.framework_cycle(framework, pod, bind=True)
            except SchedulingError as exc:
                self.placements.append(Placement(pod, None, str(exc)))
            else:
                self.placements.append(self._placement(pod, outcome))
        self._done(1)

    def _placement(self, pod: Pod, outcome: ScheduleResult | Failure) -> Placement:
        """Where a framework cycle (with its Reserve and Permit) put the pod, or why not."""
        if isinstance(outcome, Failure) or outcome.node is None:
            return Placement(pod, None, outcome.message)
        return Placement(pod, self.assumer.state.node_names[outcome.node])

    def _run_loop(self, fast: FusedLoop, classes: np.ndarray, offset: int) -> None:
        out_node = np.zeros(len(classes), dtype=np.int64)
        out_start = np.zeros(len(classes), dtype=np.int64)
        messages = self.failure_messages
        done = 0
        while done < len(classes):
            stop = self.driver.run_loop(fast, classes, done, out_node, out_start)
            for k in range(done, stop):
                pod, node = self.pods[offset + k], int(out_node[k])
                if node >= 0:
                    self.driver.loop_placed(fast, pod, node, int(classes[k]))
                    self.placements.append(Placement(pod, self.assumer.state.node_names[node]))
                    continue
                key = (id(fast), int(classes[k]))
                if node == loop_kernels.NEW_FAILURE:
                    messages[key] = self.driver.diagnose(fast.framework, pod,
                                                         int(out_start[k]))
                self.placements.append(Placement(pod, None, messages[key]))
            self._done(stop - done)
            done = stop


def _class_or_minus_one(value: int | None) -> int:
    return -1 if value is None else value


__all__ = ["schedule_batch", "Result", "Placement", "Assumer", "Options"]
