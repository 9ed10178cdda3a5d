"""The simulator's preemption kernels against plain versions built on the reference ones.

``best_candidate`` (one pass) against ``pick_candidate`` (``pickOneNodeForPreemption``'s
criteria filtered in turn); ``failing_walk`` (with and without its cache) against
``walk_filters`` and a plain tally; ``fit_code_with`` against ``walk_filters`` on one node;
``discard_slot`` against ``NodeInfo.RemovePod``'s order on a list.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ksched.kernels.node_resources_fit import UNRESOLVABLE
from ksched.kernels.preemption import (
    CANDIDATE,
    FIT_FAILURE,
    NO_VICTIMS,
    best_candidate,
    discard_slot,
    failing_walk,
    fit_code_with,
    pick_candidate,
    static_split,
    walk_filters,
)

SETTINGS = settings(max_examples=200, deadline=None)
I64 = np.int64


@st.composite
def dry_run_outcomes(draw):
    """What ``dry_run`` leaves: per tried node its kind and victims (priority, start)."""
    tried = draw(st.integers(0, 12))
    kinds, indptr, priority, start = [], [0], [], []
    for _ in range(tried):
        kind = draw(st.sampled_from([CANDIDATE, CANDIDATE, CANDIDATE, NO_VICTIMS, FIT_FAILURE]))
        kinds.append(kind)
        for _ in range(draw(st.integers(1, 3)) if kind == CANDIDATE else 0):
            priority.append(draw(st.integers(-2, 1)))
            start.append(draw(st.sampled_from([0.0, 1.0, 2.0, np.inf])))
        indptr.append(len(priority))
    nodes = draw(st.permutations(range(tried)))
    rank = draw(st.permutations(range(tried)))
    return (tried, np.array(kinds, I64), np.array(nodes, I64), np.array(indptr, I64),
            np.array(priority, I64), np.array(start), np.array(rank, I64))


@SETTINGS
@given(dry_run_outcomes())
def test_best_candidate_is_the_one_pick_candidate_picks(outcome) -> None:
    tried, kinds, nodes, indptr, priority, start, rank = outcome
    positions = np.flatnonzero(kinds == CANDIDATE)
    got = best_candidate(tried, kinds, nodes, indptr, priority, start, rank)
    if not len(positions):
        assert got == -1
        return
    _, best = pick_candidate(indptr[positions], indptr[positions + 1],
                             np.zeros(len(positions), I64), priority, start,
                             rank[nodes[positions]])
    assert got == positions[best]


@st.composite
def walks(draw):
    """Nodes with one resource column besides pods, some failing a node-static filter, some
    with nominated pods; a pod asking for some of the resource."""
    n = draw(st.integers(1, 8))
    allocatable = np.array([[draw(st.sampled_from([0, 2, 4])), draw(st.sampled_from([1, 4]))]
                            for _ in range(n)], I64)
    requested = np.array([[draw(st.integers(0, 4)), draw(st.integers(0, 2))]
                          for _ in range(n)], I64)
    static_first = np.array([draw(st.sampled_from([-1, -1, 0, 2])) for _ in range(n)], I64)
    static_ids = np.array([draw(st.integers(0, 1)) for _ in range(n)], I64)
    resolvable = np.array([False, draw(st.booleans())])
    nominated = np.array([draw(st.booleans()) for _ in range(n)])
    extra = np.array([[draw(st.integers(0, 2)), draw(st.integers(0, 1))] for _ in range(n)], I64)
    order = np.array(draw(st.permutations(range(n))), I64)
    request = np.array([draw(st.integers(1, 3)), 1], I64)
    return order, static_first, static_ids, resolvable, allocatable, requested, nominated, \
        extra, request


def reference_failing_walk(order, static_first, static_ids, resolvable, allocatable, requested,
                           nominated, extra, request):
    """:func:`walk_filters`' verdicts (NodeResourcesFit at position 1) tallied node by node."""
    kinds, codes = np.empty(len(order), I64), np.empty(len(order), I64)
    walk_filters(order, static_first, 1, allocatable, requested, 1, request,
                 np.array([0], I64), False, I64(0), nominated, extra, kinds, codes)
    static_counts, fit_counts, potential = [0, 0], {}, []
    for node, kind, code in zip(order.tolist(), kinds.tolist(), codes.tolist()):
        if kind == 0:
            return (-1, -1), None
        if kind == 1:
            static_counts[static_ids[node]] += 1
            might_help = resolvable[static_ids[node]]
        else:
            fit_counts[code] = fit_counts.get(code, 0) + 1
            might_help = not code & int(UNRESOLVABLE)
        if might_help:
            if static_first[node] >= 0:
                return (-2, -2), None
            potential.append(node)
    return (len(fit_counts), len(potential)), (static_counts, fit_counts, potential)


