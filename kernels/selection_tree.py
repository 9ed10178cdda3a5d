"""Exact host selection without scanning: a tree over one pod class's node walk.

``findNodesThatPassFilters`` walks the nodes from ``nextStartNodeIndex`` until it has found
``numFeasibleNodesToFind`` feasible ones, and ``selectHost`` takes the top score among them,
ties broken in walk order (``pkg/scheduler/schedule_one.go``). For a pod class whose verdicts
and scores are node-local (a placement changes them on the chosen node only) and need no
normalisation over the window, a segment tree over the walk order answers the same questions
in O(log N) per pod: per segment it holds how many nodes are feasible, their top score and how
many of them share it. Leaves are updated one at a time as placements change nodes.

A tree is three arrays over ``2 * L`` slots (``L`` a power of two, at least the walk's length;
leaf ``i`` at slot ``L + i``): ``count`` int32, ``best`` int64 (``NONE`` where nothing is
feasible) and ``ties`` int32. A class whose hard topology spread constraint has few domains
keeps one tree per domain (a node's leaf lives in its domain's tree), and each pod's queries
read the trees of the domains it may go to: ``count``, ``best`` and ``ties`` are then
``[D, 2 * L]`` and ``allowed`` bool[D] says which rows count; with ``allowed=None`` they are
one tree's (1-D), and numba compiles that case without the domain loops.
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload

from ._jit import jit
from .select import HEAP, heap_depth, heap_precedes, tie_index

#: ``best`` of a segment with no feasible node.
NONE = np.int64(-(2**62))
#: Room :func:`select_in_tree` needs for a range's covering slots (two per tree level).
SEGMENTS = 130


@jit(inner=True)
def tree_width(num_walk):
    """``L``: the leaf count, a power of two, at least ``num_walk`` (and 1)."""
    width = 1
    while width < num_walk:
        width *= 2
    return width


@jit(_nrt=False, inner=True)
def _combine(count, best, ties, slot):
    """Slot ``slot`` from its two children."""
    left, right = 2 * slot, 2 * slot + 1
    count[slot] = count[left] + count[right]
    if best[left] > best[right]:
        best[slot], ties[slot] = best[left], ties[left]
    elif best[right] > best[left]:
        best[slot], ties[slot] = best[right], ties[right]
    else:
        best[slot], ties[slot] = best[left], ties[left] + ties[right]


@jit(_nrt=False, inner=True)
def set_leaf(count, best, ties, position, feasible, score):
    """Leaf ``position`` becomes (``feasible``, ``score``); its ancestors follow."""
    width = count.shape[0] // 2
    slot = width + position
    if feasible:
        count[slot], best[slot], ties[slot] = 1, score, 1
    else:
        count[slot], best[slot], ties[slot] = 0, NONE, 0
    slot //= 2
    while slot >= 1:
        _combine(count, best, ties, slot)
        slot //= 2


@jit(inner=True)
def build(count, best, ties, feasible, score):
    """Fill a tree from its leaves (``feasible`` bool[n], ``score`` int64[n], n <= L)."""
    width = count.shape[0] // 2
    for slot in range(width, count.shape[0]):
        count[slot], best[slot], ties[slot] = 0, NONE, 0
    for i in range(feasible.shape[0]):
        if feasible[i]:
            count[width + i], best[width + i], ties[width + i] = 1, score[i], 1
    for slot in range(width - 1, 0, -1):
        _combine(count, best, ties, slot)


def _count_at(count, allowed, slot):
    """Feasible nodes under ``slot`` (in the allowed domains); compiled per case by
    :func:`_count_at_impl`."""
    raise NotImplementedError("compiled only")


@overload(_count_at, jit_options={"_nrt": False})
def _count_at_impl(count, allowed, slot):
    if isinstance(allowed, types.NoneType):
        return lambda count, allowed, slot: count[slot]

    def in_domains(count, allowed, slot):
        total = 0
        for d in range(allowed.shape[0]):
            if allowed[d]:
                total += count[d, slot]
        return total
    return in_domains


@jit(_nrt=False, inner=True)
def count_before(count, allowed, end):
    """How many leaves in ``[0, end)`` are feasible."""
    width = count.shape[-1] // 2
    total = 0
    lo, hi = width, width + end
    while lo < hi:
        if lo & 1:
            total += _count_at(count, allowed, lo)
            lo += 1
        if hi & 1:
            hi -= 1
            total += _count_at(count, allowed, hi)
        lo //= 2
        hi //= 2
    return total


@jit(_nrt=False, inner=True)
def kth_feasible(count, allowed, k):
    """The leaf of the ``k``-th feasible node (1-based, at most the feasible count)."""
    width = count.shape[-1] // 2
    slot = 1
    while slot < width:
        left = _count_at(count, allowed, 2 * slot)
        if left >= k:
            slot = 2 * slot
        else:
            k -= left
            slot = 2 * slot + 1
    return slot - width


@jit(_nrt=False, inner=True)
def _kth_after(count, allowed, before, k):
    """The leaf of the ``k``-th feasible node walking circularly from a leaf with ``before``
    feasible leaves before it."""
    after = _count_at(count, allowed, 1) - before
    if k <= after:
        return kth_feasible(count, allowed, before + k)
    return kth_feasible(count, allowed, k - after)


@jit(_nrt=False, inner=True)
def kth_from(count, allowed, start, k):
    """The leaf of the ``k``-th feasible node walking circularly from leaf ``start``."""
    return _kth_after(count, allowed, count_before(count, allowed, start), k)


def _fold(best, ties, allowed, slot, top, top_ties):
    """(top, top_ties) with ``slot`` (its allowed domains) folded in; compiled per case by
    :func:`_fold_impl`."""
    raise NotImplementedError("compiled only")


@overload(_fold, jit_options={"_nrt": False})
def _fold_impl(best, ties, allowed, slot, top, top_ties):
    if isinstance(allowed, types.NoneType):
        def one(best, ties, allowed, slot, top, top_ties):
            if best[slot] > top:
                return best[slot], ties[slot]
            return top, top_ties + (ties[slot] if best[slot] == top else 0)
        return one

    def in_domains(best, ties, allowed, slot, top, top_ties):
        for d in range(allowed.shape[0]):
            if allowed[d]:
                if best[d, slot] > top:
                    top, top_ties = best[d, slot], ties[d, slot]
                elif best[d, slot] == top:
                    top_ties += ties[d, slot]
        return top, top_ties
    return in_domains


@jit(_nrt=False, inner=True)
def _top_in(best, ties, allowed, lo, hi, top, top_ties):
    """Fold the top score and its tie count over leaves ``[lo, hi)`` into (top, top_ties)."""
    width = best.shape[-1] // 2
    lo += width
    hi += width
    while lo < hi:
        if lo & 1:
            top, top_ties = _fold(best, ties, allowed, lo, top, top_ties)
            lo += 1
        if hi & 1:
            hi -= 1
            top, top_ties = _fold(best, ties, allowed, hi, top, top_ties)
        lo //= 2
        hi //= 2
    return top, top_ties


def _matches(best, ties, allowed, slot, top):
    """How many nodes under ``slot`` (allowed domains) score ``top``, none scoring more;
    compiled per case by :func:`_matches_impl`."""
    raise NotImplementedError("compiled only")


@overload(_matches, jit_options={"_nrt": False})
def _matches_impl(best, ties, allowed, slot, top):
    if isinstance(allowed, types.NoneType):
        return lambda best, ties, allowed, slot, top: ties[slot] if best[slot] == top else 0

    def in_domains(best, ties, allowed, slot, top):
        total = 0
        for d in range(allowed.shape[0]):
            if allowed[d] and best[d, slot] == top:
                total += ties[d, slot]
        return total
    return in_domains


@jit(_nrt=False, inner=True)
def _nth_top_in(best, ties, allowed, lo, hi, top, nth, segments):
    """The leaf of the ``nth`` (0-based) node scoring ``top`` in ``[lo, hi)``, in leaf order,
    or -1 with ``nth`` reduced by the matches there: returns (leaf, nth). ``segments`` is
    scratch room for the range's covering slots (int64[2 * depth + 2])."""
    width = best.shape[-1] // 2
    lo += width
    hi += width
    n_left, right_end = 0, segments.shape[0]
    right_at = right_end
    while lo < hi:
        if lo & 1:
            segments[n_left] = lo
            n_left += 1
            lo += 1
        if hi & 1:
            hi -= 1
            right_at -= 1
            segments[right_at] = hi
        lo //= 2
        hi //= 2
    for j in range(n_left + right_end - right_at):
        slot = segments[j] if j < n_left else segments[right_at + j - n_left]
        here = _matches(best, ties, allowed, slot, top)
        if nth >= here:
            nth -= here
            continue
        while slot < width:
            matches = _matches(best, ties, allowed, 2 * slot, top)
            if nth < matches:
                slot = 2 * slot
            else:
                nth -= matches
                slot = 2 * slot + 1
        return slot - width, nth
    return -1, nth


