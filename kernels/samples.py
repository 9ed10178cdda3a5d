"""When the Simulator samples the cluster (its ``sample_every``): a sample is due at a time on a
grid of that period, and taken at the first moment at or after it where the queue is empty."""

from __future__ import annotations

import numpy as np

from ._jit import jit


@jit
def next_sample_time(due, now, every):
    """After a sample taken at ``now`` (``due`` or later), when the next one is due: the first
    multiple of ``every`` after ``now``, counted from ``due``."""
    if due <= now:
        due += np.floor((now - due) / every) * every
        while due <= now:  # where ``every`` is below a float's step there, the next float
            due = due + every if due + every > due else np.nextafter(now, np.inf)
    return due


@jit
def sampled_moments(times, due, every):
    """Of moments at ``times`` (ascending) where a sample may be taken, those where one is,
    the first due at ``due``: each the first at or after its due time. Returns (their indices,
    when the next sample is due)."""
    n = times.shape[0]
    taken = np.empty(n, dtype=np.int64)
    count = 0
    i = np.searchsorted(times, due)
    while i < n:
        taken[count] = i
        count += 1
        due = next_sample_time(due, times[i], every)
        i += 1 + np.searchsorted(times[i + 1:], due)
    return taken[:count], due
