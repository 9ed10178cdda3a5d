"""What one load remembers of the manifests it has read (:class:`ManifestMemo`): the parts
that the pods of one controller and the nodes of one pool repeat are read, checked and
defaulted once."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from ksched import validation as _v
from ksched.api.fields import FrozenDict, StringMap
from ksched.api.kinds import read_node
from ksched.api.pods import CONTAINER_KEYS, POD_SPEC_KEYS, read_pod
from ksched.api.reader import ManifestReader, Memo, read_controller
from ksched.api.records import Node, Pod

__all__ = ["ManifestMemo"]


_MISSING = object()


class ManifestMemo(Memo):
    """The parts of manifests that one load has read, so that the objects repeating them
    (pods of one controller, nodes of one pool) are read once: a pod's spec but for its
    ``nodeName``, volumes and affinity, its affinity (apart: a DaemonSet's pods differ in
    it), a node's taints, resources and images, label maps, owner
    references, timestamps, node names. Only parts read without an error are remembered, in
    their final form (checked and defaulted); a part with an error is read afresh each time,
    so its error names the object that has it, as it would have without the memo.

    Only for manifests that ``orjson.loads`` made (dicts, lists, strings, 64-bit integers,
    finite floats, booleans and ``None``; see :data:`ksched.stream.PLAIN_VALUES`): a part is
    recognised by its ``orjson.dumps`` bytes, which for such values are equal only when the
    values are equal, of the same types and in the same order (``1``, ``1.0`` and ``true``
    differ). Other Python values could serialise alike (``NaN`` as ``null``, an enum as its
    value, a tuple as a list) and must not be given. Each table is bounded (emptied when
    full)."""

    __slots__ = ("_controllers", "_label_keys", "_label_values", "_labels", "_subdomains",
                 "_times", "affinities", "node_parts", "pod_specs")

    #: Entries a table holds before it is emptied.
    SIZE = 8192

    def __init__(self) -> None:
        self.pod_specs: dict[bytes, tuple] = {}
        self.affinities: dict[bytes, tuple] = {}
        self.node_parts: dict[bytes, tuple] = {}
        self._subdomains: set[str] = set()
        self._labels: dict[tuple, FrozenDict] = {}
        self._label_keys: set[str] = set()
        self._label_values: set[str] = set()
        self._controllers: dict[bytes, tuple[str, str, str] | None] = {}
        self._times: dict[str, float | None] = {}

    def pod(self, obj: Mapping[str, Any]) -> Pod:
        """:meth:`Pod.from_manifest`, remembering."""
        return read_pod(obj, self)

    def node(self, obj: Mapping[str, Any]) -> Node:
        """:meth:`Node.from_manifest`, remembering."""
        return read_node(obj, self)

    def key(self, value: Any) -> bytes | None:
        try:
            return orjson.dumps(value)
        except orjson.JSONEncodeError:  # nested too deeply for orjson
            return None

    def pod_spec_key(self, spec: Mapping[str, Any]) -> bytes | None:
        """The key of what :func:`read_pod_spec` reads: :data:`POD_SPEC_KEYS`, of each container
        :data:`CONTAINER_KEYS` (``None``: a container that is not an object)."""
        parts = [spec.get(name) for name in POD_SPEC_KEYS]
        for i in (1, 2):  # containers, initContainers
            listed = parts[i]
            if listed is not None:
                if type(listed) is not list:
                    return None
                for c in listed:
                    if type(c) is not dict:
                        return None
                parts[i] = [[c.get(name) for name in CONTAINER_KEYS] for c in listed]
        return self.key(parts)

    def remember(self, table: dict, key: Any, value: Any) -> None:
        if len(table) >= self.SIZE:
            table.clear()
        table[key] = value

    def labels(self, r: ManifestReader, value: Any, path: str) -> FrozenDict:
        """``ValidateLabels``' map: one seen before as it was; else valid when its keys and
        values were each seen valid before."""
        if type(value) is not dict:
            return r.labels(value, path)
        try:
            items = tuple(value.items())
            found = self._labels.get(items)
        except TypeError:  # a value that is no string (a list): refused below
            return r.labels(value, path)
        if found is None:
            found = StringMap(value) if self._valid_labels(items) else r.labels(value, path)
            self.remember(self._labels, items, found)
        return found

    def _valid_labels(self, items: tuple[tuple[Any, Any], ...]) -> bool:
        """Whether every key is a string and a valid label key, every value a string and a
        valid label value (``ValidateLabels`` passes, and ``r.labels`` would change nothing)."""
        keys, values = self._label_keys, self._label_values
        if len(values) >= 8 * self.SIZE:
            keys.clear()
            values.clear()
        for key, value in items:
            if key not in keys:
                if type(key) is not str or _v.label_key_messages(key):
                    return False
                keys.add(key)
            if value not in values:
                if type(value) is not str or _v.label_value_messages(value):
                    return False
                values.add(value)
        return True

    def controller(self, r: ManifestReader, value: Any, path: str) -> tuple[str, str, str] | None:
        key = self.key(value)
        found = self._controllers.get(key, _MISSING) if key is not None else _MISSING
        if found is _MISSING:
            found = read_controller(r, value, path)
            if key is not None:
                self.remember(self._controllers, key, found)
        return found

    def timestamp(self, r: ManifestReader, value: Any, path: str) -> float | None:
        if type(value) is not str:
            return r.timestamp(value, path)
        found = self._times.get(value, _MISSING)
        if found is _MISSING:
            found = r.timestamp(value, path)
            self.remember(self._times, value, found)
        return found

    def subdomain(self, r: ManifestReader, value: Any, path: str) -> str:
        if type(value) is str and value in self._subdomains:
            return value
        name = super().subdomain(r, value, path)
        if len(self._subdomains) >= 8 * self.SIZE:
            self._subdomains.clear()
        self._subdomains.add(name)
        return name