@jit(_nrt=False, inner=True)
def select_in_tree(count, best, ties, allowed, num_walk, start, to_find, tie_mode, draws,
                   state, segments):
    """The walk and ``selectHost`` of one pod from leaf ``start`` (``nextStartNodeIndex``
    modulo the walk's length), over the ``allowed`` domains' trees: returns (chosen leaf or
    -1 when no node is feasible, nodes processed, feasible nodes in the window, their top
    score, how many have it). The walk stops at the first feasible node beyond ``to_find``;
    the nodes processed are those before it (all of them when it is not reached). The tie
    among the top-score nodes of the window is taken as
    :func:`~ksched.kernels.select.select_top` takes it (not asked when the window holds one
    node, as upstream skips scoring then: its top is then ``NONE``)."""
    feasible = _count_at(count, allowed, 1)
    if feasible == 0:
        return -1, num_walk, 0, NONE, 0
    found = to_find if to_find < feasible else feasible
    before = count_before(count, allowed, start)
    processed = num_walk
    if feasible > to_find:
        processed = _kth_after(count, allowed, before, to_find + 1) - start
        if processed < 0:
            processed += num_walk
    last = _kth_after(count, allowed, before, found)
    if found == 1:
        return last, processed, 1, NONE, 1
    wraps = last < start
    end = num_walk if wraps else last + 1
    # Integer arguments as int64 values, not literals: numba compiles a callee once per
    # literal it is called with.
    top, top_ties = _top_in(best, ties, allowed, start, end, NONE, np.int64(0))
    if wraps:
        top, top_ties = _top_in(best, ties, allowed, np.int64(0), last + 1, top, top_ties)
    if tie_mode == HEAP:
        leaf = _heap_top_in(count, best, ties, allowed, start, last, before, found, top,
                            segments)
        return leaf, processed, found, top, top_ties
    nth = tie_index(top_ties, tie_mode, draws, state)
    leaf, nth = _nth_top_in(best, ties, allowed, start, end, top, nth, segments)
    if leaf < 0:
        leaf, nth = _nth_top_in(best, ties, allowed, np.int64(0), last + 1, top, nth, segments)
    return leaf, processed, found, top, top_ties


