"""How many feasible nodes the walk looks for, and which top-score node is chosen.

Mirrors ``numFeasibleNodesToFind`` and ``selectHost`` (``pkg/scheduler/schedule_one.go``).
Host selection among tied nodes follows :mod:`ksched.framework.tiebreak`: a running
round-robin index, or the next value of a pre-drawn random stream. Both live in a ``state``
array shared with the fused loop (:mod:`ksched.kernels.schedule_loop`), at ``ROUND_ROBIN_AT``
and ``NEXT_DRAW_AT``.
"""

from __future__ import annotations

from ksched.constants import MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND, MIN_FEASIBLE_NODES_TO_FIND

from ._jit import jit

#: Tie-break modes: a running index over the tied nodes, or a pre-drawn random stream.
ROUND_ROBIN, RANDOM = 0, 1
#: Where the round-robin index and the next random draw are kept in a counters array.
ROUND_ROBIN_AT, NEXT_DRAW_AT = 1, 3


@jit
def num_feasible_nodes_to_find(percentage, num_all_nodes):
    """``numFeasibleNodesToFind``: how many feasible nodes the filter walk looks for.

    Below ``MIN_FEASIBLE_NODES_TO_FIND`` nodes, all of them; a percentage of 0 is adaptive
    (``50 - nodes / 125``, at least ``MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND``); never fewer
    than ``MIN_FEASIBLE_NODES_TO_FIND``.
    """
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage == 0:
        percentage = 50 - num_all_nodes // 125
        if percentage < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND:
            percentage = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND
    found = num_all_nodes * percentage // 100
    return max(found, MIN_FEASIBLE_NODES_TO_FIND)


@jit(inline="always")
def tie_index(ties, tie_mode, draws, state):
    """Which of ``ties`` tied nodes (in feasible-list order) is chosen: round-robin takes
    ``state[ROUND_ROBIN_AT] % ties`` and advances it on every call, even with one node;
    random takes ``draws[state[NEXT_DRAW_AT]] % ties`` when several are tied."""
    if tie_mode == ROUND_ROBIN:
        pick = state[ROUND_ROBIN_AT] % ties
        state[ROUND_ROBIN_AT] += 1
    elif ties > 1:
        pick = draws[state[NEXT_DRAW_AT]] % ties
        state[NEXT_DRAW_AT] += 1
    else:
        pick = 0
    return pick


@jit
def select_host(totals, tie_mode, draws, state):
    """``selectHost``: the position in ``totals`` (int64[n], n >= 1) of the chosen node among
    those with the top score (see :func:`tie_index`); ``state`` is updated in place."""
    best = totals[0]
    for i in range(1, totals.shape[0]):  # a loop: ``max()`` costs compile time
        if totals[i] > best:
            best = totals[i]
    ties = 0
    for i in range(totals.shape[0]):
        if totals[i] == best:
            ties += 1
    pick = tie_index(ties, tie_mode, draws, state)
    for i in range(totals.shape[0]):
        if totals[i] == best:
            if pick == 0:
                return i
            pick -= 1
    return 0
