"""When the Simulator samples (:mod:`ksched.kernels.samples`), against a plain loop over the
moments: the first moment at or after each due time, the next due the first multiple of the
period after it, counted from the last due time."""

from __future__ import annotations

import bisect
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ksched.kernels.samples import next_sample_time, sampled_moments


def _next_due(due: float, now: float, every: float) -> float:
    if due <= now:
        due += math.floor((now - due) / every) * every
        while due <= now:
            due = due + every if due + every > due else math.nextafter(now, math.inf)
    return due


def _sampled(times: list[float], due: float, every: float) -> tuple[list[int], float]:
    taken, i = [], bisect.bisect_left(times, due)
    while i < len(times):
        taken.append(i)
        due = _next_due(due, times[i], every)
        i = bisect.bisect_left(times, due, i + 1)
    return taken, due


def test_the_next_sample_is_the_first_multiple_of_the_period_after_now() -> None:
    assert next_sample_time(0.0, 125.0, 60.0) == 180.0
    assert next_sample_time(130.0, 125.0, 60.0) == 130.0  # not yet due: stays
    assert next_sample_time(60.0, 60.0, 60.0) == 120.0
    # a period below a float's step at ``now``: the next float after it
    assert next_sample_time(1e16, 1e16, 1e-3) == math.nextafter(1e16, math.inf)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0, 1e6, allow_nan=False), max_size=40),
       st.floats(0, 1e6, allow_nan=False), st.floats(1e-3, 1e5, allow_nan=False))
def test_sampled_moments_are_the_plain_loops(times: list[float], due: float,
                                             every: float) -> None:
    times.sort()
    taken, next_due = sampled_moments(np.array(times, dtype=np.float64), due, every)
    want, want_due = _sampled(times, due, every)
    assert taken.tolist() == want
    assert next_due == want_due
