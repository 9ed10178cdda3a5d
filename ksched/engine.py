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
from ksched.driver import Driver, held_reason, loop_skips_binding
from ksched.fused_loop import FusedLoop, Tallies
from ksched.framework.diagnosis import SchedulingError
from ksched.framework.registry import Registry
from ksched.framework.runtime import Framework
from ksched.framework.tiebreak import TieBreaker
from ksched.gc_pause import collector_paused
from ksched.inputs import (
    admitted,
    as_cluster,
    as_pod_table,
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
from ksched.node_table import EqualSequence
from ksched.pod_table import PodTable
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
    """The outcome of a batch, in input order, and the new cluster.

    The outcome is kept as columns: ``node_rows`` (int64 per pod: the node's row in
    ``state``, -1 when the pod was not placed) and ``reason_codes`` (int64 per pod: its
    reason in ``reasons``, whose first entry is ``""``); :attr:`placements` shows them as
    :class:`Placement` records, made on access.
    """

    #: The pending pods, in input order.
    pods: PodTable
    node_rows: np.ndarray
    reason_codes: np.ndarray
    #: The distinct reasons (``reasons[0] == ""``, the reason of a placed pod).
    reasons: tuple[str, ...]
    state: ClusterState
    #: How many node evaluations (filter runs) the batch took, the ns-per-node denominator.
    nodes_evaluated: int = 0
    #: Per pod, its cycle's node walk: int64[n_pods, 5], columns :data:`WALK_COLUMNS`
    #: (``nextStartNodeIndex`` when it began, nodes evaluated, feasible nodes, their top total
    #: and how many have it), -1 where there was no such number (no cycle; the top total of a
    #: lone feasible node, which upstream chooses without scoring).
    walks: np.ndarray | None = None

    def walk_columns(self) -> dict[str, list[int | None]]:
        """:attr:`walks` as columns named by :data:`WALK_COLUMNS` (``None`` for -1)."""
        walks = self.walks if self.walks is not None else np.full(
            (len(self.node_rows), len(WALK_COLUMNS)), -1, dtype=np.int64)
        return {name: [None if v < 0 else v for v in walks[:, k].tolist()]
                for k, name in enumerate(WALK_COLUMNS)}

    @property
    def placements(self) -> Placements:
        """One :class:`Placement` per pod, in input order (a sequence made on access)."""
        return Placements(self.pods, self.node_rows, self.reason_codes, self.reasons,
                          self.state.node_names)

    @property
    def scheduled(self) -> tuple[Placement, ...]:
        placements = self.placements
        return tuple(map(placements.__getitem__, np.flatnonzero(self.node_rows >= 0).tolist()))

    @property
    def unschedulable(self) -> tuple[Placement, ...]:
        placements = self.placements
        return tuple(map(placements.__getitem__, np.flatnonzero(self.node_rows < 0).tolist()))

    def node_of(self, pod_key: str) -> str | None:
        """The node of pod ``namespace/name`` (``None``: not placed)."""
        namespace, _, name = pod_key.partition("/")
        row = self.pods.row_of(namespace, name)
        if row is None:
            raise KeyError(pod_key)
        node = int(self.node_rows[row])
        return None if node < 0 else self.state.node_names[node]

    def to_columns(self) -> dict[str, list]:
        """The outcome as columns of equal length (``pandas.DataFrame(result.to_columns())``
        makes a table): namespace, name, node (``None``: not placed), reason."""
        nodes = np.full(len(self.node_rows), None, dtype=object)
        placed = np.flatnonzero(self.node_rows >= 0)
        nodes[placed] = list(map(self.state.node_names.__getitem__,
                                 self.node_rows[placed].tolist()))
        reasons = np.asarray(self.reasons, dtype=object)[self.reason_codes]
        return {"namespace": self.pods.namespace_column(), "name": list(self.pods.names),
                "node": nodes.tolist(), "reason": reasons.tolist()}

    def to_records(self) -> list[dict[str, Any]]:
        """JSON-ready rows: namespace, name, node, reason."""
        columns = self.to_columns()
        return [{"namespace": ns, "name": name, "node": node, "reason": reason}
                for ns, name, node, reason in zip(columns["namespace"], columns["name"],
                                                  columns["node"], columns["reason"])]


#: The columns of :attr:`Result.walks`, named as kube-scheduler's traces name them.
WALK_COLUMNS = ("start_index", "evaluated_nodes", "feasible_nodes", "max_score",
                "max_nodes_count")


class Placements(EqualSequence):
    """A batch's placements, made on access from its columns (equal to a sequence of
    :class:`Placement` records holding the same)."""

    __slots__ = ("_pods", "_rows", "_codes", "_reasons", "_names")

    def __init__(self, pods: PodTable, rows: np.ndarray, codes: np.ndarray,
                 reasons: tuple[str, ...], names: Sequence[str]) -> None:
        self._pods, self._rows, self._codes = pods, rows, codes
        self._reasons, self._names = reasons, names

    def __len__(self) -> int:
        return len(self._rows)

    def _item(self, index: int) -> Placement:
        row = int(self._rows[index])
        return Placement(self._pods[index], None if row < 0 else self._names[row],
                         self._reasons[self._codes[index]])

    def __repr__(self) -> str:
        return f"Placements({len(self)} pods, {int((self._rows >= 0).sum())} placed)"


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
        iterable of these (see :func:`ksched.inputs.as_pods`), or a
        :class:`~ksched.pod_table.PodTable` (what :func:`ksched.load_pods` returns): taken as
        it is, the batch then does no Python per pod but for pods the compiled loop does not
        take. Two pods with one namespace/name, or a pod already bound in ``cluster``, are
        refused.
    profile : a :class:`Profile` that schedules every pod (default: kube-scheduler v1.35's
        default profile), or a :class:`~ksched.config.SchedulerConfig` whose profiles take the
        pods naming them in ``spec.schedulerName``; a pod naming no profile is left unplaced,
        with the reason, as kube-scheduler ignores it. Profiles share the node walk's start
        index and the tie-break state, as they do upstream.
    percentage_of_nodes_to_score : the scheduler-wide value, an integer in [0, 100] (default:
        the configuration's, or 0, adaptive, as upstream's default). A profile's own value wins.
    tie_break : ``"round-robin"`` (deterministic), ``"random"`` (uniform, from ``seed``) or
        ``"heap"`` (kube-scheduler v1.35's own order: the top of its score heap over the
        feasible list in walk order; with the node walk, pod for pod what v1.35.4 does at
        parallelism 1).
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
    table = admitted(as_pod_table(pods), cluster)  # the cluster's PriorityClasses
    check_not_running(table, cluster)
    batch = _Batch(options.route, cluster, table, options.percentage, options.tie_breaker(),
                   progress)
    with collector_paused():  # a batch logs a pod per placement and makes no cycles
        batch.run(fast_path)
    return Result(table, _readonly(batch.node_rows), _readonly(batch.reason_codes),
                  tuple(batch.reasons), batch.assumer.frozen(),
                  nodes_evaluated=batch.driver.counters.nodes_evaluated,
                  walks=_readonly(batch.walks))


def _readonly(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


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
    """One ``schedule_batch`` call: its pods, their outcome so far (a node row and a reason
    code per pod), and the driver shared by both paths and every profile (the cache, the
    node walk's start index and the tie-break state). Pods are looked at per spec row of
    their table, not one by one."""

    def __init__(self, route: Callable[[str], Framework | None], cluster: ClusterState,
                 table: PodTable, percentage: int, tie_breaker: TieBreaker,
                 progress: Any) -> None:
        self.table = table
        #: Per spec row, the framework of its profile.
        self.frameworks = [route(p.scheduler_name) for p in table.specs]
        self.progress = progress
        tie_breaker.reserve(len(table))
        self.driver = Driver(Assumer(cluster, table.specs), tie_breaker, percentage,
                             pending=_counted_pods(table))
        self.assumer = self.driver.assumer
        self.node_rows = np.full(len(table), -1, dtype=np.int64)
        self.walks = np.full((len(table), len(WALK_COLUMNS)), -1, dtype=np.int64)
        self.reason_codes = np.zeros(len(table), dtype=np.int64)
        #: The distinct reasons, each its code.
        self.reasons: dict[str, int] = {"": 0}
        #: Per spec row, whether its pods have pod (anti-)affinity.
        self.affinity = np.array([p.has_pod_affinity for p in table.specs], dtype=np.bool_)
        #: The reason code of each (profile, pod class) latest failure in the compiled loop.
        self.failure_messages: dict[tuple[int, int], int] = {}
        #: Per pod, the reason code of a PreEnqueue plugin's hold (0: not held).
        self.held = self._held()

    def _held(self) -> np.ndarray:
        """Per pod, why its profile's PreEnqueue plugins keep it out of the queue (a reason
        code; 0: they do not): judged per spec row, but per pod for a row with claims."""
        table, state = self.table, self.assumer.state
        row_code = np.zeros(len(table.specs), dtype=np.int64)
        own: list[int] = []
        for row, (pod, framework) in enumerate(zip(table.specs, self.frameworks)):
            if framework is None:
                continue
            if pod.resource_claims or pod.claim_sources:
                own.append(row)
            else:
                reason = held_reason(framework, pod, state)
                row_code[row] = self._code(reason) if reason else 0
        held = row_code[table.spec]
        if own:
            lone = np.zeros(len(table.specs), dtype=np.bool_)
            lone[own] = True
            for i in np.flatnonzero(lone[table.spec]).tolist():
                reason = held_reason(self.frameworks[table.spec[i]], table[i], state)
                held[i] = self._code(reason) if reason else 0
        return held

    def _done(self, count: int) -> None:
        if self.progress is not None:
            self.progress(count)

    def _code(self, reason: str) -> int:
        return self.reasons.setdefault(reason, len(self.reasons))

    def classes(self, fast_path: bool) -> np.ndarray:
        """Each pod's class in its profile's compiled loop (-1: the framework): found per spec
        row, but per pod for a row whose class does not last (pods with claims)."""
        table, state = self.table, self.assumer.state
        row_class = np.full(len(table.specs), -1, dtype=np.int64)
        own: list[int] = []
        if fast_path:
            # The loop leaves out the binding cycle but the Reserve its pods need: only
            # profiles without Permit plugins (asked once per profile).
            skips = {id(f): f is not None and loop_skips_binding(f)
                     for f in {id(f): f for f in self.frameworks}.values()}
            for row, (pod, framework) in enumerate(zip(table.specs, self.frameworks)):
                fast = self.driver.fast_path(framework)
                if fast is None or not skips[id(framework)]:
                    continue
                if fast.lasting(pod):
                    row_class[row] = _class_or_minus_one(fast.class_of(pod, state))
                else:
                    own.append(row)
        classes = row_class[table.spec]
        classes[self.held > 0] = -1
        if own:
            lone = np.zeros(len(table.specs), dtype=np.bool_)
            lone[own] = True
            for i in np.flatnonzero(lone[table.spec] & (self.held == 0)).tolist():
                fast = self.driver.fast_path(self.frameworks[table.spec[i]])
                classes[i] = _class_or_minus_one(fast.class_of(table[i], state))
        return classes

    def run(self, fast_path: bool) -> None:
        """Runs of consecutive pods of one profile that the compiled loop models go through
        it; every other pod through its profile's framework, one cycle each."""
        table = self.table
        if not len(table):
            return
        classes = self.classes(fast_path)
        codes: dict[int, int] = {}
        row_framework = np.array([codes.setdefault(id(f), len(codes)) for f in self.frameworks],
                                 dtype=np.int64)
        framework = row_framework[table.spec]
        looped = classes >= 0
        # A run begins at a pod whose profile differs from the previous one's, and at every
        # pod the loop does not take or that follows one it does not take.
        begins = np.flatnonzero(np.concatenate([
            [True], (framework[1:] != framework[:-1]) | ~looped[1:] | ~looped[:-1]]))
        ends = np.append(begins[1:], len(table))
        for begin, end in zip(begins.tolist(), ends.tolist()):
            chosen = self.frameworks[table.spec[begin]]
            if looped[begin]:
                self._run_loop(self.driver.fast_paths[id(chosen)], classes[begin:end], begin)
            else:
                self._run_framework(begin, chosen)

    def _run_framework(self, index: int, framework: Framework | None) -> None:
        """One pod through the object-level framework (none for a pod PreEnqueue holds)."""
        pod = self.table[index]
        if self.held[index]:
            self.reason_codes[index] = self.held[index]
        elif framework is None:
            self.reason_codes[index] = self._code(no_profile_reason(pod))
        else:
            self.walks[index, 0] = self.driver.counters.next_start_index
            try:
                outcome = self.driver.framework_cycle(framework, pod, bind=True)
            except SchedulingError as exc:
                self.reason_codes[index] = self._code(str(exc))
            else:
                if not isinstance(outcome, Failure):
                    self.walks[index, 1:] = _walk_of(outcome)
                if isinstance(outcome, Failure) or outcome.node is None:
                    self.reason_codes[index] = self._code(outcome.message)
                else:
                    self.node_rows[index] = outcome.node
        self._done(1)

    def _run_loop(self, fast: FusedLoop, classes: np.ndarray, offset: int) -> None:
        """A run of pods through the compiled loop; what it placed is recorded in bulk."""
        out_node = np.zeros(len(classes), dtype=np.int64)
        out_start = np.zeros(len(classes), dtype=np.int64)
        out_walk = np.empty((len(classes), len(WALK_COLUMNS) - 1), dtype=np.int64)
        tallies = Tallies(len(classes))
        table = self.table
        done = 0
        while done < len(classes):
            tallies.clear()
            stop = self.driver.run_loop(fast, classes, done, out_node, out_start, out_walk,
                                        tallies)
            self.walks[offset + done:offset + stop, 0] = out_start[done:stop]
            self.walks[offset + done:offset + stop, 1:] = out_walk[done:stop]
            tops = self.walks[offset + done:offset + stop, 3]
            scored = tops >= 0
            tops[scored] += fast.left_out_scores()[classes[done:stop][scored]]
            nodes = out_node[done:stop]
            self.node_rows[offset + done:offset + stop] = np.maximum(nodes, -1)
            placed = np.flatnonzero(nodes >= 0)
            rows = offset + done + placed
            self.driver.loop_placed_many(fast, table.entries(rows), nodes[placed],
                                         classes[done:stop][placed],
                                         self.affinity[table.spec[rows]])
            fast.tables.device_classes.reserve(self.assumer.claim_cache, table, rows,
                                               nodes[placed], classes[done:stop][placed])
            if len(placed) < stop - done:
                self._failed(fast, classes, nodes, done, stop, offset, out_start, tallies)
            self._done(stop - done)
            done = stop

    def _failed(self, fast: FusedLoop, classes: np.ndarray, nodes: np.ndarray, done: int,
                stop: int, offset: int, out_start: np.ndarray, tallies: Tallies) -> None:
        """The reasons of the pods of ``done..stop`` the loop did not place: a failure's
        tally worded (:class:`~ksched.loop_failures.FailureWording`), the latest one's of its class
        before this run for a failure it knew, and the framework's wording of a new failure
        the loop did not tally (the loop stops after one)."""
        messages, key_of = self.failure_messages, id(fast)
        failed = np.flatnonzero(nodes < 0)
        records = tallies.out_fail[done:stop][failed]
        failed_classes = classes[done:stop][failed]
        untallied = records < 0
        last = -1
        if nodes[-1] == loop_kernels.NEW_FAILURE and records[-1] < 0:
            last, untallied[-1] = stop - 1, False
        at = failed[untallied]
        for c in np.unique(failed_classes[untallied]).tolist():
            self.reason_codes[offset + done + at[failed_classes[untallied] == c]] = \
                messages[(key_of, c)]
        used = int(tallies.used[0])
        if used:
            codes = np.empty(used, dtype=np.int64)
            for f in range(used):
                c = int(tallies.rec_class[f])
                codes[f] = messages[(key_of, c)] = self._code(
                    fast.wording.message(c, *tallies.entries(f)))
            tallied = ~untallied
            if last >= 0:
                tallied[-1] = False
            self.reason_codes[offset + done + failed[tallied]] = codes[records[tallied]]
        if last >= 0:
            key = (key_of, int(classes[last]))
            messages[key] = self._code(self.driver.diagnose(
                fast.framework, self.table[offset + last], int(out_start[last])))
            self.reason_codes[offset + last] = messages[key]


def _counted_pods(table: PodTable) -> list[Pod]:
    """The pending pods the compiled loops read when they size their counts: one per spec row
    (pod-affinity keys), but every pod of a row whose pods mount volumes (who uses which
    claim or disk is counted per pod)."""
    has_volumes = np.array([bool(p.volumes) for p in table.specs], dtype=np.bool_)
    if not has_volumes.any():
        return list(table.specs)
    rows = np.flatnonzero(has_volumes[table.spec]).tolist()
    return [p for p, v in zip(table.specs, has_volumes) if not v] + \
        list(map(table.__getitem__, rows))


def _walk_of(outcome: Any) -> tuple[int, int, int, int]:
    """A framework cycle's walk (:data:`WALK_COLUMNS` but the start index)."""
    scored = len(outcome.totals) > 0 and len(outcome.feasible) > 1
    return (len(outcome.evaluated), len(outcome.feasible),
            int(outcome.totals.max()) if scored else -1,
            len(outcome.max_nodes) if scored else len(outcome.feasible))


def _class_or_minus_one(value: int | None) -> int:
    return -1 if value is None else value


__all__ = ["schedule_batch", "Result", "Placement", "Placements", "Assumer", "Options",
           "PodTable", "WALK_COLUMNS"]
