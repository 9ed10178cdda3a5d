"""Host selection among the nodes that share the top score.

``round-robin`` is ``findMaxScores`` + ``lastNodeIndex`` of kube-scheduler v1.10-v1.14: a running
index, kept across pods, picks among the tied nodes in list order. ``random`` draws uniformly
(what v1.15-v1.34's reservoir sampling did, and what upstream PR 141024 restores) from a seeded
generator: each selection among several tied nodes takes the next value of a pre-drawn stream,
so the object-level path and the compiled loop consume the very same draws. ``heap`` is
v1.35.4's own order: ``schedulePod`` puts the scored feasible list (in walk order) into a
``container/heap`` by total and takes its top (:func:`ksched.kernels.select.heap_precedes`);
it keeps no state.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ksched.constants import TIE_BREAKS
from ksched.kernels import select

ROUND_ROBIN, RANDOM, HEAP = select.ROUND_ROBIN, select.RANDOM, select.HEAP
_DRAW_LIMIT = 1 << 62


class TieBreaker:
    """Chooses one node among the max-score nodes; its state persists across a batch.

    The round-robin index and the next draw are kept in the layout of the compiled loop's
    counters (``state``), so both paths choose with the same kernel
    (:func:`ksched.kernels.select.select_host`).
    """

    def __init__(self, mode: str = "round-robin",
                 seed: int | np.random.Generator | None = None) -> None:
        if mode not in TIE_BREAKS:
            raise ValueError(f"tie_break must be one of {', '.join(TIE_BREAKS)}, got {mode!r}")
        self.mode = mode
        self.code = TIE_BREAKS.index(mode)
        self.state = np.zeros(5, dtype=np.int64)
        self.rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        self.draws = np.zeros(0, dtype=np.int64)

    @property
    def last_node_index(self) -> int:
        """The round-robin index (``lastNodeIndex``)."""
        return int(self.state[select.ROUND_ROBIN_AT])

    @property
    def next_draw(self) -> int:
        """The position of the next random draw in :attr:`draws`."""
        return int(self.state[select.NEXT_DRAW_AT])

    def reserve(self, count: int) -> None:
        """Make sure at least ``count`` draws are ready (random mode)."""
        if self.code == RANDOM and len(self.draws) - self.next_draw < count:
            more = self.rng.integers(_DRAW_LIMIT, size=max(count, 1024), dtype=np.int64)
            self.draws = np.concatenate([self.draws[self.next_draw:], more])
            self.state[select.NEXT_DRAW_AT] = 0

    def save(self, counters: npt.NDArray[np.int64]) -> None:
        """Write the round-robin index and the next draw where the compiled loop keeps them."""
        for at in (select.ROUND_ROBIN_AT, select.NEXT_DRAW_AT):
            counters[at] = self.state[at]

    def load(self, counters: npt.NDArray[np.int64]) -> None:
        """Take them back after the compiled loop ran."""
        for at in (select.ROUND_ROBIN_AT, select.NEXT_DRAW_AT):
            self.state[at] = counters[at]

    def select(self, totals: npt.NDArray[np.int64]) -> int:
        """``selectHost``: the position in ``totals`` (the scored feasible list, in walk
        order) of the chosen top-score node. Round-robin advances its index on every call,
        as ``selectHost`` did, even when one node has the top score."""
        totals = np.asarray(totals, dtype=np.int64)
        if self.code == RANDOM and np.count_nonzero(totals == totals.max()) > 1:
            self.reserve(1)
        return int(select.select_host(totals, self.code, self.draws, self.state))
