"""How many feasible nodes the walk looks for, and which top-score node is chosen.

Mirrors ``numFeasibleNodesToFind`` and ``selectHost`` (``pkg/scheduler/schedule_one.go``).
Host selection among tied nodes follows :mod:`ksched.framework.tiebreak`: a running
round-robin index, the next value of a pre-drawn random stream, or v1.35's score heap
(:func:`heap_precedes`). The first two live in a ``state`` array shared with the fused loop
(:mod:`ksched.kernels.schedule_loop`), at ``ROUND_ROBIN_AT`` and ``NEXT_DRAW_AT``; the heap
keeps no state.
"""

from __future__ import annotations

from ksched.constants import (
    MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND,
    MIN_FEASIBLE_NODES_TO_FIND,
    TIE_BREAKS,
)

from ._jit import jit

#: Tie-break modes: a running index over the tied nodes, a pre-drawn random stream, or the
#: top of v1.35's score heap.
ROUND_ROBIN, RANDOM, HEAP = (TIE_BREAKS.index(m) for m in ("round-robin", "random", "heap"))
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


@jit(inline="always")
def heap_precedes(a, b):
    """Whether feasible-list position ``a`` beats position ``b`` (``a != b``, both of the top
    total) for the top of v1.35.4's score heap.

    ``schedulePod`` (``pkg/scheduler/schedule_one.go``) runs ``heap.Init`` (``container/heap``,
    Floyd's sift-downs) over the scored feasible list with ``Less`` = strictly higher total
    (``Randomizer`` is 0 without extenders) and takes what ends at index 0. A sift-down never
    swaps on equal totals and prefers the left child unless the right one is strictly higher,
    so, by induction over subtrees, a subtree's root ends up holding its own element if that
    is a maximum, else the left subtree's winner if the left holds a maximum, else the
    right's: the top is the maximum that comes first in PRE-ORDER of the implicit binary tree
    over 1-based positions. Two heap indices ``a + 1``, ``b + 1`` compare so: the deeper one
    shifted up to the shallower one's depth; equal, the shallower (its ancestor) comes first,
    else the smaller.
    """
    x, y = a + 1, b + 1
    dx, dy = heap_depth(x), heap_depth(y)
    if dx > dy:
        x >>= dx - dy
    else:
        y >>= dy - dx
    if x == y:
        return dx < dy
    return x < y


@jit(inline="always")
def heap_depth(index):
    """The depth of 1-based heap index ``index`` (the root's is 0)."""
    depth = 0
    while index > 1:
        index >>= 1
        depth += 1
    return depth


@jit(inner=True)
def select_top(totals, tie_mode, draws, state):
    """``selectHost``: (the position in ``totals`` (int64[n], n >= 1) of the chosen node among
    those with the top total, how many have it). Round-robin and random take the
    :func:`tie_index`-th of them in list order, the heap the one :func:`heap_precedes` puts
    first; ``state`` is updated in place."""
    best, ties, first = totals[0], 1, 0  # first: the first top position (the heap's first)
    for i in range(1, totals.shape[0]):  # a loop: ``max()`` costs compile time
        if totals[i] > best:
            best, ties, first = totals[i], 1, i
        elif totals[i] == best:
            ties += 1
            if tie_mode == HEAP and heap_precedes(i, first):
                first = i
    if tie_mode == HEAP:
        return first, ties
    pick = tie_index(ties, tie_mode, draws, state)
    for i in range(first, totals.shape[0]):
        if totals[i] == best:
            if pick == 0:
                return i, ties
            pick -= 1
    return first, ties


@jit
def select_host(totals, tie_mode, draws, state):
    """The position that :func:`select_top` chooses."""
    return select_top(totals, tie_mode, draws, state)[0]
