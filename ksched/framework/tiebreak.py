"""Host selection among the nodes that share the top score.

``round-robin`` is ``findMaxScores`` + ``lastNodeIndex`` of kube-scheduler v1.10-v1.14: a running
index, kept across pods, picks among the tied nodes in list order. ``random`` draws uniformly
(what v1.15-v1.34's reservoir sampling did, and what upstream PR 141024 restores; v1.35 without
extenders takes whichever tied node its score heap puts first) from a seeded generator: each
selection among several tied nodes takes the next value of a pre-drawn stream, so the
object-level path and the compiled loop consume the very same draws.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

TIE_BREAKS = ("round-robin", "random")
ROUND_ROBIN, RANDOM = 0, 1
_DRAW_LIMIT = 1 << 62


class TieBreaker:
    """Chooses one node among the max-score nodes; its state persists across a batch."""

    def __init__(self, mode: str = "round-robin",
                 seed: int | np.random.Generator | None = None) -> None:
        if mode not in TIE_BREAKS:
            raise ValueError(f"tie_break must be one of {', '.join(TIE_BREAKS)}, got {mode!r}")
        self.mode = mode
        self.code = TIE_BREAKS.index(mode)
        self.last_node_index = 0
        self.rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        self.draws = np.zeros(0, dtype=np.int64)
        self.next_draw = 0

    def reserve(self, count: int) -> None:
        """Make sure at least ``count`` draws are ready (random mode)."""
        if self.code == RANDOM and len(self.draws) - self.next_draw < count:
            more = self.rng.integers(_DRAW_LIMIT, size=max(count, 1024), dtype=np.int64)
            self.draws = np.concatenate([self.draws[self.next_draw:], more])
            self.next_draw = 0

    def save(self, counters: npt.NDArray[np.int64]) -> None:
        """Write the round-robin index and the next draw where the compiled loop keeps them
        (``counters[1]`` and ``counters[3]``)."""
        counters[1], counters[3] = self.last_node_index, self.next_draw

    def load(self, counters: npt.NDArray[np.int64]) -> None:
        """Take them back after the compiled loop ran."""
        self.last_node_index, self.next_draw = int(counters[1]), int(counters[3])

    def choose(self, max_nodes: npt.NDArray[np.int64]) -> int:
        """Pick from ``max_nodes`` (in feasible-list order). Round-robin advances its index on
        every call, as ``selectHost`` did, even when one node has the top score."""
        if self.code == RANDOM:
            if len(max_nodes) == 1:
                return int(max_nodes[0])
            self.reserve(1)
            value = self.draws[self.next_draw]
            self.next_draw += 1
            return int(max_nodes[value % len(max_nodes)])
        choice = int(max_nodes[self.last_node_index % len(max_nodes)])
        self.last_node_index += 1
        return choice
