"""The preemption Evaluator (``pkg/scheduler/framework/preemption/preemption.go``).

``Preempt``: check the pod may preempt, dry-run victim selection on the nodes that failed
with a resolvable status, pick one candidate node and nominate it. The plugin (DefaultPreemption)
supplies eligibility, the number of candidates and ``SelectVictimsOnNode``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from ksched.api import Pod
from ksched.framework.interfaces import Cycle, Handle, PostFilterResult
from ksched.status import Code, Status, fit_error_message, unresolvable, unschedulable

NOT_HELPFUL = "Preemption is not helpful for scheduling"
_SHIFT = 2**31  # MaxInt32 + 1: makes every priority non-negative before summing


@attrs.frozen
class Candidate:
    """A node where preemption would work, with its victims (most important first)."""

    node: str
    victims: tuple[Pod, ...]
    num_pdb_violations: int


class Evaluator:
    """One preemption attempt for one pod (``Evaluator.Preempt``)."""

    def __init__(self, plugin: Any, handle: Handle) -> None:
        self.plugin, self.handle = plugin, handle

    def preempt(self, cycle: Cycle, diagnosis: Any) -> tuple[PostFilterResult | None, Status]:
        """``Preempt``: ``(None, Unschedulable)`` when the pod may not preempt;
        ``("" nominated, Unschedulable)`` when no node helps; else the chosen node."""
        state, pod = cycle.state, cycle.pod
        if not cycle.data:  # the cycle state PreFilter left (the dry run reuses it)
            self.handle.framework.run_pre_filter(cycle)
        nominated_row = state.node_index.get(getattr(pod, "nominated_node_name", "") or "")
        nominated_status = diagnosis.status_of(nominated_row) if nominated_row is not None \
            else None
        ok, reason = self.plugin.eligible(pod, state, nominated_status)
        if not ok:
            return None, unschedulable(reason)
        potential = [int(n) for n in state.tree_order
                     if diagnosis.status_of(int(n)).code == Code.UNSCHEDULABLE]
        potential_names = tuple(sorted(state.node_names[n] for n in potential))
        candidates, failures = self.find_candidates(cycle, potential, diagnosis)
        if not candidates:
            message = fit_error_message(state.num_nodes, failures.values(),
                                        absent=unresolvable(NOT_HELPFUL))
            return (PostFilterResult(nominated_node="", potential_nodes=potential_names,
                                     dry_run_failures=_named(state, failures)),
                    unschedulable(message))
        best, ties = select_candidate(candidates)
        return (PostFilterResult(nominated_node=best.node, victims=best.victims,
                                 num_pdb_violations=best.num_pdb_violations,
                                 potential_nodes=potential_names,
                                 candidates=tuple(sorted(candidates, key=lambda c: c.node)),
                                 dry_run_failures=_named(state, failures), tie_nodes=ties),
                Status())

    def find_candidates(self, cycle: Cycle, potential: Sequence[int],
                        diagnosis: Any) -> tuple[list[Candidate], dict[int, Status]]:
        """``findCandidates`` + ``DryRunPreemption``: from a random offset, dry-run the
        potential nodes in order until enough candidates (and one without PDB violations)
        are found; the rest of the nodes are not tried."""
        if not potential:
            return [], {}
        wanted = self.plugin.num_candidates(len(potential))
        rng = self.handle.rng
        offset = int(rng.integers(len(potential))) if rng is not None else 0
        skipped = diagnosis.pre_filter_skipped
        non_violating: list[Candidate] = []
        violating: list[Candidate] = []
        failures: dict[int, Status] = {}
        for i in range(len(potential)):
            node = potential[(offset + i) % len(potential)]
            victims, num_violations, status = self.plugin.select_victims_on_node(
                cycle, node, self.handle, skipped)
            if status.is_success and victims:
                found = Candidate(cycle.state.node_names[node], tuple(victims), num_violations)
                (violating if num_violations else non_violating).append(found)
                if non_violating and len(non_violating) + len(violating) >= wanted:
                    break
                continue
            if status.is_success:
                status = Status(Code.ERROR, (f'expected at least one victim pod on node '
                                             f'"{cycle.state.node_names[node]}"',))
            failures[node] = status
        return non_violating + violating, failures


def _named(state: Any, statuses: dict[int, Status]) -> dict[str, Status]:
    return {state.node_names[n]: s for n, s in statuses.items()}


def _earliest_start_of_most_important(candidate: Candidate) -> float:
    """``GetEarliestPodStartTime``: the earliest start among the highest-priority victims."""
    from ksched.plugins.default_preemption import start_time

    top = max(v.priority for v in candidate.victims)
    return min(start_time(v) for v in candidate.victims if v.priority == top)


#: ``pickOneNodeForPreemption``'s criteria, in order; each keeps the nodes scoring highest.
CRITERIA: tuple[Callable[[Candidate], float], ...] = (
    lambda c: -c.num_pdb_violations,
    lambda c: -c.victims[0].priority,
    lambda c: -sum(v.priority + _SHIFT for v in c.victims),
    lambda c: -len(c.victims),
    _earliest_start_of_most_important,
)


def select_candidate(candidates: Sequence[Candidate]) -> tuple[Candidate, tuple[str, ...]]:
    """``SelectCandidate``: the candidate ``pickOneNodeForPreemption`` picks, and the nodes
    still tied after its five criteria. Upstream takes any of those (Go map order); ksched
    takes the smallest node name, as the recorded traces do."""
    remaining = list(candidates)
    if len(remaining) > 1:
        for criterion in CRITERIA:
            scores = [criterion(c) for c in remaining]
            best = max(scores)
            remaining = [c for c, s in zip(remaining, scores) if s == best]
            if len(remaining) == 1:
                break
    remaining.sort(key=lambda c: c.node)
    return remaining[0], tuple(c.node for c in remaining)
