"""The snapshot's node order (``pkg/scheduler/backend/cache/node_tree.go``): nodes grouped by
zone (``utilnode.GetZoneKey``), taken one zone at a time."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from ksched.api import Node
from ksched.constants import LABEL_REGION, LABEL_REGION_BETA, LABEL_ZONE, LABEL_ZONE_BETA

__all__ = ["interleave_zones", "node_tree_order", "zone_key"]


def zone_key(labels: Mapping[str, str]) -> str:
    """``utilnode.GetZoneKey``: region and zone (beta labels first); ``""`` for neither."""
    zone = labels.get(LABEL_ZONE_BETA, labels.get(LABEL_ZONE, ""))
    region = labels.get(LABEL_REGION_BETA, labels.get(LABEL_REGION, ""))
    if not zone and not region:
        return ""
    return f"{region}:\x00:{zone}"


def node_tree_order(nodes: Sequence[Node]) -> npt.NDArray[np.int64]:
    """The snapshot's node list order (``backend/cache/node_tree.go``).

    Nodes are grouped by zone key (zones in first-seen order, nodes in input order) and the list
    takes one node from each zone in turn.
    """
    zones: dict[str, int] = {}
    zone_of = np.array([zones.setdefault(zone_key(n.labels), len(zones)) for n in nodes],
                       dtype=np.int64)
    return interleave_zones(zone_of)


def interleave_zones(zone_of: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Round-robin over zones (numbered in first-seen order), input order within each zone."""
    if len(zone_of) == 0:
        return np.zeros(0, dtype=np.int64)
    by_zone = np.argsort(zone_of, kind="stable")
    sizes = np.bincount(zone_of)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    depth = np.empty(len(zone_of), dtype=np.int64)
    depth[by_zone] = np.arange(len(zone_of)) - np.repeat(starts, sizes)
    return np.argsort(depth * len(sizes) + zone_of, kind="stable")
