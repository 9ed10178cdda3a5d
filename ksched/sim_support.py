"""Small parts of the :class:`~ksched.simulator.Simulator`: the pod as bound, made when first
needed, and its finite-number arguments."""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from ksched.api import Pod
from ksched.constants import CPU
from ksched.errors import ArgumentError, InvalidObjectError
from ksched.kernels.samples import next_sample_time
from ksched.state import ClusterState

__all__ = ["Placed", "check_resize", "finite_argument", "next_sample_time"]


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


def check_resize(state: ClusterState, node: int, pod: Pod, asked: np.ndarray) -> None:
    """Refuses an in-place update of a pod bound to node row ``node`` that asks the node for
    more than it has in all (``asked``: what the pod adds to its node's ``requested``): the
    kubelet marks such a resize Infeasible and the scheduler keeps counting the pod's old
    resources, which ksched does not model (a resize within the allocatable counts the new
    requests at once)."""
    over = np.flatnonzero(asked > state.allocatable[node])
    if len(over):
        column = int(over[0])
        name = state.resource_names[column]
        unit = "m" if column == state.resource_column(CPU) else ""
        raise InvalidObjectError(
            f"pod {pod.key}", "spec.containers[*].resources.requests",
            f"{name} {asked[column]}{unit} is more than node {state.node_names[node]}'s "
            f"allocatable {state.allocatable[node, column]}{unit}: the kubelet marks this "
            "in-place resize Infeasible, which ksched does not model")
