"""DefaultPreemption's node choice in plain Python: ``pickOneNodeForPreemption``
(``pkg/scheduler/framework/preemption/preemption.go``), criterion by criterion, the reference
the compiled :func:`ksched.kernels.preemption.pick_candidate` is tested against."""

from __future__ import annotations

from collections.abc import Mapping

from ksched.framework.preemption import Victims, start_time

#: ``MaxInt32 + 1``: makes every priority non-negative before summing.
PRIORITY_SHIFT = 2**31


def earliest_start_of_most_important(victims: Victims) -> float:
    """``GetEarliestPodStartTime``: the earliest start among the highest-priority victims."""
    top = max(p.priority for p in victims.pods)
    return min(start_time(p) for p in victims.pods if p.priority == top)


def pick_one_node_for_preemption(victims: Mapping[str, Victims]) -> tuple[str, tuple[str, ...]]:
    """The node chosen (a node without victims if any; else the fewest PDB violations, the
    lowest highest victim priority, the lowest sum of shifted priorities, the fewest victims,
    the latest earliest start of the top-priority victims), and the nodes still tied, the
    smallest name chosen among them."""
    empty = sorted(n for n, v in victims.items() if not v.pods)
    if empty:
        return empty[0], tuple(empty)
    criteria = (
        lambda v: -v.num_pdb_violations,
        lambda v: -v.pods[0].priority,
        lambda v: -sum(p.priority + PRIORITY_SHIFT for p in v.pods),
        lambda v: -len(v.pods),
        earliest_start_of_most_important,
    )
    remaining = sorted(victims)
    for score in criteria:
        best = max(score(victims[n]) for n in remaining)
        remaining = [n for n in remaining if score(victims[n]) == best]
    return remaining[0], tuple(remaining)
