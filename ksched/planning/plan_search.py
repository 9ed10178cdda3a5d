"""The plan's exact search: from the integer program's counts to counts that the scheduler
itself places every pod with, then down to a local minimum of the cost.

Every step judges a candidate (new nodes per type) by one :func:`ksched.schedule_batch` of
every pending pod on the cluster with those nodes (:meth:`Planner.run`); a candidate is
*feasible* when every pod that fits some node type is placed.

1. **Grow.** While the candidate is not feasible, add the cheapest nodes that would hold the
   pods left out if they were alone (the integer program over those pods, no existing room),
   doubled each further round so that a scheduler that keeps spreading other pods onto the
   new nodes is overtaken in a few rounds.
2. **Bisect.** Per type, the most expensive first, the fewest nodes between the last
   infeasible and the feasible count that keep the candidate feasible (others fixed).
3. **Descend.** Moves: one node of a type fewer; one node of a type swapped for one of a
   cheaper type; one node of a type added for the fewest nodes of another type that pay for
   it. The move that saves most and stays feasible is taken, then as many more nodes of the
   type it took from as stay feasible (doubling, then bisecting), until no move is feasible:
   the answer is then a local minimum for these moves (checked by exact scheduling). Then
   block trades: 1/8, 1/16 or 1/32 of a type's nodes for cheaper nodes worth half of them
   (the scheduler's spreading makes the cost a rugged function of the counts, and single
   moves stall in its small dips); after one is feasible, single moves again.

A budget (nodes, cost, seconds) stops the search; it then says so.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import attrs
import numpy as np
import numpy.typing as npt

from ksched.engine import Result
from ksched.planning.plan_model import Planner

__all__ = ["BLOCKS", "Budget", "OutOfBudget", "Search", "Trial"]

#: The block trades' sizes: 1/8, 1/16 and 1/32 of a type's nodes.
BLOCKS = (8, 16, 32)


class OutOfBudget(Exception):
    """The search reached a limit of its :class:`Budget` (the message says which)."""


@attrs.frozen
class Budget:
    """The search's limits: new nodes, total price, seconds from ``start``."""

    max_nodes: int
    max_cost: float | None
    time_limit: float | None
    start: float

    def left(self) -> float | None:
        """Seconds left (``None``: no time limit)."""
        if self.time_limit is None:
            return None
        return self.time_limit - (time.monotonic() - self.start)

    def check_time(self) -> None:
        left = self.left()
        if left is not None and left <= 0:
            raise OutOfBudget(f"time_limit reached ({self.time_limit:g} s)")

    def fits(self, counts: npt.NDArray[np.int64], prices: npt.NDArray[np.float64]) -> bool:
        return int(counts.sum()) <= self.max_nodes and (
            self.max_cost is None or float(prices @ counts) <= self.max_cost + 1e-9)


@attrs.frozen(eq=False)
class Trial:
    """One exact schedule of the pending pods with ``counts`` new nodes per type.

    Attributes
    ----------
    counts : int64[n_types]
    result : the schedule.
    failed : int64[k], the pending pods (indices) that fit some type and were not placed.
    """

    counts: npt.NDArray[np.int64]
    result: Result
    failed: npt.NDArray[np.int64]

    @property
    def feasible(self) -> bool:
        return not len(self.failed)


