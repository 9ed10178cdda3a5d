"""Upper bounds on the sizes a caller may ask ksched to build, shared by the command line and
the library: beyond them a run would only exhaust memory or time, so they are refused at once
instead of after minutes (or with a ``MemoryError``)."""

from __future__ import annotations

import numbers
from typing import Any

from ksched.errors import ArgumentError

__all__ = ["MAX_NODES", "MAX_PODS", "MAX_SCALE", "check_count"]

#: Nodes one request may make from templates (``ClusterState.from_node_templates``,
#: ``capacity(add_nodes=...)``, ``plan(max_nodes=...)``, ``--nodes``, ``--add-nodes``).
MAX_NODES = 1_000_000
#: Pods one request may make from templates (a workload's replicas, capacity's limits,
#: ``--arrivals``, ``--max-limit``).
MAX_PODS = 10_000_000
#: The largest factor a pod list may be scaled by (``--scale``).
MAX_SCALE = 100.0


def check_count(value: Any, where: str, high: int, low: int = 0) -> int:
    """``value`` as an ``int`` in ``[low, high]``; else an :class:`ArgumentError` naming
    ``where`` and the bounds (``bool`` is not a count).

    Examples
    --------
    >>> check_count(3, "nodes", MAX_NODES)
    3
    >>> check_count(10**9, "count", MAX_NODES)
    Traceback (most recent call last):
    ...
    ksched.errors.ArgumentError: count: expected an integer from 0 to 1,000,000, got 1000000000
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) \
            or not low <= value <= high:
        raise ArgumentError(f"{where}: expected an integer from {low} to {high:,}, "
                            f"got {value!r}")
    return int(value)
