"""Pending pods as columns: a :class:`PodTable` is a sequence of pods kept as a spec row per pod
(pods that ask for the same thing share one), names as a column, and the pods themselves made
on access.

Replicas differ only in their identity (name, uid, creation time). A table built once, when the
pods are loaded, lets :func:`ksched.schedule_batch` class pods per spec row and hand the
compiled loop an array, with no Python per pod; results come back as arrays too
(:class:`ksched.engine.Result`).
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import attrs
import numpy as np

from ksched import validation as _v
from ksched.api import Pod
from ksched.api.fields import assembler, error_body
from ksched.bound_pods import check_unique
from ksched.errors import ArgumentError, InvalidObjectError
from ksched.node_table import EqualSequence
from ksched.volume_classes import has_claims

__all__ = ["IDENTITY_COLUMNS", "PodTable", "all_pods", "spec_key"]

#: The pod fields a table keeps per pod; every other field is its spec row's.
IDENTITY_COLUMNS = ("name", "uid", "creation_time")
_SPEC_FIELDS = tuple(f.name for f in attrs.fields(Pod) if f.name not in IDENTITY_COLUMNS)
#: ``spec_key(pod)``: the fields pods of one spec row share (all but the identity columns).
spec_key = operator.attrgetter(*_SPEC_FIELDS)
_assemble = assembler(Pod, IDENTITY_COLUMNS, _SPEC_FIELDS)
#: Per byte, whether DNS-1123 subdomains may hold it (or :func:`_all_subdomains` separates
#: names with it: ``"\n"``).
_SUBDOMAIN_BYTE = np.zeros(256, dtype=np.bool_)
_SUBDOMAIN_BYTE[np.frombuffer(b"abcdefghijklmnopqrstuvwxyz0123456789-.\n", np.uint8)] = True
_NEWLINE, _DOT, _DASH = ord("\n"), ord("."), ord("-")
_MAX_NAME = 253


def _readonly(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


def all_pods(items: Sequence[Any]) -> bool:
    """Whether every item is a ``Pod`` (a check per type, not per item)."""
    return all(issubclass(kind, Pod) for kind in set(map(type, items)))


#: How many rows sharing a containers object a pod is compared with before its lookup by value.
_LATEST_ROWS = 8


def _latest_equal(rows: list[int], keys: list[tuple], values: tuple) -> int:
    """The newest of the last :data:`_LATEST_ROWS` ``rows`` but the last whose key equals
    ``values`` (-1: none)."""
    for row in reversed(rows[-_LATEST_ROWS:-1]):
        if keys[row] == values:
            return row
    return -1


class PodTable(EqualSequence):
    """Pending pods, in order, as columns (a ``Sequence[Pod]`` wherever pods are taken).

    Attributes
    ----------
    spec : int64[n], read-only: the spec row of each pod.
    specs : tuple of Pod, one per spec row: its first pod (the representative; the row's other
        pods differ from it only in ``name``, ``uid`` and ``creation_time``). A pod that
        mounts claims has a row of its own (its volumes decide its class).
    names, uids, creation_times : tuples, one item per pod.
    namespace : int32[n], read-only: the index of each pod's namespace in ``namespaces``.

    Two pods with one namespace/name are refused when a table is built
    (``metadata.name: Duplicate value``, as :func:`ksched.inputs.as_pods` says).
    """

    __slots__ = ("spec", "specs", "names", "uids", "creation_times", "namespace", "namespaces",
                 "_pods", "_missing", "_spec_values", "_keys", "_rows")

    def __init__(self, spec: np.ndarray, specs: tuple[Pod, ...], names: tuple[str, ...],
                 uids: tuple[str, ...], creation_times: tuple[float | None, ...],
                 pods: list[Pod | None] | None = None) -> None:
        self.spec = _readonly(np.asarray(spec, dtype=np.int64))
        self.specs = specs
        self.names, self.uids, self.creation_times = names, uids, creation_times
        namespaces: dict[str, int] = {}
        of_row = np.array([namespaces.setdefault(p.namespace, len(namespaces)) for p in specs],
                          dtype=np.int32)
        self.namespaces = tuple(namespaces)
        self.namespace = _readonly(of_row[self.spec] if len(specs) else
                                   np.zeros(len(self.spec), np.int32))
        self._pods = pods if pods is not None else [None] * len(names)
        #: How many pods are still to be made.
        self._missing = 0 if pods is not None else len(names)
        self._spec_values = [spec_key(p) for p in specs]
        self._keys = set(zip(np.asarray(self.namespaces, dtype=object)[self.namespace].tolist()
                             if len(names) else [], names))
        self._rows: dict[tuple[str, str], int] | None = None
        if len(self._keys) != len(names):
            check_unique(list(self))  # words the first duplicate as as_pods does
            raise AssertionError("duplicate pod keys")  # pragma: no cover

    # ------------------------------------------------------------------ construction

    @classmethod
    def of(cls, pods: PodTable | Iterable[Pod]) -> PodTable:
        """The table of ``pods`` (``Pod`` records, in order); a table is returned as it is.
        Other inputs (dicts, paths, client objects) go through
        :func:`ksched.inputs.as_pod_table`."""
        if isinstance(pods, PodTable):
            return pods
        if isinstance(pods, str | bytes) or not isinstance(pods, Iterable):
            raise ArgumentError(f"pods: expected Pod records or a PodTable, got "
                                f"{type(pods).__name__}")
        pods = list(pods)
        if not all_pods(pods):
            i, pod = next((i, p) for i, p in enumerate(pods) if not isinstance(p, Pod))
            raise ArgumentError(f"pods[{i}]: expected a Pod, got {type(pod).__name__} "
                                f"(ksched.inputs.as_pod_table reads manifests)")
        return cls._of_pods(pods)

    @classmethod
    def _of_pods(cls, pods: list[Pod]) -> PodTable:
        """Group pods by spec. A pod is compared first with the latest rows whose containers
        are its containers object (replicas made with ``attrs.evolve`` or read from one
        template share their field objects): a tuple comparison that takes identical fields
        as equal without looking into them. Only a pod matching none of those is looked up by
        value, every field hashed."""
        by_value: dict[tuple, int] = {}
        by_containers: dict[int, list[int]] = {}
        spec = np.empty(len(pods), dtype=np.int64)
        specs: list[Pod] = []
        keys: list[tuple] = []
        for i, pod in enumerate(pods):
            if pod.volumes and has_claims(pod):
                spec[i] = len(specs)
                specs.append(pod)
                keys.append(())
                continue
            values = spec_key(pod)
            rows = by_containers.get(id(pod.containers))
            if rows is None:
                rows = by_containers[id(pod.containers)] = []
            row = rows[-1] if rows and keys[rows[-1]] == values else _latest_equal(rows, keys,
                                                                                    values)
            if row < 0:
                try:
                    row = by_value.setdefault(values, len(specs))
                except TypeError:  # an unhashable field: a row of its own
                    row = len(specs)
                if row == len(specs):
                    specs.append(pod)
                    keys.append(values)
                rows.append(row)
            spec[i] = row
        # ``by_containers`` holds ids of objects the pods keep alive until here.
        names, uids, times = (tuple(map(operator.attrgetter(column), pods))
                              for column in IDENTITY_COLUMNS)
        return cls(spec, tuple(specs), names, uids, times, pods)

    @classmethod
    def from_columns(cls, specs: Sequence[Pod], spec: Any, names: Sequence[str],
                     uids: Sequence[str] | None = None,
                     creation_times: Sequence[float | None] | None = None) -> PodTable:
        """A table from columns: pod ``i`` is ``specs[spec[i]]`` named ``names[i]`` (with
        ``uids[i]`` and ``creation_times[i]``, default ``""`` and ``None``). Pods are made
        on access; spec rows no pod uses are dropped. Names are checked as the API server
        checks pod names (a DNS-1123 subdomain, at most 253 characters; not empty)."""
        specs = tuple(specs)
        for i, pod in enumerate(specs):
            if not isinstance(pod, Pod):
                raise ArgumentError(f"specs[{i}]: expected a Pod, got {type(pod).__name__}")
        spec = np.asarray(spec)
        if spec.ndim != 1 or (len(spec) and spec.dtype.kind not in "iu"):
            raise ArgumentError("spec: expected a 1-d array of spec rows (integers)")
        spec = spec.astype(np.int64)
        if len(spec) and (spec.min() < 0 or spec.max() >= len(specs)):
            raise ArgumentError(f"spec: rows must be in [0, {len(specs)})")
        names = tuple(names)
        count = len(spec)
        uids = tuple(uids) if uids is not None else ("",) * count
        times = tuple(creation_times) if creation_times is not None else (None,) * count
        for label, column in (("names", names), ("uids", uids), ("creation_times", times)):
            if len(column) != count:
                raise ArgumentError(f"{label}: expected {count} items (one per pod), got "
                                    f"{len(column)}")
        for label, column in (("names", names), ("uids", uids)):
            if not set(map(type, column)) <= {str}:
                bad = next(i for i, v in enumerate(column) if type(v) is not str)
                raise ArgumentError(f"{label}[{bad}]: expected a string, got "
                                    f"{type(column[bad]).__name__}")
        if not _all_subdomains(names):
            _refuse_name(names, specs, spec)
        used, first, spec = np.unique(spec, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")  # rows numbered by first use
        renumber = np.empty(len(order), dtype=np.int64)
        renumber[order] = np.arange(len(order))
        spec = renumber[spec.reshape(-1)]
        firsts = first[order].tolist()
        reps = tuple(_assemble((names[i], uids[i], times[i]), spec_key(specs[int(used[k])]))
                     for i, k in zip(firsts, order.tolist()))
        return cls(spec, reps, names, uids, times)

    # ------------------------------------------------------------------ the sequence

    def __len__(self) -> int:
        return len(self.names)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return self.take(np.arange(len(self))[index])
        i = int(index)
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError("PodTable index out of range")
        pod = self._pods[i]
        if pod is None:
            pod = self._pods[i] = _assemble(
                (self.names[i], self.uids[i], self.creation_times[i]),
                self._spec_values[self.spec[i]])
            self._missing -= 1
        return pod

    def __iter__(self) -> Iterator[Pod]:
        if not self._missing:
            return iter(self._pods)
        return (self[i] for i in range(len(self)))

    def pods(self, start: int = 0, stop: int | None = None) -> list[Pod]:
        """Pods ``start..stop`` as a list (made where they were not yet)."""
        stop = len(self) if stop is None else stop
        if self._missing:
            return [self[i] for i in range(start, stop)]
        return self._pods[start:stop]

    def __repr__(self) -> str:
        return f"PodTable({len(self)} pods, {len(self.specs)} specs)"

    def take(self, rows: Any) -> PodTable:
        """The table of the pods at ``rows`` (in that order; a row once at most)."""
        rows = np.asarray(rows, dtype=np.int64).reshape(-1)
        listed = rows.tolist()
        used, first, spec = np.unique(self.spec[rows], return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")
        renumber = np.empty(len(order), dtype=np.int64)
        renumber[order] = np.arange(len(order))
        spec = renumber[spec.reshape(-1)]
        # A row's representative is its first pod in the new order.
        reps = tuple(self[listed[int(first[k])]] for k in order.tolist())
        made = [self._pods[i] for i in listed]
        table = PodTable(spec, reps, _pick(self.names, listed), _pick(self.uids, listed),
                         _pick(self.creation_times, listed), made)
        if self._missing:
            table._missing = sum(p is None for p in made)
        return table

    # ------------------------------------------------------------------ lookups

    def keys(self) -> set[tuple[str, str]]:
        """The pods' ``(namespace, name)`` keys (a set: do not change it)."""
        return self._keys

    def row_of(self, namespace: str, name: str) -> int | None:
        """The position of pod ``namespace/name``, ``None`` when it is not here."""
        if self._rows is None:
            namespaces = np.asarray(self.namespaces, dtype=object)[self.namespace].tolist() \
                if len(self) else []
            self._rows = {key: i for i, key in enumerate(zip(namespaces, self.names))}
        return self._rows.get((namespace, name))

    def key_of(self, row: int) -> str:
        """The ``namespace/name`` of the pod at ``row`` (the pod is not made)."""
        return f"{self.namespaces[self.namespace[row]]}/{self.names[row]}"

    def entries(self, rows: np.ndarray) -> list:
        """The pods at ``rows`` as a log takes them (:class:`ksched.bound_pods.BoundPods`):
        the pods, or ``(table, row)`` pairs for pods not made yet."""
        if not self._missing:
            if len(rows) and rows[-1] - rows[0] == len(rows) - 1:
                return self._pods[int(rows[0]):int(rows[-1]) + 1]
            return list(map(self._pods.__getitem__, rows.tolist()))
        return list(zip(itertools.repeat(self), rows.tolist()))

    def namespace_column(self) -> list[str]:
        """Each pod's namespace."""
        if not len(self):
            return []
        return np.asarray(self.namespaces, dtype=object)[self.namespace].tolist()


