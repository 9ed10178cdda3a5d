"""``go_round`` (Go's ``math.Round``), used by RequestedToCapacityRatio and PodTopologySpread's
scores, against an exact decimal rounding of the same binary value."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ksched.kernels._intmath import go_round
from ksched.kernels.pod_topology_spread import round_scores


def reference_round(x: float) -> int:
    """Half away from zero, on the exact binary value of ``x``."""
    return int(Decimal(x).quantize(Decimal(1), rounding=ROUND_HALF_UP))


@pytest.mark.parametrize("x", [0.0, 0.5, 1.5, 2.5, -0.5, -2.5, 0.49999999999999994, 1e15 + 0.5,
                               2.4999999999999996, 7.999999999999999, -7.5])
def test_halves_round_away_from_zero(x: float) -> None:
    assert go_round(x) == reference_round(x)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(-1e12, 1e12, allow_nan=False), max_size=20))
def test_go_round_and_round_scores(values: list[float]) -> None:
    want = [reference_round(v) for v in values]
    assert [go_round(v) for v in values] == want
    assert round_scores(np.array(values, dtype=np.float64)).tolist() == want
