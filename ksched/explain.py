"""``explain``: why a pod would (not) land on each node, with every plugin's numbers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs
import numpy as np

from ksched.api import Pod
from ksched.cache import Assumer
from ksched.compiled_preemption import Failure
from ksched.driver import run_cycle
from ksched.engine import Options
from ksched.errors import ArgumentError, InvalidObjectError
from ksched.framework.registry import Registry
from ksched.framework.schedule_one import ScheduleResult
from ksched.inputs import admitted, as_cluster, as_pods, check_not_running
from ksched.profile import Profile
from ksched.state import ClusterState
from ksched.validation import go_quote

if TYPE_CHECKING:
    from ksched.config import SchedulerConfig


@attrs.frozen
class NodeExplanation:
    node: str
    feasible: bool
    #: The first Filter plugin that rejected the node, its status code and reasons.
    plugin: str = ""
    code: str = ""
    reasons: tuple[str, ...] = ()
    #: plugin -> (raw, normalized, weighted) score, for feasible nodes.
    scores: dict[str, tuple[int, int, int]] = attrs.field(factory=dict)
    total: int | None = None


@attrs.frozen
class Explanation:
    """One scheduling cycle of one pod, as :func:`explain` ran it.

    ``nodes`` has a row per node in the snapshot's order; the node walk fields say how the
    cycle went through them (``schedulePod`` / ``findNodesThatFitPod``): it began at
    ``start_index`` of the candidate list (the PreFilter result's nodes, or all), looked for
    ``num_nodes_to_find`` feasible nodes (``numFeasibleNodesToFind``) and judged
    ``nodes_evaluated`` of them; the next cycle would start at ``next_start_index``.
    """

    pod: Pod
    chosen: str | None
    nodes: tuple[NodeExplanation, ...]
    max_nodes: tuple[str, ...]
    message: str
    pre_filter_skipped: frozenset[str]
    pre_score_skipped: frozenset[str]
    #: The profile (``spec.schedulerName``) that ran the cycle.
    profile: str = ""
    #: The node walk: where it began (0: a batch's first cycle starts there), how many
    #: feasible nodes it looked for, how many nodes it judged (``evaluated``, in walk order),
    #: and where the next cycle would begin.
    start_index: int = 0
    num_nodes_to_find: int = 0
    nodes_evaluated: int = 0
    evaluated: tuple[str, ...] = ()
    next_start_index: int = 0
    #: The PreFilter result's node subset (sorted; ``None``: every node), and the PreFilter
    #: plugin that rejected the pod, with its code and reasons (``""`` when none did).
    pre_filter_nodes: tuple[str, ...] | None = None
    pre_filter_plugin: str = ""
    pre_filter_code: str = ""
    pre_filter_reasons: tuple[str, ...] = ()
    #: The diagnosis' ``UnschedulablePlugins`` (empty when the pod was placed, as upstream
    #: records them only on a FitError).
    unschedulable_plugins: frozenset[str] = frozenset()
    #: The pod went to its ``status.nominatedNodeName`` without a node walk.
    nominated_fast_path: bool = False
    #: Why ``chosen`` among the feasible nodes: alone, the only top total, or how the
    #: ``tie_break`` took it among the tied ones (``""`` when no node was chosen).
    choice: str = ""

    @property
    def feasible(self) -> tuple[str, ...]:
        return tuple(n.node for n in self.nodes if n.feasible)

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self, value_serializer=lambda _, __, v: (
            sorted(v) if isinstance(v, frozenset) else v), filter=lambda a, _: a.name != "pod") | {
            "pod": self.pod.key, "priority": self.pod.priority,
            "preemption_policy": self.pod.preemption_policy}


def explain(cluster: ClusterState | Any, pod: Pod | Any, *,
            profile: Profile | SchedulerConfig | None = None,
            percentage_of_nodes_to_score: int | None = None,
            tie_break: str = "round-robin", seed: int | np.random.Generator | None = None,
            registry: Registry | None = None) -> Explanation:
    """Run one scheduling cycle for ``pod`` through the object-level framework and report
    the feasible nodes, the failing plugin and reasons per other node, every plugin's raw,
    normalised and weighted score per feasible node, the node walk, the PreFilter result and
    the unschedulable plugins.

    Takes what :func:`~ksched.engine.schedule_batch` takes, with the same defaults, and
    chooses the node it would choose for this pod alone: ``cluster`` a ``ClusterState`` or
    anything :func:`ksched.load_cluster` reads; ``pod`` one pod in any form
    :func:`ksched.inputs.as_pods` accepts; ``profile`` a :class:`Profile` or a loaded
    :class:`~ksched.config.SchedulerConfig` (the pod's ``spec.schedulerName`` picks the
    profile: naming none is an error); ``registry`` the plugins; ``percentage_of_nodes_to_score``
    ``None`` (the configuration's value, else adaptive) or 0-100: nodes the walk does not
    reach are reported as ``not evaluated`` (pass 100 to judge every node). A pod that uses
    something ksched does not model gets no node and, in ``message``, the reason naming it.

    Examples
    --------
    >>> from ksched import ClusterState, Container, Node, Pod, explain
    >>> nodes = [Node(n, allocatable={"cpu": cpu, "memory": 2**32, "pods": 110})
    ...          for n, cpu in [("small", 500), ("big", 4000)]]
    >>> why = explain(ClusterState.from_records(nodes),
    ...               Pod("web", containers=[Container("c", requests={"cpu": 1000})]))
    >>> why.chosen, why.nodes[0].reasons, why.nodes_evaluated
    ('big', ('Insufficient cpu',), 2)
    """
    options = Options.of(profile, percentage_of_nodes_to_score, tie_break, seed, registry)
    cluster = as_cluster(cluster)
    pods = as_pods(pod, where="pod")
    if len(pods) != 1:
        raise ArgumentError(f"pod: explain takes one pod, got {len(pods)}")
    pods = admitted(pods, cluster)  # its PriorityClass's value, as schedule_batch gives it
    pod = pods[0]
    check_not_running(pods, cluster)
    framework = options.route(pod.scheduler_name)
    if framework is None:
        raise InvalidObjectError(f"pod {pod.key}", "spec.schedulerName",
                                 f"no scheduler profile named {go_quote(pod.scheduler_name)}")
    state = Assumer(cluster, [pod]).state
    tie_breaker = options.tie_breaker()
    tie_breaker.reserve(1)
    outcome = run_cycle(framework, state, pod, percentage_of_nodes_to_score=options.percentage,
                        tie_breaker=tie_breaker, always_score=True)
    if isinstance(outcome, Failure):
        return _unsupported(state, pod, framework.profile.scheduler_name, outcome)
    return attrs.evolve(_explanation(state, pod, framework.profile.scheduler_name, outcome),
                        choice=_choice(outcome, options.tie_break))


def _unsupported(state: ClusterState, pod: Pod, profile: str,
                 failure: Failure) -> Explanation:
    """A pod using what ksched does not model: no node judged, the reason as
    ``schedule_batch`` gives it."""
    nodes = tuple(NodeExplanation(state.node_names[i], False, reasons=("not evaluated",))
                  for i in state.tree_order)
    return Explanation(pod, None, nodes, (), failure.message, frozenset(), frozenset(),
                       profile=profile)


def _explanation(state: ClusterState, pod: Pod, profile: str,
                 outcome: ScheduleResult) -> Explanation:
    """The cycle's outcome, by node name."""
    names = state.node_names
    rejection = outcome.pre_filter_status
    return Explanation(
        pod, names[outcome.node] if outcome.node is not None else None,
        _node_rows(state, outcome), tuple(names[i] for i in outcome.max_nodes),
        outcome.message, outcome.pre_filter_skipped, outcome.pre_score_skipped,
        profile=profile, start_index=0,
        num_nodes_to_find=outcome.num_nodes_to_find,
        nodes_evaluated=len(outcome.evaluated),
        evaluated=tuple(names[i] for i in outcome.evaluated.tolist()),
        next_start_index=outcome.next_start_index,
        pre_filter_nodes=(None if outcome.pre_filter_nodes is None
                          else tuple(sorted(outcome.pre_filter_nodes))),
        pre_filter_plugin=rejection.plugin if rejection is not None else "",
        pre_filter_code=rejection.code.upstream_name if rejection is not None else "",
        pre_filter_reasons=rejection.reasons if rejection is not None else (),
        unschedulable_plugins=(frozenset() if outcome.node is not None
                               else outcome.unschedulable_plugins),
        nominated_fast_path=outcome.nominated_fast_path)


def _choice(outcome: ScheduleResult, tie_break: str) -> str:
    """Why the chosen node won (``selectHost``; v1.35's score heap in ``schedulePod``)."""
    if outcome.node is None:
        return ""
    feasible = outcome.feasible.tolist()
    if len(feasible) == 1:
        return "the only feasible node (chosen without scoring, as upstream)"
    top, ties = int(outcome.totals.max()), len(outcome.max_nodes)
    if ties == 1:
        return f"the only node with the top total score {top}"
    how = {"round-robin": "taken by the round-robin index (kept across pods) among",
           "random": "drawn at random among",
           "heap": (f"the top of the score heap (kube-scheduler v1.35's container/heap over "
                    f"the {len(feasible)} feasible nodes in walk order, where it is "
                    f"{feasible.index(outcome.node) + 1}.) among")}[tie_break]
    return f"{how} the {ties} nodes tied at the top total score {top}"


def _node_rows(state: ClusterState, outcome: ScheduleResult) -> tuple[NodeExplanation, ...]:
    """Per node in snapshot order: its scores if feasible, else its status."""
    position = {int(n): i for i, n in enumerate(outcome.feasible)}
    rows = []
    for index in state.tree_order:
        name = state.node_names[index]
        if index in position:
            i = position[index]
            scores = {plugin: (int(outcome.raw_scores[plugin][i]),
                               int(outcome.normalized_scores[plugin][i]),
                               int(outcome.scores[plugin][i])) for plugin in outcome.scores}
            total = int(outcome.totals[i]) if len(outcome.totals) else None
            rows.append(NodeExplanation(name, True, scores=scores, total=total))
        elif index in outcome.failures:
            status = outcome.failures[index]
            rows.append(NodeExplanation(name, False, status.plugin, status.code.upstream_name,
                                        status.reasons))
        else:
            rows.append(NodeExplanation(name, False, "", "", ("not evaluated",)))
    return tuple(rows)
