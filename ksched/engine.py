"""``schedule_batch``: place pending pods one after another, as kube-scheduler's cycle would.

Each pod walks the ``percentageOfNodesToScore`` window from the rotating start index, is scored
on the feasible nodes it found, goes to the best one, and is assumed onto it before the next
pod is considered. Runs of pods the compiled loop models (:mod:`ksched.fast`) are scheduled
there without Python between two pods; the others go through the object-level framework, one
cycle each, on the same arrays. Both give the same placements.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import attrs
import numpy as np

from ksched.api import Pod
from ksched.constants import PODS
from ksched.fast import FastPath, supports
from ksched.framework.runtime import Framework, SchedulingError
from ksched.kernels import schedule_loop as loop_kernels
from ksched.framework.tiebreak import TieBreaker
from ksched.profile import Profile, default_profile
from ksched.resources import node_info_non_zero, pod_requests
from ksched.state import BoundPods, ClusterState, host_ports


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


class Assumer:
    """Adds placed pods to a private, writable copy of a state (``Cache.AssumePod``)."""

    def __init__(self, state: ClusterState, pending: Iterable[Pod]) -> None:
        pending = list(pending)
        resources = {name for pod in pending for c in pod.containers + pod.init_containers
                     for name in c.requests} | {name for pod in pending for name in pod.overhead}
        ports = {p for pod in pending for p in host_ports(pod)}
        state = state.widened(resources=sorted(resources), ports=sorted(ports))
        self.state = attrs.evolve(state, requested=state.requested.copy(),
                                  nonzero_requested=state.nonzero_requested.copy(),
                                  port_count=state.port_count.copy())
        self._log = list(self.state.pods)
        self._pod_node = np.empty(max(2 * len(self._log), 1024), dtype=np.int64)
        self._pod_node[:len(self._log)] = self.state.pod_node
        self._affinity_pods = list(self.state.affinity_pods)
        self._columns = {name: j for j, name in enumerate(self.state.resource_names)}

    def assume(self, pod: Pod, node: int) -> None:
        """Account ``pod`` on node row ``node``, as ``NodeInfo.AddPod`` does."""
        state = self.state
        requests = pod_requests(pod)
        for name, amount in requests.items():
            column = self._columns.get(name)
            if column is not None and name != PODS:
                state.requested[node, column] += amount
        state.requested[node, self._columns[PODS]] += 1
        state.nonzero_requested[node] += node_info_non_zero(pod, requests)
        for port in set(host_ports(pod)):
            state.port_count[node, state.port_keys.index(port)] += 1
        self.record(pod, node)
        self.sync()

    def record(self, pod: Pod, node: int) -> None:
        """Note a pod whose resources the compiled loop has already added to the arrays."""
        count = len(self._log)
        if pod.has_pod_affinity:
            self._affinity_pods.append(count)
        self._log.append((pod, self.state.node_names[node]))
        if count == len(self._pod_node):
            self._pod_node = np.concatenate([self._pod_node, np.empty_like(self._pod_node)])
        self._pod_node[count] = node

    def sync(self) -> None:
        """Bring the state's pod list up to date with the recorded pods (O(1): views)."""
        count = len(self._log)
        if count != len(self.state.pods):
            self.state = attrs.evolve(self.state, pods=BoundPods(self._log, count),
                                      pod_node=self._pod_node[:count],
                                      affinity_pods=tuple(self._affinity_pods))

    def frozen(self) -> ClusterState:
        """The final state, its arrays made read-only."""
        self.sync()
        self.state = attrs.evolve(self.state, pod_node=self.state.pod_node.copy())
        for array in (self.state.requested, self.state.nonzero_requested, self.state.port_count,
                      self.state.pod_node):
            array.flags.writeable = False
        return self.state


def schedule_batch(cluster: ClusterState, pods: Sequence[Pod], *, profile: Profile | None = None,
                   percentage_of_nodes_to_score: int | None = None,
                   tie_break: str = "round-robin",
                   seed: int | np.random.Generator | None = None,
                   progress: Any = None, fast_path: bool = True) -> Result:
    """Schedule ``pods`` in order on ``cluster``, each seeing the ones placed before it.

    Parameters
    ----------
    cluster : the cluster before the batch (never modified).
    pods : pending pods, in the order the scheduling queue would pop them.
    profile : the scheduler profile (default: kube-scheduler v1.35's default profile).
    percentage_of_nodes_to_score : the scheduler-wide value; ``None`` or 0 is adaptive, as
        upstream's default. A profile's own value wins.
    tie_break : ``"round-robin"`` (deterministic) or ``"random"`` (uniform, from ``seed``).
    progress : optional callable ``progress(n)`` told as pods are done (e.g. a tqdm ``update``).
    fast_path : run eligible pods through the compiled loop (``False``: the object-level
        framework for every pod; both give the same placements).

    Examples
    --------
    >>> from ksched import ClusterState, Node, Pod, Container, schedule_batch
    >>> node = Node("n1", allocatable={"cpu": 2000, "memory": 2**32, "pods": 110})
    >>> pod = Pod("web", containers=[Container("c", requests={"cpu": 500})])
    >>> schedule_batch(ClusterState.from_records([node]), [pod]).placements[0].node
    'n1'
    """
    framework = Framework(profile or default_profile())
    batch = _Batch(framework, cluster, pods, percentage_of_nodes_to_score or 0,
                   TieBreaker(tie_break, seed), progress)
    if fast_path and supports(framework):
        batch.run_with_fast_path()
    else:
        batch.run_framework(0, len(pods))
    return Result(tuple(batch.placements), batch.assumer.frozen(),
                  nodes_evaluated=int(batch.counters[4]))


