"""Host selection among the nodes that share the top score.

``round-robin`` is ``findMaxScores`` + ``lastNodeIndex`` of kube-scheduler v1.10-v1.14: a running
index, kept across pods, picks among the tied nodes in list order. ``random`` draws uniformly,
as newer releases do (reservoir sampling), from an explicit, seeded generator.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

TIE_BREAKS = ("round-robin", "random")


class TieBreaker:
    """Chooses one node among the max-score nodes; its state persists across a batch."""

    def __init__(self, mode: str = "round-robin",
                 seed: int | np.random.Generator | None = None) -> None:
        if mode not in TIE_BREAKS:
            raise ValueError(f"tie_break must be one of {', '.join(TIE_BREAKS)}, got {mode!r}")
        self.mode = mode
        self.last_node_index = 0
        self.rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)

    def choose(self, max_nodes: npt.NDArray[np.int64]) -> int:
        """Pick from ``max_nodes`` (in feasible-list order). Round-robin advances its index on
        every call, as ``selectHost`` did, even when one node has the top score."""
        if self.mode == "random":
            return int(max_nodes[self.rng.integers(len(max_nodes))] if len(max_nodes) > 1
                       else max_nodes[0])
        choice = int(max_nodes[self.last_node_index % len(max_nodes)])
        self.last_node_index += 1
        return choice
