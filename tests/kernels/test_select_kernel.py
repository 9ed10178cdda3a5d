"""``numFeasibleNodesToFind`` and ``selectHost`` (:mod:`ksched.kernels.select`), which the
framework and the fused loop both run, against plain Python transliterations of the Go code;
the heap tie-break against ``container/heap``'s ``Init`` and ``Pop`` written out."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ksched.constants import MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND, MIN_FEASIBLE_NODES_TO_FIND
from ksched.framework.tiebreak import TieBreaker
from ksched.kernels import select
from ksched.profile import num_feasible_nodes_to_find as profile_num_feasible
from tests.go_heap import go_heap_pop_first

SETTINGS = settings(max_examples=200, deadline=None)


def reference_num_feasible(percentage: int, num_all_nodes: int) -> int:
    """``numFeasibleNodesToFind`` (``pkg/scheduler/schedule_one.go``), written out."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage == 0:
        percentage = 50 - num_all_nodes // 125
        if percentage < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND:
            percentage = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND
    num_nodes = num_all_nodes * percentage // 100
    if num_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return MIN_FEASIBLE_NODES_TO_FIND
    return num_nodes


@SETTINGS
@given(st.integers(0, 100), st.integers(0, 2_000_000))
def test_num_feasible_nodes_to_find(percentage: int, nodes: int) -> None:
    want = reference_num_feasible(percentage, nodes)
    assert select.num_feasible_nodes_to_find(percentage, nodes) == want
    assert profile_num_feasible(percentage, nodes) == want


@pytest.mark.parametrize(("nodes", "percentage", "want"), [
    (99, 0, 99), (100, 0, 100), (5000, 0, 500), (6000, 0, 300), (100_000, 0, 5000),
    (500, 10, 100), (5000, 100, 5000)])
def test_num_feasible_nodes_to_find_examples(nodes: int, percentage: int, want: int) -> None:
    assert select.num_feasible_nodes_to_find(percentage, nodes) == want


def reference_select_host(totals: list[int], mode: int, draws: list[int],
                          state: dict[str, int]) -> int:
    """``selectHost`` as ksched defines it: the top-score positions in list order, one of
    them by the running round-robin index (advanced on every call) or by the next draw
    (taken only when several are tied)."""
    top = [i for i, t in enumerate(totals) if t == max(totals)]
    if mode == select.ROUND_ROBIN:
        pick = state["index"] % len(top)
        state["index"] += 1
    elif len(top) > 1:
        pick = draws[state["draw"]] % len(top)
        state["draw"] += 1
    else:
        pick = 0
    return top[pick]


@SETTINGS
@given(st.lists(st.lists(st.integers(0, 3), min_size=1, max_size=8), min_size=1, max_size=10),
       st.sampled_from((select.ROUND_ROBIN, select.RANDOM)), st.integers(0, 2**32))
def test_select_host_and_the_tie_breaker_agree_with_the_reference(
        rounds: list[list[int]], mode: int, seed: int) -> None:
    draws = np.random.default_rng(seed).integers(1 << 62, size=len(rounds), dtype=np.int64)
    state = np.zeros(5, dtype=np.int64)
    want_state = {"index": 0, "draw": 0}
    breaker = TieBreaker(("round-robin", "random")[mode], seed)
    breaker.reserve(len(rounds))
    for totals in rounds:
        want = reference_select_host(totals, mode, draws.tolist(), want_state)
        assert select.select_host(np.array(totals, np.int64), mode, draws, state) == want
        top = np.flatnonzero(np.array(totals) == max(totals))
        assert breaker.select(np.array(totals)) in top
    assert (state[select.ROUND_ROBIN_AT], state[select.NEXT_DRAW_AT]) == (
        want_state["index"], want_state["draw"])