class _Batch:
    """The running state of one ``schedule_batch`` call, shared by both paths."""

    def __init__(self, framework: Framework, cluster: ClusterState, pods: Sequence[Pod],
                 percentage: int, tie_breaker: TieBreaker, progress: Any) -> None:
        own = framework.profile.percentage_of_nodes_to_score
        self.framework, self.pods = framework, list(pods)
        self.percentage = own if own is not None else percentage
        self.tie_breaker, self.progress = tie_breaker, progress
        tie_breaker.reserve(len(self.pods))
        self.assumer = Assumer(cluster, self.pods)
        self.placements: list[Placement] = []
        #: The diagnosis of each pod class's latest failure in the compiled loop.
        self.failure_messages: dict[int, str] = {}
        #: nextStartNodeIndex, round-robin index, placements so far, next random draw,
        #: nodes evaluated so far.
        self.counters = np.zeros(5, dtype=np.int64)

    def _sync_tie_breaker(self, to_counters: bool) -> None:
        tb = self.tie_breaker
        if to_counters:
            self.counters[1], self.counters[3] = tb.last_node_index, tb.next_draw
        else:
            tb.last_node_index, tb.next_draw = int(self.counters[1]), int(self.counters[3])

    def run_framework(self, begin: int, end: int, fast: FastPath | None = None) -> None:
        """Pods ``begin..end`` through the object-level framework, one cycle each."""
        self._sync_tie_breaker(to_counters=False)
        for pod in self.pods[begin:end]:
            self.assumer.sync()
            try:
                outcome = self.framework.schedule_one(
                    self.assumer.state, pod, next_start_index=int(self.counters[0]),
                    percentage_of_nodes_to_score=self.percentage,
                    tie_breaker=self.tie_breaker)
            except SchedulingError as exc:
                self.placements.append(Placement(pod, None, str(exc)))
                continue
            self.counters[0] = outcome.next_start_index
            self.counters[4] += len(outcome.evaluated)
            if outcome.node is None:
                self.placements.append(Placement(pod, None, outcome.message))
            else:
                self.assumer.assume(pod, outcome.node)
                self.counters[2] += 1
                if fast is not None:
                    fast.touch(outcome.node)
                self.placements.append(Placement(pod, self.assumer.state.node_names[outcome.node]))
            if self.progress is not None:
                self.progress(1)
        self._sync_tie_breaker(to_counters=True)

    def run_with_fast_path(self) -> None:
        """Runs of loop-eligible pods through the compiled loop, the others one by one."""
        fast = FastPath(self.framework, self.assumer.state)
        classes = np.array([_class_or_minus_one(fast.class_of(p, self.assumer.state))
                            for p in self.pods], dtype=np.int64)
        self._sync_tie_breaker(to_counters=True)
        begin = 0
        while begin < len(self.pods):
            end = begin
            while end < len(self.pods) and (classes[end] >= 0) == (classes[begin] >= 0):
                end += 1
            if classes[begin] < 0:
                self.run_framework(begin, end, fast)
                if self.assumer.state.affinity_pods:  # later pods must now see pod affinity
                    classes[end:] = -1
            else:
                self._run_loop(fast, classes[begin:end], begin)
            begin = end

    def _run_loop(self, fast: FastPath, classes: np.ndarray, offset: int) -> None:
        out_node = np.zeros(len(classes), dtype=np.int64)
        out_start = np.zeros(len(classes), dtype=np.int64)
        messages = self.failure_messages
        done = 0
        while done < len(classes):
            stop = fast.run(self.assumer.state, classes, done, self.percentage,
                            self.tie_breaker.code, self.tie_breaker.draws, self.counters,
                            out_node, out_start)
            for k in range(done, stop):
                pod, node = self.pods[offset + k], int(out_node[k])
                if node >= 0:
                    self.assumer.record(pod, node)
                    self.placements.append(Placement(pod, self.assumer.state.node_names[node]))
                    continue
                if node == loop_kernels.NEW_FAILURE:
                    messages[int(classes[k])] = self._diagnose(pod, int(out_start[k]))
                self.placements.append(Placement(pod, None, messages[int(classes[k])]))
            if self.progress is not None:
                self.progress(stop - done)
            done = stop
        self._sync_tie_breaker(to_counters=False)

    def _diagnose(self, pod: Pod, start: int) -> str:
        """The framework's wording of a failure the loop found (the state is unchanged by it)."""
        self.assumer.sync()
        outcome = self.framework.schedule_one(
            self.assumer.state, pod, next_start_index=start,
            percentage_of_nodes_to_score=self.percentage)
        if outcome.node is not None:
            raise AssertionError(f"compiled loop and framework disagree on {pod.key}")
        return outcome.message


def _class_or_minus_one(value: int | None) -> int:
    return -1 if value is None else value


__all__ = ["schedule_batch", "Result", "Placement", "Assumer"]