def _all_subdomains(names: Sequence[str]) -> bool:
    """Whether every name is a DNS-1123 subdomain (``NameIsDNSSubdomain``), checked on the
    bytes of the names joined by newlines, with no Python per name: only those characters,
    one newline per name, and no empty name or label (two separators in a row) or label
    starting or ending with ``-`` (a dash beside a separator)."""
    if not names:
        return True
    joined = "\n" + "\n".join(names) + "\n"
    if not joined.isascii() or max(map(len, names)) > _MAX_NAME:
        return False
    codes = np.frombuffer(joined.encode(), dtype=np.uint8)
    newline = codes == _NEWLINE
    if not _SUBDOMAIN_BYTE[codes].all() or int(newline.sum()) != len(names) + 1:
        return False
    edge, dash = newline | (codes == _DOT), codes == _DASH
    return not ((edge[:-1] & (edge[1:] | dash[1:])) | (dash[:-1] & edge[1:])).any()


def _refuse_name(names: Sequence[str], specs: Sequence[Pod], spec: np.ndarray) -> None:
    """Raise for the first name that is not a valid pod name, naming the pod and the column
    row (``metadata.name``, in ``ValidateObjectMeta``'s words)."""
    for i, name in enumerate(names):
        errors = ([_v.required("metadata.name", "name or generateName is required")]
                  if not name else [_v.invalid("metadata.name", name, message)
                                    for message in _v.name_is_dns1123_subdomain(name)])
        if errors:
            pod = f"pod {specs[int(spec[i])].namespace}/{name or '<unnamed>'}"
            raise InvalidObjectError(f"names[{i}]: {pod}", "metadata.name",
                                     error_body(errors[0]))
    raise AssertionError("no invalid name")  # pragma: no cover


def _pick(column: tuple, rows: list[int]) -> tuple:
    """``column``'s items at ``rows``."""
    if len(rows) > 1:
        return operator.itemgetter(*rows)(column)
    return tuple(column[i] for i in rows)