def test_round_robin_advances_with_one_top_node_and_random_does_not() -> None:
    state = np.zeros(5, dtype=np.int64)
    draws = np.array([5, 7], dtype=np.int64)
    assert select.select_host(np.array([1, 9, 3]), select.ROUND_ROBIN, draws, state) == 1
    assert select.select_host(np.array([1, 9, 3]), select.RANDOM, draws, state) == 1
    assert state.tolist() == [0, 1, 0, 0, 0]
    assert select.select_host(np.array([9, 9, 9]), select.RANDOM, draws, state) == 2
    assert select.select_host(np.array([9, 9]), select.ROUND_ROBIN, draws, state) == 1
    assert state.tolist() == [0, 2, 0, 1, 0]


# -------------------------------------------------------------- v1.35's score heap


def _heap(totals: list[int] | tuple[int, ...]) -> int:
    state = np.zeros(5, dtype=np.int64)
    got = select.select_host(np.array(totals, np.int64), select.HEAP, np.zeros(0, np.int64),
                             state)
    assert state.tolist() == [0] * 5  # the heap keeps no state
    return int(got)


def test_the_worked_example_of_batch_md() -> None:
    """BATCH.md: totals [443, 468, 493, 493] over A, B, C, D put D on top; the next pod's
    [443, 468, 493, 487] put C there."""
    assert go_heap_pop_first([443, 468, 493, 493]) == 3
    assert _heap([443, 468, 493, 493]) == 3
    assert go_heap_pop_first([443, 468, 493, 487]) == 2
    assert _heap([443, 468, 493, 487]) == 2


@pytest.mark.parametrize("size", range(1, 11))
def test_heap_every_tie_pattern_of_small_heaps(size: int) -> None:
    """Every pattern of three values over up to 10 positions (ties among any subset, in
    every arrangement with lower values): exactly Go's top."""
    for totals in itertools.product(range(3), repeat=size):
        assert _heap(totals) == go_heap_pop_first(list(totals)), totals


@pytest.mark.parametrize("size", range(1, 16))
def test_heap_every_set_of_tied_positions(size: int) -> None:
    """Every subset of positions holding the top total, the others each below it by a
    random amount: exactly Go's top."""
    rng = np.random.default_rng(size)
    for mask in range(1, 1 << size):
        totals = [100 if mask >> i & 1 else int(rng.integers(0, 100)) for i in range(size)]
        assert _heap(totals) == go_heap_pop_first(totals), totals


@pytest.mark.parametrize("size", range(1, 65))
def test_heap_random_patterns_up_to_64(size: int) -> None:
    """Many random heaps of each size up to 64: few values (many ties), many values, and a
    few tied maxima among spread values."""
    rng = np.random.default_rng(1000 + size)
    for trial in range(300):
        kind = trial % 3
        if kind == 0:
            totals = rng.integers(0, 3, size)
        elif kind == 1:
            totals = rng.integers(0, 1000, size)
        else:
            totals = rng.integers(0, 500, size)
            totals[rng.choice(size, int(rng.integers(1, min(size, 6) + 1)), replace=False)] = 600
        totals = totals.tolist()
        assert _heap(totals) == go_heap_pop_first(totals), totals


@SETTINGS
@given(st.lists(st.integers(0, 5), min_size=1, max_size=64))
def test_heap_matches_go_and_the_tie_breaker(totals: list[int]) -> None:
    want = go_heap_pop_first(totals)
    assert _heap(totals) == want
    breaker = TieBreaker("heap")
    assert breaker.select(np.array(totals)) == want
    position, ties = select.select_top(np.array(totals, np.int64), select.HEAP,
                                       np.zeros(0, np.int64), np.zeros(5, np.int64))
    assert (position, ties) == (want, totals.count(max(totals)))


def test_heap_precedes_is_preorder() -> None:
    """The rule itself on heap positions (0-based): a node before its descendants, a left
    subtree before the right one, whatever the depth."""
    assert select.heap_precedes(0, 5)  # the root first
    assert select.heap_precedes(3, 2)  # index 4 (under 2) before index 3
    assert not select.heap_precedes(2, 3)
    assert select.heap_precedes(1, 3)  # index 2 before its child 4
    assert not select.heap_precedes(3, 1)
    assert select.heap_precedes(7, 6)  # index 8 (under 4, under 2) before 7 (under 3)
    assert not select.heap_precedes(5, 7)  # index 6 (under 3) after 8
