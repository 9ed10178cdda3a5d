"""The preemption Evaluator (``pkg/scheduler/framework/preemption/preemption.go``).

``Preempt``: check the pod may preempt, dry-run victim selection on the nodes that failed
with a resolvable status, pick one candidate node and nominate it. A PostFilter plugin gives
the Evaluator its rules through :class:`Interface` (``preemption.Interface``): DefaultPreemption
is one. The helpers every preemption shares live here too: ``GetPodStartTime``,
``MoreImportantPod`` and ``pickOneNodeForPreemption``'s criteria. A compiled ``DryRunPreemption``
(the fast path's) comes in through the :class:`~ksched.framework.interfaces.Handle`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import attrs
import numpy as np

from ksched.api import Pod
from ksched.framework.diagnosis import NodeStatuses, failure_message
from ksched.framework.interfaces import Cycle, DryRunResult, Handle, PostFilterResult
from ksched.kernels.preemption import pick_candidate
from ksched.state import ClusterState
from ksched.status import Code, Status, unresolvable, unschedulable

NOT_HELPFUL = "Preemption is not helpful for scheduling"
#: ``SelectVictimsOnNode``'s status where no pod has a lower priority than the preemptor.
NO_VICTIMS = "No preemption victims found for incoming pod"


# ----------------------------------------------------------------------- shared helpers


def start_time(pod: Pod) -> float:
    """``GetPodStartTime``: ``status.startTime``; a pod that has not started counts as now,
    later than any recorded time."""
    value = getattr(pod, "start_time", None)
    return float("inf") if value is None else value


def importance(pod: Pod) -> tuple[int, float]:
    """``MoreImportantPod`` as a sort key (smaller: more important): higher priority first,
    then the earlier start."""
    return -pod.priority, start_time(pod)


def more_important(a: Pod, b: Pod) -> bool:
    """``MoreImportantPod``: whether ``a`` is more important than ``b``."""
    return importance(a) < importance(b)


def sort_by_importance(pods: list[Pod]) -> list[Pod]:
    """``sort.Slice(pods, MoreImportantPod)``. Go sorts short slices (12 or fewer, every node
    in practice) by insertion, which keeps ties in their order; so does this stable sort."""
    return sorted(pods, key=importance)


# ----------------------------------------------------------------------- the interface


@attrs.frozen
class Candidate:
    """A node where preemption would work, with its victims (most important first)."""

    node: str
    victims: tuple[Pod, ...]
    num_pdb_violations: int


@attrs.frozen
class Victims:
    """``extenderv1.Victims``: the pods to evict on one node, and how many PDBs that breaks."""

    pods: tuple[Pod, ...]
    num_pdb_violations: int


#: ``OrderedScoreFuncs``' functions: a node name's score (the highest wins).
ScoreFunc = Callable[[str], float]


@runtime_checkable
class Interface(Protocol):
    """``preemption.Interface``: the rules a PostFilter plugin gives the :class:`Evaluator`."""

    def get_offset_and_num_candidates(self, num_nodes: int,
                                      rng: np.random.Generator | None) -> tuple[int, int]:
        """Where the dry run starts among ``num_nodes`` potential nodes, and how many
        candidates it looks for."""

    def candidates_to_victims_map(self, candidates: Sequence[Candidate]
                                  ) -> dict[str, Victims]:
        """The candidates' victims by node name."""

    def pod_eligible_to_preempt_others(self, pod: Pod, state: ClusterState,
                                       nominated_status: Status | None) -> tuple[bool, str]:
        """Whether the pod may preempt, and why not."""

    def select_victims_on_node(self, cycle: Cycle, node: int, handle: Handle,
                               skipped: frozenset[str]) -> tuple[list[Pod], int, Status]:
        """The victims on one node (most important first), their PDB violations, a status."""

    def ordered_score_funcs(self, nodes_to_victims: Mapping[str, Victims]
                            ) -> list[ScoreFunc] | None:
        """The node choice's criteria, in order (``None``: ``pickOneNodeForPreemption``'s)."""


