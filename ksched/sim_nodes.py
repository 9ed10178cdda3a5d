"""The :class:`~ksched.simulator.Simulator`'s node events: nodes added, removed (their pods
evicted), cordoned and uncordoned; the cache is made anew for the changed node list."""

from __future__ import annotations

import math

import attrs

from ksched.decisions import EVICTED
from ksched.queue import NODE_UPDATE
from ksched.state import ClusterState

__all__ = ["NodeChanges"]


class NodeChanges:
    """Node events on the Simulator's node records (a mixin: it reads and writes the
    Simulator's own state)."""

    def _change_node(self, kind: str, name: str) -> None:
        """``node-remove`` (its pods evicted), ``cordon`` or ``uncordon`` of node ``name``."""
        index = next((i for i, n in enumerate(self._node_list()) if n.name == name), None)
        if index is None:
            return
        if kind == "node-remove":
            self.assumer.sync()
            for pod in [p for p in self.assumer.state.pods if p.node_name == name]:
                self._delete(pod.key, EVICTED)
            del self._nodes[index]
            self._rebuild(None)
            return
        self._nodes[index] = attrs.evolve(self._nodes[index], unschedulable=kind == "cordon")
        self._rebuild(NODE_UPDATE)

    def _node_list(self) -> list:
        """The node records (made on the first node event: a fleet may list none)."""
        if self._nodes is None:
            self._nodes = list(self.cluster.nodes)
        return self._nodes

    def _rebuild(self, event: str | None) -> None:
        """New columns for a changed node list; the bound pods stay where they are."""
        self.assumer.sync()
        old = self.assumer.state
        state = ClusterState.from_records(self._node_list(), list(old.pods),
                                          namespaces=old.namespaces, objects=old.objects)
        self._new_assumer(state, self.assumer.storage_cache)
        self._release_finishes(math.inf)  # the new loop's classes are its own
        if event is not None:
            self._timed(self.queue.move_all_to_active_or_backoff, event)
