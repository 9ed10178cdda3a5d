"""``explain``: why a pod would (not) land on each node, with every plugin's numbers."""

from __future__ import annotations

from typing import Any

import attrs

from ksched.api import Pod
from ksched.engine import Assumer
from ksched.framework.runtime import Framework
from ksched.profile import Profile, default_profile
from ksched.state import ClusterState


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
    pod: Pod
    chosen: str | None
    nodes: tuple[NodeExplanation, ...]
    max_nodes: tuple[str, ...]
    message: str
    pre_filter_skipped: frozenset[str]
    pre_score_skipped: frozenset[str]

    @property
    def feasible(self) -> tuple[str, ...]:
        return tuple(n.node for n in self.nodes if n.feasible)

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self, value_serializer=lambda _, __, v: (
            sorted(v) if isinstance(v, frozenset) else v), filter=lambda a, _: a.name != "pod") | {
            "pod": self.pod.key}


def explain(cluster: ClusterState, pod: Pod, *, profile: Profile | None = None,
            percentage_of_nodes_to_score: int = 100) -> Explanation:
    """Run one scheduling cycle for ``pod`` through the object-level framework and report
    the feasible nodes, the failing plugin and reasons per other node, and every plugin's raw,
    normalised and weighted score per feasible node. By default every node is evaluated
    (``percentage_of_nodes_to_score=100``)."""
    state = Assumer(cluster, [pod]).state
    outcome = Framework(profile or default_profile()).schedule_one(
        state, pod, percentage_of_nodes_to_score=percentage_of_nodes_to_score,
        always_score=True)
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
    chosen = state.node_names[outcome.node] if outcome.node is not None else None
    return Explanation(pod, chosen, tuple(rows),
                       tuple(state.node_names[i] for i in outcome.max_nodes), outcome.message,
                       outcome.pre_filter_skipped, outcome.pre_score_skipped)