class Evaluator:
    """One preemption attempt for one pod (``Evaluator.Preempt``)."""

    def __init__(self, interface: Interface, handle: Handle) -> None:
        self.interface, self.handle = interface, handle

    def preempt(self, cycle: Cycle, diagnosis: Any) -> tuple[PostFilterResult | None, Status]:
        """``Preempt``: ``(None, Unschedulable)`` when the pod may not preempt;
        ``("" nominated, Unschedulable)`` when no node helps; else the chosen node."""
        state, pod = cycle.state, cycle.pod
        if not cycle.data:  # the cycle state PreFilter left (the dry run reuses it)
            self.handle.framework.run_pre_filter(cycle)
        nominated_row = state.node_index.get(getattr(pod, "nominated_node_name", "") or "")
        nominated_status = diagnosis.status_of(nominated_row) if nominated_row is not None \
            else None
        ok, reason = self.interface.pod_eligible_to_preempt_others(pod, state,
                                                                   nominated_status)
        if not ok:
            return None, unschedulable(reason)
        potential = potential_nodes(state, diagnosis)
        names = state.node_names
        potential_names = Deferred(lambda: sorted(names[n] for n in potential.tolist()))
        offset, wanted = self._walk(len(potential))
        dry_run = self.handle.dry_run
        found = dry_run(self.interface, cycle, potential, offset, wanted, self.handle,
                        diagnosis) if dry_run is not None and len(potential) else None
        if found is None:
            candidates, failures = self.find_candidates(cycle, potential.tolist(), diagnosis,
                                                        offset, wanted)
            any_candidate = bool(candidates)
        else:
            candidates, failures = found.candidates, None
            any_candidate = found.found_any
        if not any_candidate:
            failures = found.failures if failures is None else failures
            message = failure_message(state.num_nodes, failures, unresolvable(NOT_HELPFUL))
            return (PostFilterResult(nominated_node="", potential_nodes=potential_names,
                                     dry_run_failures=_named(state, failures)),
                    unschedulable(message))
        best, ties = self.select_candidate(candidates) if found is None else found.pick()
        return (PostFilterResult(nominated_node=best.node, victims=best.victims,
                                 num_pdb_violations=best.num_pdb_violations,
                                 potential_nodes=potential_names,
                                 candidates=Deferred(lambda: sorted(candidates,
                                                                    key=lambda c: c.node)),
                                 dry_run_failures=_named(state, failures, found),
                                 tie_nodes=ties),
                Status())

    def _walk(self, num_potential: int) -> tuple[int, int]:
        """The random offset of the walk, and how many candidates to look for."""
        if not num_potential:
            return 0, 0
        return self.interface.get_offset_and_num_candidates(num_potential, self.handle.rng)

    def find_candidates(self, cycle: Cycle, potential: Sequence[int], diagnosis: Any,
                        offset: int | None = None, wanted: int | None = None
                        ) -> tuple[list[Candidate], dict[int, Status]]:
        """``findCandidates`` + ``DryRunPreemption``: from a random offset, dry-run the
        potential nodes in order until enough candidates (and one without PDB violations)
        are found; the rest of the nodes are not tried."""
        if not potential:
            return [], {}
        if offset is None or wanted is None:
            offset, wanted = self._walk(len(potential))
        skipped = diagnosis.pre_filter_skipped
        non_violating: list[Candidate] = []
        violating: list[Candidate] = []
        failures: dict[int, Status] = {}
        for i in range(len(potential)):
            node = potential[(offset + i) % len(potential)]
            victims, num_violations, status = self.interface.select_victims_on_node(
                cycle, node, self.handle, skipped)
            if status.is_success and victims:
                found = Candidate(cycle.state.node_names[node], tuple(victims), num_violations)
                (violating if num_violations else non_violating).append(found)
                if non_violating and len(non_violating) + len(violating) >= wanted:
                    break
                continue
            if status.is_success:
                status = no_victim_left(cycle.state.node_names[node])
            failures[node] = status
        return non_violating + violating, failures

    def select_candidate(self, candidates: Sequence[Candidate]
                         ) -> tuple[Candidate, tuple[str, ...]]:
        """``SelectCandidate``: the interface's criteria (``OrderedScoreFuncs``) over its
        victims map, or ``pickOneNodeForPreemption``'s."""
        if len(candidates) == 1:
            return candidates[0], (candidates[0].node,)
        victims = self.interface.candidates_to_victims_map(candidates)
        node, ties = pick_one_node_for_preemption(
            victims, self.interface.ordered_score_funcs(victims))
        return next(c for c in candidates if c.node == node), ties


def no_victim_left(node: str) -> Status:
    return Status(Code.ERROR, (f'expected at least one victim pod on node "{node}"',))


def potential_nodes(state: Any, diagnosis: Any) -> np.ndarray:
    """``nodesWherePreemptionMightHelp``: the nodes, in tree order, whose diagnosis status
    is Unschedulable (not UnschedulableAndUnresolvable)."""
    codes = NodeStatuses.of(diagnosis.failures).codes(state.num_nodes, diagnosis.absent_status)
    order = np.asarray(state.tree_order, dtype=np.int64)
    return order[codes[order] == int(Code.UNSCHEDULABLE)]


