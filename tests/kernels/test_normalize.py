"""``default_normalize_score`` (``helper.DefaultNormalizeScore``) against a plain Python version."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ksched.constants import MAX_NODE_SCORE
from ksched.kernels.normalize import default_normalize_score
from tests.strategies import reference_default_normalize

SETTINGS = settings(max_examples=60, deadline=None)

score_lists = st.one_of(
    st.lists(st.integers(0, 20), max_size=15),             # small: many ties and zeros
    st.lists(st.integers(0, 2**40), max_size=15),          # large: no overflow of 100 * s
    st.lists(st.just(0), max_size=5),                      # all zero
)


def run_kernel(scores: list[int], max_priority: int, reverse: bool) -> list[int]:
    array = np.array(scores, dtype=np.int64)
    assert default_normalize_score(array, max_priority, reverse) is None
    return array.tolist()


@SETTINGS
@given(score_lists, st.booleans(), st.sampled_from((MAX_NODE_SCORE, 10, 1, 7)))
def test_kernel_matches_reference(scores: list[int], reverse: bool, max_priority: int) -> None:
    got = run_kernel(scores, max_priority, reverse)
    assert got == reference_default_normalize(scores, max_priority, reverse)
    assert all(0 <= s <= max_priority for s in got)


@pytest.mark.parametrize("reverse, expected", [(False, [0, 0, 0]), (True, [100, 100, 100])])
def test_all_zero(reverse: bool, expected: list[int]) -> None:
    assert run_kernel([0, 0, 0], MAX_NODE_SCORE, reverse) == expected


def test_scaling_truncates() -> None:
    # 100 * 1 // 3 = 33, 100 * 2 // 3 = 66: Go's integer division, no rounding.
    assert run_kernel([1, 2, 3], MAX_NODE_SCORE, False) == [33, 66, 100]
    assert run_kernel([1, 2, 3], MAX_NODE_SCORE, True) == [67, 34, 0]


def test_ties_stay_tied() -> None:
    assert run_kernel([5, 5, 0, 5], MAX_NODE_SCORE, False) == [100, 100, 0, 100]
    assert run_kernel([5, 5, 0, 5], MAX_NODE_SCORE, True) == [0, 0, 100, 0]


def test_empty() -> None:
    assert run_kernel([], MAX_NODE_SCORE, True) == []
    assert run_kernel([], MAX_NODE_SCORE, False) == []
