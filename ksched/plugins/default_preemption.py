"""DefaultPreemption (``plugins/defaultpreemption/default_preemption.go``).

The PostFilter plugin: when no node fits, it looks for a node where evicting lower-priority
pods makes room, evicts the fewest and least important, and nominates that node. The flow
(candidates, dry run, choice of node) is :mod:`ksched.framework.preemption`'s ``Evaluator``;
this module holds the plugin's own rules, its ``preemption.Interface`` methods: the walk's
offset and length, eligibility, victims on one node (with PDBs), the node choice's criteria.
The compiled dry run of these rules is :mod:`ksched.compiled_preemption`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import attrs
import numpy as np

from ksched.api import Pod
from ksched.framework.interfaces import Cycle, Handle, PostFilterResult
from ksched.framework.preemption import (
    NO_VICTIMS,
    Candidate,
    Evaluator,
    ScoreFunc,
    Victims,
    sort_by_importance,
)
from ksched.state import ClusterState
from ksched.status import SUCCESS, Code, Status, unresolvable

NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."


@attrs.frozen
class DefaultPreemptionArgs:
    """``DefaultPreemptionArgs``: how many nodes the dry run must yield as candidates."""

    min_candidate_nodes_percentage: int = 10
    min_candidate_nodes_absolute: int = 100


def _args(raw: Any) -> DefaultPreemptionArgs:
    if isinstance(raw, DefaultPreemptionArgs):
        return raw
    if isinstance(raw, dict):
        return DefaultPreemptionArgs(raw.get("minCandidateNodesPercentage", 10),
                                     raw.get("minCandidateNodesAbsolute", 100))
    return DefaultPreemptionArgs()


def split_by_pdb_violation(pods: Sequence[Pod], pdbs: Sequence[Any]) -> tuple[list[Pod],
                                                                              list[Pod]]:
    """``filterPodsWithPDBViolation``: walking the pods in order, each matching PDB's
    ``disruptionsAllowed`` is used up; a pod that takes one below 0 is violating."""
    allowed = [pdb.disruptions_allowed for pdb in pdbs]
    violating, non_violating = [], []
    for pod in pods:
        violated = False
        for i, pdb in enumerate(pdbs):
            if pdb.matches(pod) and pod.name not in pdb.disrupted_pods:
                allowed[i] -= 1
                violated |= allowed[i] < 0
        (violating if violated else non_violating).append(pod)
    return violating, non_violating


@attrs.frozen
class DefaultPreemption:
    NAME: ClassVar[str] = "DefaultPreemption"
    args: DefaultPreemptionArgs = attrs.field(factory=DefaultPreemptionArgs, converter=_args)

    def pre_enqueue(self, pod: Pod) -> Status:
        """With async preemption a pod waits for its own preemption to finish; ksched's
        preemption completes within the cycle, so the pod is never held here."""
        return SUCCESS

    def post_filter(self, cycle: Cycle, diagnosis: Any,
                    handle: Handle) -> tuple[PostFilterResult | None, Status]:
        """``PostFilter``: the Evaluator's verdict, its message prefixed with "preemption: "."""
        result, status = Evaluator(self, handle).preempt(cycle, diagnosis)
        if status.message:
            status = Status(status.code, (f"preemption: {status.message}",), status.plugin)
        return result, status

    # ------------------------------------------------------------------ the plugin's rules

    def num_candidates(self, num_nodes: int) -> int:
        """``calculateNumCandidates``: a percentage of the potential nodes, at least the
        absolute minimum, at most all of them."""
        n = num_nodes * self.args.min_candidate_nodes_percentage // 100
        return min(max(n, self.args.min_candidate_nodes_absolute), num_nodes)

    def get_offset_and_num_candidates(self, num_nodes: int,
                                      rng: np.random.Generator | None) -> tuple[int, int]:
        """``GetOffsetAndNumCandidates``: a random start among the ``num_nodes`` potential
        nodes (0 without a random source), and :meth:`num_candidates`."""
        wanted = self.num_candidates(num_nodes)
        return (int(rng.integers(num_nodes)) if rng is not None else 0), wanted

    def candidates_to_victims_map(self, candidates: Sequence[Candidate]
                                  ) -> dict[str, Victims]:
        """``CandidatesToVictimsMap``: each candidate's victims by its node's name."""
        return {c.node: Victims(c.victims, c.num_pdb_violations) for c in candidates}

    def ordered_score_funcs(self, nodes_to_victims: Mapping[str, Victims]
                            ) -> list[ScoreFunc] | None:
        """``OrderedScoreFuncs``: none, so ``pickOneNodeForPreemption``'s criteria choose."""
        return None

    def pod_eligible_to_preempt_others(self, pod: Pod, state: ClusterState,
                                       nominated_status: Status | None) -> tuple[bool, str]:
        """``PodEligibleToPreemptOthers``: not with preemptionPolicy Never, and not while a
        victim of its earlier preemption is still terminating on its nominated node."""
        if getattr(pod, "preemption_policy", "") == "Never":
            return False, NOT_ELIGIBLE_NEVER
        node = state.node_index.get(getattr(pod, "nominated_node_name", "") or "")
        if node is not None:
            if nominated_status is not None and \
                    nominated_status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return True, ""
            for other in state.pods_on(node):
                if other.priority < pod.priority and other.deleting:
                    return False, NOT_ELIGIBLE_TERMINATING
        return True, ""

    def select_victims_on_node(self, cycle: Cycle, node: int, handle: Handle,
                               skipped: frozenset[str]) -> tuple[list[Pod], int, Status]:
        """``SelectVictimsOnNode``: remove every lower-priority pod; if the pod then fits,
        add them back one by one, most important first (PDB-violating ones before the
        others), keeping out only those without which it no longer fits."""
        state, pod, framework = cycle.state, cycle.pod, handle.framework
        nominated = handle.nominated.get(node, ())
        rows = [r for r in handle.pods_of(state, node) if state.pods[r].priority < pod.priority]
        if not rows:
            return [], 0, unresolvable(NO_VICTIMS)
        removed = set(rows)

        def fits() -> Status:
            return framework.filter_node_with_nominated(state, pod, node, nominated, skipped,
                                                        removed=sorted(removed), cycle=cycle)

        status = fits()
        if not status.is_success:
            return [], 0, status
        row_of = {id(state.pods[r]): r for r in rows}
        ordered = sort_by_importance([state.pods[r] for r in rows])
        violating, non_violating = split_by_pdb_violation(ordered, handle.pdbs)
        victims, num_violating = [], 0
        for group, counts in ((violating, True), (non_violating, False)):
            for victim in group:
                removed.discard(row_of[id(victim)])
                if not fits().is_success:
                    removed.add(row_of[id(victim)])
                    victims.append(victim)
                    num_violating += counts
        if violating and non_violating:
            victims = sort_by_importance(victims)
        return victims, num_violating, Status()


__all__ = ["DefaultPreemption", "DefaultPreemptionArgs", "NO_VICTIMS", "split_by_pdb_violation"]