# ----------------------------------------------------------------------- the node choice


def pick_one_node_for_preemption(victims: Mapping[str, Victims],
                                 score_funcs: Sequence[ScoreFunc] | None = None
                                 ) -> tuple[str, tuple[str, ...]]:
    """``pickOneNodeForPreemption``: a node that needs no victims if there is one; else each
    criterion in turn keeps the nodes scoring highest, until one is left; and the nodes still
    tied after them all. Without ``score_funcs`` the default criteria are the compiled
    :func:`ksched.kernels.preemption.pick_candidate`'s (the one copy of them). Upstream takes
    any of the tied nodes (Go map order); ksched takes the smallest node name, as the recorded
    traces do."""
    empty = sorted(n for n, v in victims.items() if not v.pods)
    if empty:
        return empty[0], tuple(empty)
    if score_funcs is None:
        return _by_default_criteria(victims)
    remaining = list(victims)
    if len(remaining) > 1:
        for score in score_funcs:
            scores = [score(n) for n in remaining]
            best = max(scores)
            remaining = [n for n, s in zip(remaining, scores) if s == best]
            if len(remaining) == 1:
                break
    remaining.sort()
    return remaining[0], tuple(remaining)


def _by_default_criteria(victims: Mapping[str, Victims]) -> tuple[str, tuple[str, ...]]:
    """The default criteria over nodes that each have victims, by the compiled kernel."""
    names = sorted(victims)
    sizes = np.array([len(victims[n].pods) for n in names], dtype=np.int64)
    ends = np.cumsum(sizes)
    pods = [p for n in names for p in victims[n].pods]
    tied, best = pick_candidate(
        ends - sizes, ends, np.array([victims[n].num_pdb_violations for n in names], np.int64),
        np.array([p.priority for p in pods], np.int64),
        np.array([start_time(p) for p in pods], np.float64), np.arange(len(names)))
    return names[best], tuple(n for n, t in zip(names, tied) if t)


def select_candidate(candidates: Sequence[Candidate]) -> tuple[Candidate, tuple[str, ...]]:
    """``SelectCandidate`` with ``pickOneNodeForPreemption``'s criteria: the candidate
    picked, and the nodes still tied after the five criteria."""
    by_node = {c.node: c for c in candidates}
    node, ties = pick_one_node_for_preemption(
        {n: Victims(c.victims, c.num_pdb_violations) for n, c in by_node.items()})
    return by_node[node], ties


# ----------------------------------------------------------------------- lazy results


class Deferred(Sequence):
    """A tuple made on first use (what traces and explanations read, the simulator not)."""

    __slots__ = ("_make", "_items")

    def __init__(self, make: Callable[[], Any]) -> None:
        self._make, self._items = make, None

    def _get(self) -> tuple[Any, ...]:
        if self._items is None:
            self._items = tuple(self._make())
            self._make = None
        return self._items

    def __len__(self) -> int:
        return len(self._get())

    def __getitem__(self, index: Any) -> Any:
        return self._get()[index]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._get())

    def __eq__(self, other: object) -> bool:
        return self._get() == (other._get() if isinstance(other, Deferred) else other)

    def __hash__(self) -> int:
        return hash(self._get())

    def __repr__(self) -> str:
        return repr(self._get())


class DeferredMapping(Mapping):
    """A dict made on first use."""

    __slots__ = ("_make", "_items")

    def __init__(self, make: Callable[[], Any]) -> None:
        self._make, self._items = make, None

    def _get(self) -> dict[Any, Any]:
        if self._items is None:
            self._items = dict(self._make())
            self._make = None
        return self._items

    def __getitem__(self, key: Any) -> Any:
        return self._get()[key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())

    def __repr__(self) -> str:
        return repr(self._get())


def _named(state: Any, statuses: Mapping[int, Status] | None,
           found: DryRunResult | None = None) -> Mapping[str, Status]:
    """The failures by node name (``found``'s when ``statuses`` is ``None``), on first use."""
    def make() -> dict[str, Status]:
        failures = found.failures if statuses is None else statuses
        return {state.node_names[n]: s for n, s in failures.items()}

    return DeferredMapping(make)


__all__ = ["Candidate", "Victims", "Interface", "Evaluator", "NO_VICTIMS", "NOT_HELPFUL",
           "start_time", "importance", "more_important", "sort_by_importance",
           "select_candidate", "pick_one_node_for_preemption", "potential_nodes",
           "no_victim_left", "Deferred"]
