"""Exact host selection without scanning: a tree over one pod class's node walk.

``findNodesThatPassFilters`` walks the nodes from ``nextStartNodeIndex`` until it has found
``numFeasibleNodesToFind`` feasible ones, and ``selectHost`` takes the top score among them,
ties broken in walk order (``pkg/scheduler/schedule_one.go``). For a pod class whose verdicts
and scores are node-local (a placement changes them on the chosen node only) and need no
normalisation over the window, a segment tree over the walk order answers the same questions
in O(log N) per pod: per segment it holds how many nodes are feasible, their top score and how
many of them share it. Leaves are updated one at a time as placements change nodes.

The walk's positions are grouped in blocks of ``BLOCK``; the tree's leaves are the blocks, and
the positions themselves are ``leaves`` = (``ok`` bool[n], ``score`` int64[n], ``domain``
int8[n]), read by scanning a block at the ends of a range. A tree of blocks is small enough to
stay in cache on a million nodes, where a tree of nodes misses it at every level.

A tree is three arrays over ``2 * L`` slots (``L`` a power of two, at least the number of
blocks; block ``b`` at slot ``L + b``): ``count`` int32, ``best`` int64 (``NONE`` where
nothing is feasible) and ``ties`` int32. A class whose hard topology spread constraint has few
domains keeps one tree per domain over the nodes of ``domain`` ``d`` (-1: in none), and each
pod's queries read the trees of the domains it may go to: ``count``, ``best`` and ``ties`` are
then ``[D, 2 * L]`` and ``allowed`` bool[D] says which rows count; with ``allowed=None`` they
are one tree's (1-D) over every position (``domain`` unread), and numba compiles that case
without the domain loops.
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload

from ._jit import jit
from .select import tie_index

#: ``best`` of a segment with no feasible node.
NONE = np.int64(-(2**62))
#: Room :func:`select_in_tree` needs for a range's covering slots (two per tree level).
SEGMENTS = 130
#: Walk positions per tree leaf (a power of two: ``1 << BLOCK_SHIFT``).
BLOCK_SHIFT = 3
BLOCK = 1 << BLOCK_SHIFT


@jit
def tree_width(num_walk):
    """``L``: the leaf count, a power of two, at least the blocks of ``num_walk`` positions
    (and 1)."""
    blocks = (num_walk + BLOCK - 1) >> BLOCK_SHIFT
    width = 1
    while width < blocks:
        width *= 2
    return width


@jit(_nrt=False)
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


@jit(_nrt=False)
def _block_leaf(count, best, ties, leaves, d, block):
    """The leaf of ``block`` from its positions (those of domain ``d``; all for ``d < 0``)."""
    ok, score, domain = leaves
    found, top, top_ties = 0, NONE, 0
    for i in range(block << BLOCK_SHIFT, min((block + 1) << BLOCK_SHIFT, ok.shape[0])):
        if ok[i] and (d < 0 or domain[i] == d):
            found += 1
            if score[i] > top:
                top, top_ties = score[i], 1
            elif score[i] == top:
                top_ties += 1
    slot = count.shape[0] // 2 + block
    count[slot], best[slot], ties[slot] = found, top, top_ties


@jit(_nrt=False)
def set_leaf(count, best, ties, leaves, d, position, feasible, score):
    """Position ``position`` becomes (``feasible``, ``score``) in ``leaves``; its block's leaf
    in domain ``d``'s tree (``d < 0``: the one tree) and the leaf's ancestors follow."""
    leaves[0][position], leaves[1][position] = feasible, score
    block = position >> BLOCK_SHIFT
    _block_leaf(count, best, ties, leaves, d, block)
    slot = (count.shape[0] // 2 + block) // 2
    while slot >= 1:
        _combine(count, best, ties, slot)
        slot //= 2


@jit(_nrt=False)
def build(count, best, ties, leaves, d):
    """Fill domain ``d``'s tree (``d < 0``: the one tree) from ``leaves`` (n <= ``BLOCK * L``
    positions)."""
    width = count.shape[0] // 2
    blocks = (leaves[0].shape[0] + BLOCK - 1) >> BLOCK_SHIFT
    for block in range(blocks):
        _block_leaf(count, best, ties, leaves, d, block)
    for slot in range(width + blocks, 2 * width):
        count[slot], best[slot], ties[slot] = 0, NONE, 0
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


def _counts(leaves, allowed, i):
    """Whether position ``i`` is feasible (in an allowed domain); compiled per case by
    :func:`_counts_impl`."""
    raise NotImplementedError("compiled only")


@overload(_counts, jit_options={"_nrt": False})
def _counts_impl(leaves, allowed, i):
    if isinstance(allowed, types.NoneType):
        return lambda leaves, allowed, i: leaves[0][i]

    def in_domains(leaves, allowed, i):
        d = leaves[2][i]
        return leaves[0][i] and d >= 0 and allowed[d]
    return in_domains


@jit(_nrt=False)
def count_before(count, allowed, leaves, end):
    """How many positions in ``[0, end)`` are feasible."""
    width = count.shape[-1] // 2
    total = 0
    lo, hi = width, width + (end >> BLOCK_SHIFT)
    while lo < hi:
        if lo & 1:
            total += _count_at(count, allowed, lo)
            lo += 1
        if hi & 1:
            hi -= 1
            total += _count_at(count, allowed, hi)
        lo //= 2
        hi //= 2
    for i in range((end >> BLOCK_SHIFT) << BLOCK_SHIFT, end):
        if _counts(leaves, allowed, i):
            total += 1
    return total


@jit(_nrt=False)
def kth_feasible(count, allowed, leaves, k):
    """The ``k``-th feasible position (1-based, at most the feasible count)."""
    width = count.shape[-1] // 2
    slot = 1
    while slot < width:
        left = _count_at(count, allowed, 2 * slot)
        if left >= k:
            slot = 2 * slot
        else:
            k -= left
            slot = 2 * slot + 1
    first = (slot - width) << BLOCK_SHIFT
    for i in range(first, first + BLOCK):
        if _counts(leaves, allowed, i):
            k -= 1
            if k == 0:
                return i
    return -1


@jit(_nrt=False)
def _kth_after(count, allowed, leaves, before, k):
    """The ``k``-th feasible position walking circularly from a position with ``before``
    feasible positions before it."""
    after = _count_at(count, allowed, 1) - before
    if k <= after:
        return kth_feasible(count, allowed, leaves, before + k)
    return kth_feasible(count, allowed, leaves, k - after)


@jit(_nrt=False)
def kth_from(count, allowed, leaves, start, k):
    """The ``k``-th feasible position walking circularly from position ``start``."""
    return _kth_after(count, allowed, leaves, count_before(count, allowed, leaves, start), k)


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


@jit(_nrt=False)
def _scan_top(leaves, allowed, lo, hi, top, top_ties):
    """(top, top_ties) with the feasible positions of ``[lo, hi)`` folded in."""
    score = leaves[1]
    for i in range(lo, hi):
        if _counts(leaves, allowed, i):
            if score[i] > top:
                top, top_ties = score[i], 1
            elif score[i] == top:
                top_ties += 1
    return top, top_ties


@jit(_nrt=False)
def _tree_top(best, ties, allowed, lo, hi, top, top_ties):
    """(top, top_ties) with blocks ``[lo, hi)`` folded in."""
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


@jit(_nrt=False)
def _top_in(best, ties, allowed, leaves, lo, hi, top, top_ties):
    """(top, top_ties) with the positions ``[lo, hi)`` folded in: the blocks the range covers
    whole from the tree, the others scanned."""
    if lo >= hi:
        return top, top_ties
    first, last = lo >> BLOCK_SHIFT, (hi - 1) >> BLOCK_SHIFT
    if first == last:
        return _scan_top(leaves, allowed, lo, hi, top, top_ties)
    top, top_ties = _scan_top(leaves, allowed, lo, (first + 1) << BLOCK_SHIFT, top, top_ties)
    top, top_ties = _tree_top(best, ties, allowed, first + 1, last, top, top_ties)
    return _scan_top(leaves, allowed, last << BLOCK_SHIFT, hi, top, top_ties)


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


@jit(_nrt=False)
def _scan_nth(leaves, allowed, lo, hi, top, nth):
    """The ``nth`` (0-based) feasible position of ``[lo, hi)`` scoring ``top``, or -1 with
    ``nth`` reduced by the matches there: returns (position, nth)."""
    score = leaves[1]
    for i in range(lo, hi):
        if score[i] == top and _counts(leaves, allowed, i):
            if nth == 0:
                return i, nth
            nth -= 1
    return -1, nth


@jit(_nrt=False)
def _tree_nth(best, ties, allowed, lo, hi, top, nth, segments):
    """The block holding the ``nth`` (0-based) node scoring ``top`` in blocks ``[lo, hi)``,
    in order, with ``nth`` counted within it, or -1 with ``nth`` reduced by the matches
    there: returns (block, nth). ``segments`` is scratch room for the range's covering slots
    (int64[2 * depth + 2])."""
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


@jit(_nrt=False)
def _nth_top_in(best, ties, allowed, leaves, lo, hi, top, nth, segments):
    """The ``nth`` (0-based) feasible position of ``[lo, hi)`` scoring ``top``, in walk
    order, or -1 with ``nth`` reduced by the matches there: returns (position, nth)."""
    if lo >= hi:
        return -1, nth
    first, last = lo >> BLOCK_SHIFT, (hi - 1) >> BLOCK_SHIFT
    if first == last:
        return _scan_nth(leaves, allowed, lo, hi, top, nth)
    position, nth = _scan_nth(leaves, allowed, lo, (first + 1) << BLOCK_SHIFT, top, nth)
    if position >= 0:
        return position, nth
    block, nth = _tree_nth(best, ties, allowed, first + 1, last, top, nth, segments)
    if block >= 0:
        return _scan_nth(leaves, allowed, block << BLOCK_SHIFT, (block + 1) << BLOCK_SHIFT,
                         top, nth)
    return _scan_nth(leaves, allowed, last << BLOCK_SHIFT, hi, top, nth)


@jit(_nrt=False)
def select_in_tree(count, best, ties, allowed, leaves, num_walk, start, to_find, tie_mode,
                   draws, state, segments):
    """The walk and ``selectHost`` of one pod from position ``start`` (``nextStartNodeIndex``
    modulo the walk's length), over the ``allowed`` domains' trees: returns (chosen position
    or -1 when no node is feasible, nodes processed). The walk stops at the first feasible
    node beyond ``to_find``; the nodes processed are those before it (all of them when it is
    not reached). The tie among the top-score nodes of the window is taken as
    :func:`~ksched.kernels.select.select_host` takes it (not asked when the window holds one
    node, as upstream skips scoring then)."""
    feasible = _count_at(count, allowed, 1)
    if feasible == 0:
        return -1, num_walk
    found = to_find if to_find < feasible else feasible
    before = count_before(count, allowed, leaves, start)
    processed = num_walk
    if feasible > to_find:
        processed = _kth_after(count, allowed, leaves, before, to_find + 1) - start
        if processed < 0:
            processed += num_walk
    last = _kth_after(count, allowed, leaves, before, found)
    if found == 1:
        return last, processed
    wraps = last < start
    end = num_walk if wraps else last + 1
    top, top_ties = _top_in(best, ties, allowed, leaves, start, end, NONE, 0)
    if wraps:
        top, top_ties = _top_in(best, ties, allowed, leaves, 0, last + 1, top, top_ties)
    nth = tie_index(top_ties, tie_mode, draws, state)
    position, nth = _nth_top_in(best, ties, allowed, leaves, start, end, top, nth, segments)
    if position < 0:
        position, nth = _nth_top_in(best, ties, allowed, leaves, 0, last + 1, top, nth,
                                    segments)
    return position, processed