@jit(_nrt=False, inner=True)
def _heap_top_in(count, best, ties, allowed, start, last, before, found, top, segments):
    """The leaf of the window (leaves ``start`` to ``last`` circularly, ``found`` feasible,
    ``before`` feasible leaves before ``start``) that v1.35's score heap puts on top among
    those scoring ``top``: the one :func:`~ksched.kernels.select.heap_precedes` puts first
    by its feasible-list position (feasible leaves of the window before it).

    Within one depth of the heap's tree the smallest position comes first, so only each
    depth's first top-score position matters: found depth by depth, as the first top-score
    leaf at or after the depth's first position, which also skips the depths holding none.
    A leftmost position (a power of two, 1-based) is first in its subtree and ends it."""
    leaf, rank = _first_top_from(count, best, ties, allowed, start, last, before, np.int64(0),
                                 top, segments)
    level = heap_depth(rank + 1)
    while (rank + 1) != (1 << heap_depth(rank + 1)):
        level += 1
        if (1 << level) > found:
            break
        other, other_rank = _first_top_from(count, best, ties, allowed, start, last, before,
                                            (1 << level) - 1, top, segments)
        if other < 0:
            break
        level = heap_depth(other_rank + 1)
        if heap_precedes(other_rank, rank):
            leaf, rank = other, other_rank
    return leaf


@jit(_nrt=False, inner=True)
def _first_top_from(count, best, ties, allowed, start, last, before, rank, top, segments):
    """The first leaf scoring ``top`` in the window (see :func:`_heap_top_in`) at feasible
    position ``rank`` or later, and its position: (leaf, position), (-1, -1) when none."""
    total = _count_at(count, allowed, 1)
    if rank >= total:
        return -1, -1
    lo = _kth_after(count, allowed, before, rank + 1)
    if lo <= last:  # the rest of the window lies between lo and last
        leaf, _ = _nth_top_in(best, ties, allowed, lo, last + 1, top, np.int64(0), segments)
    else:  # lo is before the wrap
        leaf, _ = _nth_top_in(best, ties, allowed, lo, best.shape[-1] // 2, top, np.int64(0),
                              segments)  # padding leaves never score top
        if leaf < 0:
            leaf, _ = _nth_top_in(best, ties, allowed, np.int64(0), last + 1, top, np.int64(0),
                                  segments)
    if leaf < 0:
        return -1, -1
    at = count_before(count, allowed, leaf) - before
    if leaf < start:
        at += total
    return leaf, at
