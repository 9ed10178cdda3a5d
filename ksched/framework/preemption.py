"""The preemption Evaluator (``pkg/scheduler/framework/preemption/preemption.go``).

``Preempt``: check the pod may preempt, dry-run victim selection on the nodes that failed
with a resolvable status, pick one candidate node and nominate it. The plugin (DefaultPreemption)
supplies eligibility, the number of candidates and ``SelectVictimsOnNode``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from ksched.api import Pod
from ksched.framework.interfaces import Cycle, Handle, PostFilterResult
from ksched.framework.runtime import NodeStatuses, failure_message
from ksched.kernels import preemption as kernels
from ksched.status import Code, Status, unresolvable, unschedulable

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
        potential = potential_nodes(state, diagnosis)
        names = state.node_names
        potential_names = Deferred(lambda: sorted(names[n] for n in potential.tolist()))
        wanted, offset = self._walk(len(potential))
        dry_run = getattr(self.plugin, "dry_run", None)
        found = dry_run(cycle, potential, offset, wanted, self.handle, diagnosis) \
            if dry_run is not None and len(potential) else None
        if found is None:
            candidates, failures = self.find_candidates(cycle, potential.tolist(), diagnosis,
                                                        offset, wanted)
            any_candidate = bool(candidates)
        else:
            candidates, failures = found.candidates, None
            any_candidate = len(found.positions) > 0
        if not any_candidate:
            failures = found.failures if failures is None else failures
            message = failure_message(state.num_nodes, failures, unresolvable(NOT_HELPFUL))
            return (PostFilterResult(nominated_node="", potential_nodes=potential_names,
                                     dry_run_failures=_named(state, failures)),
                    unschedulable(message))
        best, ties = select_candidate(candidates) if found is None else found.pick()
        return (PostFilterResult(nominated_node=best.node, victims=best.victims,
                                 num_pdb_violations=best.num_pdb_violations,
                                 potential_nodes=potential_names,
                                 candidates=Deferred(lambda: sorted(candidates,
                                                                    key=lambda c: c.node)),
                                 dry_run_failures=_named(state, failures, found),
                                 tie_nodes=ties),
                Status())

    def _walk(self, num_potential: int) -> tuple[int, int]:
        """How many candidates to look for, and the random offset of the walk."""
        if not num_potential:
            return 0, 0
        wanted = self.plugin.num_candidates(num_potential)
        rng = self.handle.rng
        return wanted, int(rng.integers(num_potential)) if rng is not None else 0

    def find_candidates(self, cycle: Cycle, potential: Sequence[int], diagnosis: Any,
                        offset: int | None = None, wanted: int | None = None
                        ) -> tuple[list[Candidate], dict[int, Status]]:
        """``findCandidates`` + ``DryRunPreemption``: from a random offset, dry-run the
        potential nodes in order until enough candidates (and one without PDB violations)
        are found; the rest of the nodes are not tried."""
        if not potential:
            return [], {}
        if offset is None or wanted is None:
            wanted, offset = self._walk(len(potential))
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
                status = no_victim_left(cycle.state.node_names[node])
            failures[node] = status
        return non_violating + violating, failures


def no_victim_left(node: str) -> Status:
    return Status(Code.ERROR, (f'expected at least one victim pod on node "{node}"',))


def potential_nodes(state: Any, diagnosis: Any) -> np.ndarray:
    """``nodesWherePreemptionMightHelp``: the nodes, in tree order, whose diagnosis status
    is Unschedulable (not UnschedulableAndUnresolvable)."""
    codes = NodeStatuses.of(diagnosis.failures).codes(state.num_nodes, diagnosis.absent_status)
    order = np.asarray(state.tree_order, dtype=np.int64)
    return order[codes[order] == int(Code.UNSCHEDULABLE)]


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


class CompiledDryRun:
    """What the compiled dry run (:func:`ksched.kernels.preemption.dry_run`) found on the
    nodes it tried: candidates with their victims (pod rows of ``state``), and failures."""

    def __init__(self, state: Any, out: dict[str, np.ndarray], tried: int,
                 serials: np.ndarray,
                 fit_status: Callable[[int], Status]) -> None:
        self.state = state
        self.nodes = out["node"][:tried]
        self.kinds = out["kind"][:tried]
        self.codes = out["code"][:tried]
        self.indptr = out["indptr"][:tried + 1]
        end = int(self.indptr[-1])
        #: The victims by serial; ``serials`` (ascending) gives their rows in ``state``.
        self.victims, self.serials = out["victims"][:end], serials
        self.priority, self.start = out["priority"][:end], out["start"][:end]
        self.positions = np.flatnonzero(self.kinds == kernels.CANDIDATE)
        self._fit_status, self._statuses = fit_status, None
        make = functools.partial(_candidate, state, serials, self.nodes, self.indptr,
                                 self.victims)
        positions = self.positions.tolist()
        self.candidates = Deferred(lambda: [make(i) for i in positions])

    @property
    def failures(self) -> NodeStatuses:
        """The nodes where no candidate was found, with why (made on first use)."""
        if self._statuses is None:
            self._statuses = self._failures(self._fit_status)
        return self._statuses

    def _failures(self, fit_status: Callable[[int], Status]) -> NodeStatuses:
        from ksched.plugins.default_preemption import NO_VICTIMS

        failing = np.flatnonzero(self.kinds != kernels.CANDIDATE)
        kinds, codes = self.kinds[failing], self.codes[failing]
        ids = np.zeros(len(failing), dtype=np.int64)
        table = [unresolvable(NO_VICTIMS)]
        fit = kinds == kernels.FIT_FAILURE
        if fit.any():
            distinct, inverse = kernels.group_codes(codes[fit])
            if not len(distinct):
                distinct, inverse = np.unique(codes[fit], return_inverse=True)
            ids[fit] = len(table) + inverse.reshape(-1)
            table += [fit_status(int(code)).with_plugin("NodeResourcesFit") for code in distinct]
        for i in np.flatnonzero(kinds == kernels.NO_VICTIM_LEFT).tolist():
            ids[i] = len(table)
            table.append(no_victim_left(self.state.node_names[int(self.nodes[failing[i]])]))
        return NodeStatuses(self.nodes[failing], ids, table)

    def candidate(self, position: int) -> Candidate:
        return _candidate(self.state, self.serials, self.nodes, self.indptr, self.victims,
                          position)

    def pick(self) -> tuple[Candidate, tuple[str, ...]]:
        """:func:`select_candidate` on the candidates' arrays."""
        positions = self.positions
        rank = name_rank(self.state.node_names)[self.nodes[positions]]
        tied, best = kernels.pick_candidate(
            self.indptr[positions], self.indptr[positions + 1],
            np.zeros(len(positions), dtype=np.int64), self.priority, self.start, rank)
        names = self.state.node_names
        ties = tuple(sorted(names[int(n)] for n in self.nodes[positions[tied]]))
        return self.candidate(int(positions[best])), ties


