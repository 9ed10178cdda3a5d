"""``numFeasibleNodesToFind`` and ``selectHost`` (:mod:`ksched.kernels.select`), which the
framework and the fused loop both run, against plain Python transliterations of the Go code."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ksched.constants import MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND, MIN_FEASIBLE_NODES_TO_FIND
from ksched.framework.tiebreak import TieBreaker
from ksched.kernels import select
from ksched.profile import num_feasible_nodes_to_find as profile_num_feasible

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
        chosen = breaker.choose(top)
        assert chosen in top
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
