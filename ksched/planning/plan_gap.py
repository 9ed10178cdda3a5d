"""Why a plan costs more than its bound: where the new nodes' room goes, and what the pods
that fail one node short need.

The integer program's bound (:mod:`ksched.planning.plan_bound`) packs pods into each type's
summed room; the scheduler instead places pods one after another on the node its scores
prefer. Under NodeResourcesFit's ``LeastAllocated`` scoring (the default) that is the
emptiest node that fits, so pods that may use any type spread over every new node, and a pod
that needs most of a node finds one only when enough nodes are bought that one stays that
empty until it comes. Two figures of the final schedule show it:

- :func:`usage`: per node type bought, its new nodes, the pods placed on them, how many of
  those pods could have used another type, the share of each resource the pods request
  of the new nodes' allocatable and, for a type with ResourceSlices, its new nodes' devices
  per DeviceClass and how many of them allocated claims hold;
- :func:`needs`: for a pod that fails with one node fewer, its requests, the types it may
  use and the largest share of one such node it takes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import numpy as np
import numpy.typing as npt

from ksched.api import Pod
from ksched.constants import PODS
from ksched.dra.state import dra_objects
from ksched.planning.devices import device_inventory
from ksched.planning.headroom import scaled, unit
from ksched.profile import Profile
from ksched.resources import pod_requests
from ksched.state import ClusterState

__all__ = ["Need", "TypeUse", "amount", "needs", "scoring_strategy", "spread_note", "usage"]


@attrs.frozen
class TypeUse:
    """How the new nodes of one type are used at the end of the plan's schedule.

    Attributes
    ----------
    nodes : new nodes of the type.
    pods : pods placed on them (DaemonSet pods bound to them left out).
    flexible : of those, pods whose spec may also use another node type.
    shares : resource -> requested / allocatable over the new nodes of the type (0-1), for
        cpu, memory and every extended resource the type has.
    devices : DeviceClass name -> (allocated, allocatable): the devices of the new nodes'
        slices that the class matches, and those of them allocated claims hold (DaemonSet
        pods' claims included); only classes matching some device of the type.
    """

    nodes: int
    pods: int
    flexible: int
    shares: dict[str, float]
    devices: dict[str, tuple[int, int]] = attrs.field(factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready; ``devices`` (per class ``allocatable``, ``allocated``,
        ``utilisation``) only for a type with devices."""
        out: dict[str, Any] = {"nodes": self.nodes, "pods": self.pods,
                               "flexible": self.flexible, "requested_share": {
                                   r: round(s, 4) for r, s in self.shares.items()}}
        if self.devices:
            out["devices"] = {c: {"allocatable": total, "allocated": used,
                                  "utilisation": round(used / total, 4)}
                              for c, (used, total) in self.devices.items()}
        return out

    def __str__(self) -> str:
        used = ", ".join(f"{r} {s:.0%}" for r, s in self.shares.items())
        nodes = f"{self.nodes:,} node{'s' if self.nodes != 1 else ''}"
        pods = f"{self.pods:,} pod{'s' if self.pods != 1 else ''}"
        text = f"{nodes}, {pods} ({self.flexible:,} could use another type): {used} requested"
        return text + "".join(f"; {c}: {held:,}/{total:,} devices ({held / total:.0%})"
                              for c, (held, total) in self.devices.items())


def usage(state: ClusterState, node_rows: npt.NDArray[np.int64],
          new_nodes: Mapping[str, Sequence[str]], pod_types: npt.NDArray[np.bool_]
          ) -> dict[str, TypeUse]:
    """Per node type with new nodes, how they are used (see :class:`TypeUse`).

    Parameters
    ----------
    state : the final schedule's cluster (pods bound).
    node_rows : int64[n_pending], each pending pod's node row in ``state`` (-1: unplaced).
    new_nodes : type name -> the names of its new nodes.
    pod_types : bool[n_pending, n_types], the types each pending pod may use (in the order
        of ``new_nodes``; a row of False for pods pinned to an existing node).
    """
    out = {}
    inventory = device_inventory(state) if dra_objects(state).device_classes else None
    names = state.resource_names
    shown = [j for j, r in enumerate(names)
             if r in ("cpu", "memory") or ("/" in r and not r.startswith("kubernetes.io/"))]
    for t, (name, nodes) in enumerate(new_nodes.items()):
        if not nodes:
            continue
        rows = np.array([state.node_index[n] for n in nodes], dtype=np.int64)
        mine = np.isin(node_rows, rows)
        alloc = state.allocatable[rows].sum(axis=0)
        requested = state.requested[rows].sum(axis=0)
        shares = {names[j]: float(requested[j] / alloc[j]) for j in shown if alloc[j] > 0}
        others = np.delete(pod_types[mine], t, axis=1).any(axis=1)
        out[name] = TypeUse(len(rows), int(mine.sum()), int(others.sum()), shares,
                            _devices(inventory, rows))
    return out


def _devices(inventory: Any, rows: npt.NDArray[np.int64]) -> dict[str, tuple[int, int]]:
    """Class -> (allocated, allocatable) over the node ``rows``, classes with devices there."""
    if inventory is None:
        return {}
    totals = inventory.totals(rows, shared=False)
    return {c: (e["allocated"], e["allocatable"]) for c, e in totals.items()
            if e["allocatable"] > 0}


@attrs.frozen
class Need:
    """What one pod needs of the node types (see :func:`needs`).

    Attributes
    ----------
    requests : resource -> the pod's request (scheduler units; ``pods`` left out).
    types : the types it may use.
    shares : resource -> the share of a new node of type ``best`` (less its DaemonSet pods)
        that the request takes.
    best : of ``types``, the one of which the pod takes the smallest largest share.
    """

    requests: dict[str, int]
    types: tuple[str, ...]
    shares: dict[str, float]
    best: str = ""

    @property
    def largest(self) -> tuple[str, float]:
        """The resource of which the pod takes the largest share, and the share."""
        return max(self.shares.items(), key=lambda item: item[1], default=("", 0.0))

    def __str__(self) -> str:
        text = ", ".join(amount(r, v) for r, v in self.requests.items()) or "no requests"
        if not self.types:
            return text
        fits = f"fits {self.types[0]} only" if len(self.types) == 1 \
            else f"fits {', '.join(self.types)}"
        if not self.shares:
            return f"{text}; {fits}"
        takes = ", ".join(f"{s:.0%} {r}" for r, s in self.shares.items())
        return f"{text}; {fits}; takes {takes} of a new {self.best}"


def needs(pod: Pod, types: Sequence[Any], allowed: Sequence[bool],
          effective: npt.NDArray[np.int64], resources: Sequence[str]) -> Need:
    """A pod's requests, the types it may use and the share of a new node that it takes, on
    the type it fits best (``str()``: ``88 cpu, 320 GiB memory, 8 nvidia.com/gpu; fits G2
    only; takes 92% cpu, 83% memory, 100% nvidia.com/gpu of a new G2``).

    Parameters
    ----------
    pod : the pod.
    types : the node types (records with ``name``).
    allowed : per type, whether the pod may use it.
    effective : int64[n_types, n_resources], a new node's allocatable less its DaemonSet pods'.
    resources : the resource names of ``effective``'s columns.
    """
    wanted = {r: int(v) for r, v in pod_requests(pod).items() if v > 0 and r != PODS}
    names = tuple(t.name for t, ok in zip(types, allowed) if ok)
    if not names:
        return Need(wanted, names, {})
    options = []
    for t, ok in enumerate(allowed):
        if ok:
            shares = {r: v / int(effective[t, resources.index(r)]) for r, v in wanted.items()
                      if r in resources and effective[t, resources.index(r)] > 0}
            options.append((max(shares.values(), default=0.0), types[t].name, shares))
    _, best, shares = min(options, key=lambda option: option[0])  # the first on ties
    return Need(wanted, names, shares, best)


def amount(resource: str, value: int) -> str:
    """``88 cpu``, ``320 GiB memory``, ``0.5 cpu``, ``8 nvidia.com/gpu``."""
    number = scaled(resource, value)
    if isinstance(number, float) and number.is_integer():
        number = int(number)
    text = f"{number:,}" if isinstance(number, int) else f"{number:,.1f}"
    kind = unit(resource)
    if kind == "cores":
        return f"{text} cpu"
    return f"{text} {kind} {resource}" if kind else f"{text} {resource}"


def scoring_strategy(profile: Any) -> str | None:
    """NodeResourcesFit's scoring strategy in ``profile`` (``None``, a Profile or a
    SchedulerConfig: its ``default-scheduler`` profile, else its first); ``None`` when the
    profile does not score with NodeResourcesFit."""
    if profile is not None and not isinstance(profile, Profile):
        profiles = getattr(profile, "profiles", ())
        profile = next((p for p in profiles if p.scheduler_name == "default-scheduler"),
                       profiles[0] if profiles else None)
    if profile is None:
        return "LeastAllocated"
    if "NodeResourcesFit" not in profile.plugins.get("score", ()):
        return None
    args = profile.args.get("NodeResourcesFit")
    return getattr(args, "strategy", None) or "LeastAllocated"


def spread_note(strategy: str | None, use: Mapping[str, TypeUse], pod: str, need: Need
                ) -> str:
    """Why the pod ``pod`` (one that fails with one node fewer) needs the plan's many nodes:
    the share of a node it takes, and how the scheduler left the nodes of its type."""
    resource, share = need.largest
    if not need.types or not resource:
        return ""
    kind = need.best
    head = f"{pod} needs {share:.0%} of a new {kind}'s {resource}"
    type_use = use.get(kind)
    if type_use is None or resource not in type_use.shares:
        return head
    left = (f"the {type_use.pods:,} pods on the {type_use.nodes:,} new {kind} nodes "
            f"({type_use.flexible:,} of which could use another type)")
    used = f"{type_use.shares[resource]:.0%} of their {resource}"
    if strategy == "LeastAllocated":
        return (f"{head}; the scheduler puts each pod on the emptiest node that fits "
                f"(NodeResourcesFit LeastAllocated), so {left} spread over all of them, "
                f"requesting {used} in all: the plan needs so many {kind} nodes that one still "
                f"has that much free when the pod comes")
    return head + (f" (NodeResourcesFit {strategy})" if strategy else "")