def _candidate(state: Any, serials: np.ndarray, nodes: np.ndarray, indptr: np.ndarray,
               victims: np.ndarray, position: int) -> Candidate:
    """The candidate the dry run found at ``position`` (no PDB violations counted)."""
    pods = state.pods
    rows = np.searchsorted(serials, victims[indptr[position]:indptr[position + 1]]).tolist()
    return Candidate(state.node_names[int(nodes[position])], tuple(pods[r] for r in rows), 0)


_RANKS: dict[int, tuple[Any, np.ndarray]] = {}


def name_rank(names: Sequence[str]) -> np.ndarray:
    """Each node row's position among the node names sorted (kept per names object)."""
    found = _RANKS.get(id(names))
    if found is None or found[0] is not names:
        order = sorted(range(len(names)), key=names.__getitem__)
        rank = np.empty(len(names), dtype=np.int64)
        rank[order] = np.arange(len(names), dtype=np.int64)
        if len(_RANKS) > 8:
            _RANKS.clear()
        found = _RANKS[id(names)] = (names, rank)
    return found[1]


def _named(state: Any, statuses: Mapping[int, Status] | None,
           found: CompiledDryRun | None = None) -> Mapping[str, Status]:
    """The failures by node name (``found``'s when ``statuses`` is ``None``), on first use."""
    def make() -> dict[str, Status]:
        failures = found.failures if statuses is None else statuses
        return {state.node_names[n]: s for n, s in failures.items()}

    return DeferredMapping(make)


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
