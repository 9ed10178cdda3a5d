"""Small helpers shared by the in-tree plugins."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from ksched.framework.interfaces import Cycle

T = TypeVar("T")


def cycle_data(cycle: Cycle, key: str, compute: Callable[[], T]) -> T:
    """The value a plugin stored for this cycle under ``key``, computed on first use.

    PreFilter / PreScore fill it; Filter / Score recompute it when their pre-step did not run
    (a profile may disable one and keep the other).
    """
    if key not in cycle.data:
        cycle.data[key] = compute()
    return cycle.data[key]


def as_int64(values: Any) -> np.ndarray:
    return np.asarray(values, dtype=np.int64)
