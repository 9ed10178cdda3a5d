"""Pod classes of pods with resource claims the fused loop counts devices for.

Pods whose claims come from one template each ask for the same devices but name claims of
their own (``status.resourceClaimStatuses``). Where the DynamicResources plugin can count what
such a pod takes (:class:`~ksched.dra.compiled.DeviceColumns`: ``need`` free devices of one
column per node), two pods that agree but for their claims' names get the same verdict on every
node: they share a class, keyed by :func:`device_signature` and their
:class:`~ksched.dra.compiled.DeviceNeed`. The loop checks a class's need against its column
with the attach-limit check (the columns follow the volume drivers' in the attach table), and
:meth:`DeviceClasses.reserve` runs the plugin's Reserve for the pods it placed, in bulk. Other
pods with claims take the framework.
"""

from __future__ import annotations

import operator
from typing import Any

import attrs
import numpy as np

from ksched.api import Pod
from ksched.dra.controller import generated_names
from ksched.dra.state import dra_objects
from ksched.framework.capabilities import AttachTable
from ksched.pods import IDENTITY_FIELDS, TIME_FIELDS
from ksched.volume_classes import has_claims

__all__ = ["DeviceClasses", "device_signature"]

#: ``device_signature(pod)``: the class signature but the names of the pod's claims.
device_signature = operator.attrgetter(*(
    f.name for f in attrs.fields(Pod)
    if f.name not in IDENTITY_FIELDS | TIME_FIELDS | {"claim_statuses"}))
_UNSEEN = object()
#: The most field identities :meth:`DeviceClasses._signature` keeps.
_IDENTITIES_KEPT = 1 << 14


