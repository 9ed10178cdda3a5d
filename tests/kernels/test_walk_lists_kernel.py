"""The walk lists (:func:`ksched.kernels.loop_steps.walk_lists`): per class, the walk positions
of the nodes it may ever fit on, against a plain per-node check on random clusters; a class
listing more than ``most`` nodes, or past the room left, is not listed."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ksched.kernels.loop_steps import walk_lists

PODS_COL = 2


def _plain(order, ok_row, allocatable, request, checked, fit_enabled):
    """The positions a class may fit on, node by node."""
    return [i for i, node in enumerate(order)
            if ok_row[node] and (not fit_enabled or (
                allocatable[node, PODS_COL] >= 1
                and all(allocatable[node, col] >= request[col] for col in checked)))]


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_walk_lists_are_the_nodes_each_class_may_fit(data: st.DataObject) -> None:
    n = data.draw(st.integers(1, 30))
    classes = data.draw(st.integers(1, 6))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    order = rng.permutation(n).astype(np.int64)
    allocatable = rng.integers(0, 4, size=(n, 3)).astype(np.int64)
    ok_rows = rng.random((2, n)) < 0.8
    ok_row_of = rng.integers(0, 2, size=classes).astype(np.int64)
    requests = rng.integers(0, 4, size=(classes, 3)).astype(np.int64)
    checked = [np.flatnonzero(rng.random(2) < 0.6).astype(np.int64) for _ in range(classes)]
    indptr = np.concatenate([[0], np.cumsum([len(c) for c in checked])]).astype(np.int64)
    fit_enabled = data.draw(st.booleans())
    most, room = data.draw(st.integers(0, n)), data.draw(st.integers(0, 3 * n))

    listed, at, positions = walk_lists(order, ok_rows, ok_row_of, allocatable, PODS_COL, requests,
                                       indptr, np.concatenate(checked), fit_enabled, most, room)

    total = 0
    for k in range(classes):
        want = _plain(order, ok_rows[ok_row_of[k]], allocatable, requests[k], checked[k],
                      fit_enabled)
        fits = len(want) <= min(most, room - total)
        assert listed[k] == fits
        assert positions[at[k]:at[k + 1]].tolist() == (want if fits else [])
        total += len(want) if fits else 0
    assert at[-1] == total == len(positions)


def test_a_class_listing_more_than_most_nodes_is_not_listed() -> None:
    order = np.array([2, 0, 1, 3], np.int64)
    allocatable = np.array([[4, 4, 10]] * 4, np.int64)
    ok_rows = np.array([[True, True, True, True], [True, False, True, False]])
    listed, at, positions = walk_lists(
        order, ok_rows, np.array([0, 1], np.int64), allocatable, PODS_COL,
        np.array([[1, 1, 0], [1, 1, 0]], np.int64), np.array([0, 2, 4], np.int64),
        np.array([0, 1, 0, 1], np.int64), True, 3, 100)
    assert listed.tolist() == [False, True]
    assert positions[at[1]:at[2]].tolist() == [0, 1]  # nodes 2 and 0, first in the walk
