"""Pods held at Permit (``pkg/scheduler/framework/runtime/waiting_pods_map.go``).

A Permit plugin that answers Wait holds the pod, assumed on its node, until every such plugin
allows it or one rejects it or its timeout passes. Plugins reach the waiting pods through
``cycle.data["waiting_pods"]`` (``Handle.IterateOverWaitingPods`` / ``GetWaitingPod``); the
simulator settles what they decided between cycles.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import attrs

from ksched.api import Pod
from ksched.framework.interfaces import Cycle
from ksched.framework.runtime import Framework
from ksched.queue import QueuedPodInfo


@attrs.define
class WaitingPod:
    """One pod waiting at Permit (``waitingPod``): its queue entry, framework, cycle and node,
    and the Permit plugins still to allow it, each with its deadline."""

    info: QueuedPodInfo
    framework: Framework
    cycle: Cycle
    node: str
    deadlines: dict[str, float] = attrs.field(factory=dict)

    @property
    def deadline(self) -> float:
        """When the first timeout passes."""
        return min(self.deadlines.values(), default=float("inf"))


class WaitingPods:
    """The pods waiting at Permit by key (``waitingPodsMap``), and what plugins decided about
    them since the last :meth:`settle`."""

    def __init__(self) -> None:
        self._pods: dict[str, WaitingPod] = {}
        self._allowed: list[str] = []
        self._rejected: list[tuple[str, str, str]] = []

    # ------------------------------------------------------------------ for plugins

    def keys(self) -> list[str]:
        return list(self._pods)

    def pod(self, key: str) -> Pod:
        return self._pods[key].cycle.pod

    def allow(self, key: str) -> None:
        """``WaitingPod.Allow``: the pod goes on to bind (at the current virtual time)."""
        self._allowed.append(key)

    def reject(self, key: str, message: str, plugin: str = "") -> None:
        """``WaitingPod.Reject``: the pod is unreserved and goes back to the queue."""
        self._rejected.append((key, message, plugin))

    # ------------------------------------------------------------------ for the scheduler

    def add(self, key: str, waiting: WaitingPod) -> None:
        self._pods[key] = waiting

    def pop(self, key: str) -> WaitingPod | None:
        """Stop holding ``key``: its entry, or ``None`` when it was not waiting."""
        return self._pods.pop(key, None)

    def __contains__(self, key: object) -> bool:
        return key in self._pods

    def __len__(self) -> int:
        return len(self._pods)

    def __iter__(self) -> Iterator[str]:
        return iter(self._pods)

    def next_deadline(self) -> float | None:
        """The earliest timeout of a waiting pod (``None``: no pod waits)."""
        if not self._pods:
            return None
        return min((w.deadline for w in self._pods.values()), default=None)

    def settle(self, bind: Callable[[WaitingPod], None],
               reject: Callable[[str, str, str], None]) -> None:
        """Carry out what plugins decided, in order: ``bind`` each allowed pod still
        waiting (taken off the map), ``reject(key, message, plugin)`` each rejected one."""
        while self._allowed or self._rejected:
            if self._allowed:
                waiting = self._pods.pop(self._allowed.pop(0), None)
                if waiting is not None:
                    bind(waiting)
            else:
                reject(*self._rejected.pop(0))

    def expired(self, now: float) -> list[tuple[str, WaitingPod, str]]:
        """The pods whose first Permit timeout has passed at ``now``: (key, entry, the plugin
        whose timeout it was)."""
        if not self._pods:
            return []
        return [(key, waiting, min(waiting.deadlines, key=waiting.deadlines.get))
                for key, waiting in self._pods.items() if waiting.deadline <= now]


class PermitWaits:
    """The :class:`~ksched.simulator.Simulator`'s pods at Permit settled between cycles (a
    mixin: it binds and unreserves with the Simulator's own methods)."""

    def _settle_permits(self) -> None:
        self.waiting_pods.settle(self._bind_waiting, self._reject_waiting)

    def _bind_waiting(self, waiting: WaitingPod) -> None:
        self._bind(waiting.info, waiting.framework, waiting.cycle, waiting.node)

    def _reject_waiting(self, key: str, message: str, plugin: str) -> None:
        waiting = self.waiting_pods.pop(key)
        if waiting is not None:
            self._unreserve(waiting, forget=True, reason=message, plugin=plugin)

    def _expire_permits(self) -> None:
        """A waiting pod whose first Permit timeout passed is rejected by that plugin."""
        for key, waiting, plugin in self.waiting_pods.expired(self.now):
            waited = waiting.deadlines[plugin] - (waiting.cycle.pod.start_time
                                                  - self.start_time)
            self._reject_waiting(key, f"rejected due to timeout after waiting {waited:g}s "
                                      f"at plugin {plugin}", plugin)


__all__ = ["PermitWaits", "WaitingPod", "WaitingPods"]
