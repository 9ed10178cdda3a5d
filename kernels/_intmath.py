"""Go's arithmetic where Python's and numpy's differ: ``math.Round``."""

from __future__ import annotations

import numpy as np

from ._jit import jit


@jit(inline="always")
def go_round(x):
    """Go's ``math.Round`` as int64: the nearest integer, halves away from zero.

    ``y - floor(y)`` is exact for a float ``y >= 0``, so the half is detected on the exact
    binary value, as Go's bit-level implementation does.
    """
    y = abs(x)
    whole = np.floor(y)
    rounded = whole + 1.0 if y - whole >= 0.5 else whole
    return np.int64(-rounded if x < 0 else rounded)