class DeviceClasses:
    """The device-counted classes of one fused loop (its
    :class:`~ksched.class_tables.ClassTables` holds them): the Filter plugin that counts
    devices (the one offering ``device_columns``), its columns, and each class's need."""

    def __init__(self) -> None:
        self.plugin: Any = None
        self.columns: Any = None
        #: Per class index, the :class:`~ksched.dra.compiled.DeviceNeed` of its pods.
        self.needs: dict[int, Any] = {}
        #: The need of the class being compiled (``None``: none is).
        self.compiling: Any = None
        #: The device columns of the stacked attach arrays (:meth:`width`).
        self.stacked = 0
        self._classes: dict[tuple, int | None] = {}
        #: The claims some pending or bound pod names (shared: not counted).
        self._named: set[tuple[str, str]] = set()
        #: The device signatures met, each its number, and the numbers by the signature's
        #: fields' identities (:meth:`_signature`).
        self._signatures: dict[tuple, int] = {}
        self._by_identity: dict[tuple, tuple[tuple, int]] = {}

    @property
    def counting(self) -> Any:
        """The plugin whose Filter the loop counts for the class being compiled (else
        ``None``): its node-static verdict is left out."""
        return self.plugin if self.compiling is not None else None

    def skipped(self) -> set[str]:
        """The Filter plugins a class's node-static verdicts leave out: the counting one."""
        return {self.plugin.NAME} if self.compiling is not None else set()

    def class_of(self, loop: Any, pod: Pod, state: Any) -> int | None:
        """The class of a pod with resource claims in ``loop`` (a
        :class:`~ksched.fused_loop.FusedLoop`; ``None``: the framework), compiled by the loop
        while :attr:`compiling` holds its need."""
        if self.columns is None:
            self.plugin = next((p for _, p in loop.framework.points["filter"]
                                if callable(getattr(p, "device_columns", None))), None)
            self.columns = self.plugin.device_columns(state) if self.plugin is not None \
                else False
            self._named = {(p.namespace, name) for p in (*loop.pending, *state.pods)
                           for _, name, _ in p.claim_sources if name}
        if not self.columns or state.objects.get("workloads") or has_claims(pod):
            return None
        need = self.columns.need(pod, state, self._named)
        if need is None:
            return None
        key = (self._signature(pod), need)
        found = self._classes.get(key, _UNSEEN)
        if found is _UNSEEN:
            self.compiling = need
            try:
                found = loop._compile(pod, state, False, False) \
                    if loop._admitted(pod, state) == (False, False) \
                    and loop._eligible(pod, state) else None
            finally:
                self.compiling = None
            if found is not None:
                self.needs[found] = need
            self._classes[key] = found
        return found

    def template_class(self, pod: Pod, state: Any) -> int | None:
        """The class, compiled already, a new pod will be of once the resourceclaim
        controller has made its claims from their templates (:meth:`DeviceColumns.template_need
        <ksched.dra.compiled.DeviceColumns.template_need>`; none of them a claim some pod
        names); ``None``: none is known."""
        if not self.columns or state.objects.get("workloads") or has_claims(pod):
            return None
        need = self.columns.template_need(pod, dra_objects(state))
        if need is None or self._named and any(
                (pod.namespace, name) in self._named for name in generated_names(pod)):
            return None
        return self._classes.get((self._signature(pod), need))

    def _signature(self, pod: Pod) -> int:
        """The number of the pod's :func:`device_signature` among those met, found by its
        fields' identities where they were met before (no hashing of the spec; the entry
        holds the objects, so their ids stay theirs)."""
        fields = device_signature(pod)
        identity = tuple(map(id, fields))
        seen = self._by_identity.get(identity)
        if seen is not None and all(map(operator.is_, seen[0], fields)):
            return seen[1]
        number = self._signatures.setdefault(fields, len(self._signatures))
        if len(self._by_identity) >= _IDENTITIES_KEPT:
            self._by_identity.clear()
        self._by_identity[identity] = (fields, number)
        return number

    def width(self) -> int:
        """The device columns there are, as the attach arrays are stacked now."""
        self.stacked = len(self.columns.columns) if self.columns else 0
        return self.stacked

    def counts_volumes(self, arrays: dict[str, Any]) -> bool:
        """Whether the attach table of a run with ``arrays`` has the volume drivers' columns
        (read from the state's pods; the device columns are read from its DRA objects)."""
        adds = arrays["attach_adds"]
        return adds.shape[2] > self.stacked or adds.shape[1] > 1

    def attach_table(self, state: Any, attach_filter: Any, arrays: dict[str, Any]
                     ) -> AttachTable:
        """The attach table of a run with ``arrays``: the volume drivers' columns (the
        attach-limit filter's), then the device columns (their devices and those taken)."""
        k = self.stacked
        n = state.num_nodes
        volumes = self.counts_volumes(arrays)
        if volumes or not k:
            table = attach_filter.attach_table(state) if volumes else AttachTable(
                np.zeros(n, np.int64), np.zeros((n, 0), np.int64), np.zeros((n, 0), np.int64))
            if not k:
                return table
        limits, taken = self.columns.table(state)  # the caller's own
        if not volumes:
            return AttachTable(np.zeros(n, np.int64), np.ascontiguousarray(limits[:, :k]),
                               np.ascontiguousarray(taken[:, :k]))
        return AttachTable(table.group, np.concatenate([table.limits, limits[:, :k]], axis=1),
                           np.concatenate([table.attached, taken[:, :k]], axis=1))

    def reserve(self, cache: Any, pods: Any, rows: np.ndarray, nodes: np.ndarray,
                classes: np.ndarray) -> None:
        """Reserve for the pods the loop placed (``pods[rows[i]]`` on node row ``nodes[i]``,
        of class ``classes[i]``), in order; the claims assumed in ``cache`` at once."""
        needs = self.needs
        if not self.columns or not len(rows):
            return
        placed = [(pods[row], node, needs[c]) for row, node, c
                  in zip(rows.tolist(), nodes.tolist(), classes.tolist())
                  if c in needs]
        self.columns.reserve(cache, placed)
