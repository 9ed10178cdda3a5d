"""Small parts of the :class:`~ksched.simulator.Simulator`: the pod as bound, made when first
needed, and its finite-number arguments."""

from __future__ import annotations

import math
import numbers
from typing import Any

from ksched.api import Pod
from ksched.errors import ArgumentError

__all__ = ["Placed", "finite_argument"]


class Placed:
    """The pod as bound, made on first call (most preempting attempts bind nothing): started
    now, its nomination done with."""

    __slots__ = ("pod", "start_time", "_made")

    def __init__(self, pod: Pod, start_time: float) -> None:
        self.pod, self.start_time, self._made = pod, start_time, None

    def __call__(self) -> Pod:
        if self._made is None:
            self._made = self.pod.with_status(self.start_time, "")
        return self._made


def finite_argument(value: Any, field: str) -> float:
    """``value`` as a float, refused unless a finite real number (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) \
            or not math.isfinite(value):
        raise ArgumentError(f"Simulator: {field}: must be a finite number, got {value!r}")
    return float(value)
