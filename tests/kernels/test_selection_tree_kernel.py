"""The selection tree (:mod:`ksched.kernels.selection_tree`) against the plain walk it stands
for: ``findNodesThatPassFilters`` from the start index until ``numFeasibleNodesToFind`` feasible
nodes are found, then ``selectHost`` over them in walk order (the heap mode: Go's
``container/heap`` over them, written out in the select kernel's test)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ksched.kernels import select, selection_tree
from tests.go_heap import go_heap_pop_first

SETTINGS = settings(max_examples=300, deadline=None)


def reference_walk(feasible: list[bool], scores: list[int], start: int, to_find: int,
                   mode: int, draws: np.ndarray, state: np.ndarray) -> tuple[int, int]:
    """The plain walk: (chosen position or -1, nodes processed), the counters in ``state``
    advanced as :func:`ksched.kernels.select.select_host` advances them."""
    n = len(feasible)
    found, processed = [], 0
    for step in range(n):
        position = (start + step) % n
        if feasible[position]:
            if len(found) == to_find:
                break
            found.append(position)
        processed += 1
    if not found:
        return -1, processed
    if len(found) == 1:
        return found[0], processed
    totals = [scores[i] for i in found]
    if mode == select.HEAP:
        return found[go_heap_pop_first(totals)], processed
    at = select.select_host(np.array(totals, np.int64), mode, draws, state)
    return found[at], processed


def _tree(feasible: list[bool], scores: list[int]) -> tuple[np.ndarray, ...]:
    width = selection_tree.tree_width(len(feasible))
    count = np.zeros(2 * width, np.int32)
    best = np.zeros(2 * width, np.int64)
    ties = np.zeros(2 * width, np.int32)
    selection_tree.build(count, best, ties, np.array(feasible, np.bool_),
                         np.array(scores, np.int64))
    return count, best, ties


def _select(tree: tuple[np.ndarray, ...], n: int, start: int, to_find: int, mode: int,
            draws: np.ndarray, state: np.ndarray,
            allowed: np.ndarray | None = None) -> tuple[int, int]:
    """:func:`select_in_tree` over one tree, or over per-domain trees (``[D, 2L]`` arrays)
    with the ``allowed`` ones."""
    if allowed is None:
        tree, allowed = tuple(a[None, :] for a in tree), np.ones(1, np.bool_)
    segments = np.empty(selection_tree.SEGMENTS, np.int64)
    leaf, processed, *_ = selection_tree.select_in_tree(*tree, allowed, n, start, to_find, mode,
                                                        draws, state, segments)
    return int(leaf), int(processed)


nodes = st.integers(1, 70).flatmap(lambda n: st.tuples(
    st.lists(st.booleans(), min_size=n, max_size=n),
    st.lists(st.integers(0, 3), min_size=n, max_size=n),
    st.integers(0, n - 1), st.integers(1, n + 2)))


MODES = [select.ROUND_ROBIN, select.RANDOM, select.HEAP]


@SETTINGS
@given(nodes, st.sampled_from(MODES), st.integers(0, 50))
def test_one_selection_matches_the_walk(case, mode: int, index: int) -> None:
    feasible, scores, start, to_find = case
    draws = np.random.default_rng(index).integers(0, 1 << 30, 4)
    want_state = np.array([0, index, 0, 0, 0], np.int64)
    got_state = want_state.copy()
    want = reference_walk(feasible, scores, start, to_find, mode, draws, want_state)
    got = _select(_tree(feasible, scores), len(feasible), start, to_find, mode, draws,
                  got_state)
    assert got == want
    assert got_state.tolist() == want_state.tolist()


@SETTINGS
@given(nodes, st.lists(st.tuples(st.integers(0, 10**6), st.booleans(), st.integers(0, 3)),
                       max_size=30))
def test_leaf_updates_keep_the_tree_equal_to_a_fresh_one(case, updates) -> None:
    feasible, scores, start, to_find = case
    tree = _tree(feasible, scores)
    for where, ok, score in updates:
        position = where % len(feasible)
        feasible[position], scores[position] = ok, score
        selection_tree.set_leaf(*tree, position, ok, score)
    fresh = _tree(feasible, scores)
    for got, want in zip(tree, fresh):
        assert got.tolist() == want.tolist()
    draws = np.zeros(1, np.int64)
    state = np.zeros(5, np.int64)
    want_state = state.copy()
    assert _select(tree, len(feasible), start, to_find, select.ROUND_ROBIN, draws, state) == \
        reference_walk(feasible, scores, start, to_find, select.ROUND_ROBIN, draws, want_state)


@pytest.mark.parametrize(("mode", "n", "to_find"), [
    (select.ROUND_ROBIN, 257, 40), (select.HEAP, 257, 40), (select.HEAP, 300, 130),
    (select.HEAP, 1000, 1000)])
def test_a_long_run_of_placements_follows_the_walk(mode: int, n: int, to_find: int) -> None:
    """Thousands of selections on one tree, each placement lowering the chosen node's score
    and filling it after three pods, as the fused loop does: the chosen nodes, the nodes
    processed (so ``nextStartNodeIndex``) and the round-robin index agree at every step."""
    rng = np.random.default_rng(7)
    feasible = [bool(v) for v in rng.random(n) < 0.9]
    scores = [int(v) for v in rng.integers(5, 8, n)]
    pods_on = [0] * n
    tree = _tree(feasible, scores)
    draws = np.zeros(1, np.int64)
    state, want_state = np.zeros(5, np.int64), np.zeros(5, np.int64)
    start = 0
    for _ in range(3000):
        want = reference_walk(feasible, scores, start % n, to_find, mode, draws, want_state)
        got = _select(tree, n, start % n, to_find, mode, draws, state)
        assert got == want
        assert state.tolist() == want_state.tolist()
        chosen, processed = got
        start += processed
        if chosen < 0:
            break
        pods_on[chosen] += 1
        scores[chosen] -= 1
        feasible[chosen] = pods_on[chosen] < 3
        selection_tree.set_leaf(*tree, chosen, feasible[chosen], scores[chosen])
    assert chosen == -1  # the nodes filled up: the last pod fits nowhere


def test_no_feasible_node_processes_the_whole_walk() -> None:
    tree = _tree([False] * 5, [0] * 5)
    assert _select(tree, 5, 3, 2, select.ROUND_ROBIN, np.zeros(1, np.int64),
                   np.zeros(5, np.int64)) == (-1, 5)


def test_ties_are_taken_in_walk_order_across_the_wrap() -> None:
    """Scores 9 at positions 1 and 4; the walk from 3 meets 4 first, then 1 after the wrap:
    round-robin index 0 takes 4, index 1 takes 1."""
    tree = _tree([True] * 5, [0, 9, 0, 0, 9])
    draws = np.zeros(1, np.int64)
    state = np.zeros(5, np.int64)
    assert _select(tree, 5, 3, 5, select.ROUND_ROBIN, draws, state) == (4, 5)
    assert _select(tree, 5, 3, 5, select.ROUND_ROBIN, draws, state) == (1, 5)
    assert state[select.ROUND_ROBIN_AT] == 2


@SETTINGS
@given(nodes, st.lists(st.integers(0, 3), min_size=70, max_size=70),
       st.lists(st.booleans(), min_size=4, max_size=4),
       st.sampled_from(MODES))
def test_domain_trees_match_the_walk_over_the_allowed_domains(case, domain_of, allowed,
                                                              mode: int) -> None:
    """One tree per domain (a node's leaf in its domain's tree), queried with a mask of the
    domains a pod may use, as a hard spread constraint over few domains is: the walk over the
    nodes that pass and lie in an allowed domain."""
    feasible, scores, start, to_find = case
    n, domains = len(feasible), domain_of[:len(feasible)]
    trees = [_tree([ok and dom == d for ok, dom in zip(feasible, domains)], scores)
             for d in range(4)]
    stacked = tuple(np.stack([t[i] for t in trees]) for i in range(3))
    draws = np.random.default_rng(n).integers(0, 1 << 30, 4)
    state, want_state = np.zeros(5, np.int64), np.zeros(5, np.int64)
    passing = [ok and allowed[dom] for ok, dom in zip(feasible, domains)]
    want = reference_walk(passing, scores, start, to_find, mode, draws, want_state)
    assert _select(stacked, n, start, to_find, mode, draws, state,
                   np.array(allowed, np.bool_)) == want
    assert state.tolist() == want_state.tolist()


@SETTINGS
@given(st.integers(2, 300).flatmap(lambda n: st.tuples(
    st.lists(st.booleans(), min_size=n, max_size=n),
    st.lists(st.integers(0, 2), min_size=n, max_size=n),
    st.integers(0, n - 1), st.integers(2, n + 2))))
def test_heap_selection_over_wide_windows(case) -> None:
    """Windows of up to 300 feasible nodes with few distinct scores (ties at many depths of
    the heap): the tree's heap top is Go's, and it reports the window's count, top and ties."""
    feasible, scores, start, to_find = case
    n = len(feasible)
    state = np.zeros(5, np.int64)
    want = reference_walk(feasible, scores, start, to_find, select.HEAP, np.zeros(1, np.int64),
                          state.copy())
    segments = np.empty(selection_tree.SEGMENTS, np.int64)
    count, best, ties = (a[None, :] for a in _tree(feasible, scores))
    leaf, processed, found, top, top_ties = selection_tree.select_in_tree(
        count, best, ties, np.ones(1, np.bool_), n, start, to_find, select.HEAP,
        np.zeros(1, np.int64), state, segments)
    assert (leaf, processed) == want
    window = [(start + i) % n for i in range(n) if feasible[(start + i) % n]][:to_find]
    assert found == len(window)
    if len(window) > 1:
        totals = [scores[i] for i in window]
        assert (top, top_ties) == (max(totals), totals.count(max(totals)))