class Search:
    """The grow, bisect and descend steps over one :class:`Planner` (see the module).

    Parameters
    ----------
    planner : the fixed inputs.
    fittable : bool[n_pending], whether each pending pod fits some node type.
    prices : float64[n_types], the price of each type (1 each without prices).
    budget : the limits.
    deficit : failed pod indices -> int64[n_types], the cheapest nodes that hold them alone.
    progress : called with 1 after each schedule.
    """

    def __init__(self, planner: Planner, fittable: npt.NDArray[np.bool_],
                 prices: npt.NDArray[np.float64], budget: Budget,
                 deficit: Callable[[npt.NDArray[np.int64]], npt.NDArray[np.int64]],
                 progress: Callable[[int], object] | None = None) -> None:
        self.planner, self.fittable, self.prices = planner, fittable, prices
        self.budget, self.deficit, self.progress = budget, deficit, progress
        self.trials: dict[tuple[int, ...], Trial] = {}
        self.schedules = 0
        self.best: Trial | None = None  # the cheapest feasible trial so far

    def evaluate(self, counts: npt.NDArray[np.int64]) -> Trial:
        """The trial of ``counts`` (cached)."""
        key = tuple(int(c) for c in counts)
        if key not in self.trials:
            self.budget.check_time()
            names = [t.name for t in self.planner.types]
            result = self.planner.run(dict(zip(names, key)))
            self.schedules += 1
            if self.progress is not None:
                self.progress(1)
            failed = np.flatnonzero((result.node_rows < 0) & self.fittable)
            trial = Trial(np.array(key, np.int64), result, failed)
            if trial.feasible and (self.best is None or self.cost(trial.counts)
                                   < self.cost(self.best.counts)):
                self.best = trial
            self.trials[key] = trial
        return self.trials[key]

    def cost(self, counts: npt.NDArray[np.int64]) -> float:
        return float(self.prices @ counts)

    # ------------------------------------------------------------------ grow

    def grow(self, start: npt.NDArray[np.int64]) -> tuple[Trial, npt.NDArray[np.int64]]:
        """A feasible trial from ``start``, and the last infeasible counts before it
        (``start`` itself when it is feasible). Raises :class:`OutOfBudget` at a limit."""
        counts, below, rounds = start.copy(), start.copy(), 0
        while True:
            trial = self.evaluate(counts)
            if trial.feasible:
                return trial, below
            below = counts.copy()
            step = self.deficit(trial.failed) * (2 ** min(rounds, 20))
            counts = self._within_budget(counts, step, len(trial.failed))
            rounds += 1

    def _within_budget(self, counts: npt.NDArray[np.int64], step: npt.NDArray[np.int64],
                       failing: int) -> npt.NDArray[np.int64]:
        """``counts + step``, cut down to the budget; :class:`OutOfBudget` when nothing can
        be added."""
        for scale in (1.0, 0.5, 0.25, 0.125, 0.0625, 0.0):
            cut = np.maximum(np.floor(step * scale).astype(np.int64), 0)
            if scale == 0.0:
                cut = np.zeros_like(step)
                cut[int(np.argmax(step))] = 1
            if cut.sum() and self.budget.fits(counts + cut, self.prices):
                return counts + cut
        raise OutOfBudget(f"{self._limit_name()} reached with {int(counts.sum())} new nodes "
                          f"and {failing} pods not scheduled")

    def _limit_name(self) -> str:
        if self.budget.max_cost is not None:
            return f"max_nodes ({self.budget.max_nodes:,}) or max_cost " \
                   f"({self.budget.max_cost:g})"
        return f"max_nodes ({self.budget.max_nodes:,})"

    # ------------------------------------------------------------------ bisect

    def bisect(self, trial: Trial, below: npt.NDArray[np.int64]) -> Trial:
        """Per type (the most expensive first), the fewest nodes in ``(below, trial]`` that
        stay feasible with the other types as they are."""
        for t in np.argsort(-self.prices, kind="stable"):
            low, high = int(below[t]), int(trial.counts[t])
            while high - low > 1:
                mid = (low + high) // 2
                counts = trial.counts.copy()
                counts[t] = mid
                candidate = self.evaluate(counts)
                if candidate.feasible:
                    trial, high = candidate, mid
                else:
                    low = mid
        return trial

    # ------------------------------------------------------------------ descend

    def moves(self, counts: npt.NDArray[np.int64]
              ) -> list[tuple[npt.NDArray[np.int64], tuple[int, int]]]:
        """The cheaper neighbours of ``counts``, the largest saving first, each with its
        kind ``(t, u)`` (nodes of type ``t`` taken, of ``u`` added; ``u = -1``: none): one
        node of a type fewer; one node of a type swapped for one of a cheaper type; one node
        of a type added for the fewest nodes of another type that pay for it
        (``floor(price_u / price_t) + 1``)."""
        out = []
        for t in np.flatnonzero(counts > 0):
            price = float(self.prices[t])
            fewer = counts.copy()
            fewer[t] -= 1
            out.append((price, fewer, (int(t), -1)))
            for u in range(len(counts)):
                if u == t:
                    continue
                if self.prices[u] < price:
                    swap = fewer.copy()
                    swap[u] += 1
                    out.append((price - float(self.prices[u]), swap, (int(t), u)))
                elif price > 0 and counts[t] >= (k := int(self.prices[u] // price) + 1):
                    trade = counts.copy()
                    trade[t] -= k
                    trade[u] += 1
                    out.append((k * price - float(self.prices[u]), trade, (int(t), u)))
        out.sort(key=lambda item: -item[0])
        return [(c, kind) for _, c, kind in out if self.budget.fits(c, self.prices)]

    def descend(self, trial: Trial) -> Trial:
        """Single moves (:meth:`single_moves`) until none is feasible, then a block trade
        (:meth:`block_trade`); again, until neither finds a cheaper feasible trial."""
        while True:
            trial = self.single_moves(trial)
            block = self.block_trade(trial)
            if block is None:
                return trial
            trial = block

    def block_trade(self, trial: Trial) -> Trial | None:
        """A feasible trial that trades a block of a type's nodes for cheaper ones, or
        ``None``: from the dearest type ``t``, ``b`` = 1/8, 1/16, then 1/32 of its nodes (at
        least 2) for ``round(b * price_t / (2 * price_u))`` nodes of a cheaper type ``u`` (half
        the saving spent on ``u``). Such moves follow the mix of types where single moves
        stall: fewer dear nodes that the pods spread over, more cheap ones that draw them."""
        counts = trial.counts
        order = np.argsort(-self.prices, kind="stable")
        for t in order:
            for u in order:
                price_t, price_u = float(self.prices[t]), float(self.prices[u])
                if not 0 < price_u < price_t:
                    continue
                for share in BLOCKS:
                    block = int(counts[t]) // share
                    if block < 2:
                        break
                    candidate = counts.copy()
                    candidate[t] -= block
                    candidate[u] += int(round(block * price_t / (2 * price_u)))
                    if self.budget.fits(candidate, self.prices) \
                            and self.evaluate(candidate).feasible:
                        return self.evaluate(candidate)
        return None

    def single_moves(self, trial: Trial) -> Trial:
        """Take the best feasible move of :meth:`moves` (the kinds that failed last round
        tried last), and repeat it while it stays feasible (doubling, then bisecting); until
        no move is feasible."""
        failed_before: set[tuple[int, int]] = set()
        while True:
            moves = self.moves(trial.counts)
            moves.sort(key=lambda move: move[1] in failed_before)  # stable: saving order kept
            failed_now = set()
            for counts, kind in moves:
                candidate = self.evaluate(counts)
                if candidate.feasible:
                    trial = self._gallop(trial, candidate)
                    break
                failed_now.add(kind)
            else:
                return trial
            failed_before = failed_now

    def _gallop(self, before: Trial, after: Trial) -> Trial:
        """The move from ``before`` to the feasible ``after`` repeated as often as it stays
        feasible: 2, 4, ... times until once it is not, then bisection between."""
        step = after.counts - before.counts

        def works(k: int) -> bool:
            counts = before.counts + k * step
            return bool((counts >= 0).all()) and self.budget.fits(counts, self.prices) \
                and self.evaluate(counts).feasible

        good, bad = 1, 2
        while works(bad):
            good, bad = bad, bad * 2
        while bad - good > 1:
            mid = (good + bad) // 2
            good, bad = (mid, bad) if works(mid) else (good, mid)
        return self.evaluate(before.counts + good * step)

    def fewer(self, counts: npt.NDArray[np.int64], limit: int = 3
              ) -> dict[int, tuple[int, Sequence[tuple[int, str]]]]:
        """For each type with nodes: with one of them fewer (a trial of :meth:`descend`),
        how many pods fail and the first ``limit`` of them (pending index, the scheduler's
        reason)."""
        out = {}
        for t in np.flatnonzero(counts > 0):
            fewer = counts.copy()
            fewer[t] -= 1
            trial = self.trials.get(tuple(int(c) for c in fewer))
            if trial is None:
                continue
            placements = trial.result.placements
            shown = [(int(i), placements[int(i)].reason) for i in trial.failed[:limit]]
            out[int(t)] = (len(trial.failed), shown)
        return out