def run_failing_walk(walk, cached, node_stamp, nominated_stamp, cache_stamp, cache_code,
                     split=False):
    order, static_first, static_ids, resolvable, allocatable, requested, nominated, extra, \
        request = walk
    n = len(order)
    base = np.zeros(2, I64)
    if split:  # only the nodes whose verdict may change, the others counted beforehand
        order, base = static_split(order, static_first, static_ids, resolvable, 1, 2)
    static_counts, codes, counts = np.zeros(2, I64), np.zeros(8, I64), np.zeros(8, I64)
    potential = np.zeros(n, I64)
    result = failing_walk(order, static_first, static_ids, resolvable, 1, allocatable,
                          requested, 1, request, np.array([0], I64), False, I64(0), nominated,
                          extra, cached, node_stamp, nominated_stamp, cache_stamp, cache_code,
                          base, static_counts, codes, counts, potential)
    if result[0] < 0:
        return tuple(result), None
    distinct, found = result
    tally = dict(zip(codes[:distinct].tolist(), counts[:distinct].tolist()))
    return tuple(result), (static_counts.tolist(), tally, potential[:found].tolist())


@SETTINGS
@given(walks(), st.data())
def test_failing_walk_tallies_walk_filters_verdicts_with_and_without_its_cache(walk, data):
    n = len(walk[0])
    stamps = [np.zeros(n, I64), np.zeros(n, I64), np.full(n, -1, I64), np.zeros(n, I64)]
    expected = reference_failing_walk(*walk)
    assert run_failing_walk(walk, False, *stamps) == expected
    assert run_failing_walk(walk, True, *stamps) == expected
    assert run_failing_walk(walk, False, *stamps, split=True) == expected
    # Change some nodes' requests or nominations, bumping their stamps: the cache follows.
    requested, extra = walk[5], walk[7]
    for node in data.draw(st.lists(st.integers(0, n - 1), max_size=3)):
        if data.draw(st.booleans()):
            requested[node, 0] = data.draw(st.integers(0, 4))
            stamps[0][node] += 1
        else:
            extra[node, 0] = data.draw(st.integers(0, 2))
            stamps[1][node] += 1
    assert run_failing_walk(walk, True, *stamps) == reference_failing_walk(*walk)
    assert run_failing_walk(walk, True, *stamps, split=True) == reference_failing_walk(*walk)


@SETTINGS
@given(walks(), st.data())
def test_fit_code_with_added_requests_is_walk_filters_verdict(walk, data):
    _, _, _, _, allocatable, requested, nominated, extra, request = walk
    node = data.draw(st.integers(0, len(allocatable) - 1))
    kinds, codes = np.empty(1, I64), np.empty(1, I64)
    walk_filters(np.array([node], I64), np.full(len(allocatable), -1, I64), 0, allocatable,
                 requested, 1, request, np.array([0], I64), False, I64(0), nominated, extra,
                 kinds, codes)
    added = extra[node] if nominated[node] else np.zeros(2, I64)
    assert fit_code_with(node, allocatable, requested, 1, request, np.array([0], I64), False,
                         I64(0), added) == codes[0]


@SETTINGS
@given(st.lists(st.integers(0, 99), min_size=1, max_size=6, unique=True), st.data())
def test_discard_slot_moves_the_last_pod_into_the_gap(serials, data):
    gone = data.draw(st.sampled_from(serials))
    width = len(serials) + 1
    slots = np.full((2, width), -1, I64)
    slots[1, :len(serials)] = serials
    priority = slots * 10
    start = slots.astype(np.float64) / 2
    request = np.repeat(slots[:, :, None], 3, axis=2)
    counts, stamp = np.array([0, len(serials)], I64), np.zeros(2, I64)
    discard_slot(slots, priority, start, request, counts, stamp, 1, gone)
    expected = list(serials)
    expected[expected.index(gone)] = expected[-1]
    expected.pop()
    assert slots[1, :counts[1]].tolist() == expected
    assert slots[1, counts[1]:].tolist() == [-1] * (width - len(expected))
    assert priority[1, :counts[1]].tolist() == [10 * s for s in expected]
    assert start[1, :counts[1]].tolist() == [s / 2 for s in expected]
    assert request[1, :counts[1], 2].tolist() == expected
    assert stamp.tolist() == [0, 1]


def test_discard_slot_refuses_a_pod_the_node_does_not_hold():
    slots = np.array([[3, 4, -1]], I64)
    with pytest.raises(ValueError, match="not in the table"):
        discard_slot(slots, slots.copy(), slots.astype(float), slots[:, :, None].copy(),
                     np.array([2], I64), np.zeros(1, I64), 0, 7)
