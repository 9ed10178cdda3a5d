"""``kubectl get pods -o json`` straight into a :class:`~ksched.pod_table.PodTable`.

Pending replicas differ only in metadata the scheduler does not read or reads as identity
(name, uid, creation time, resource version, managed fields) and in their conditions' times and
messages. The pods of one JSON List file are read here: the first pod of each distinct rest (its
``orjson`` bytes, the *template key*) is read in full, as :func:`ksched.load_pods` reads it
(:class:`ksched.api.ManifestMemo`); every other pod of that key only has its name, uid and
creation time checked, and becomes a row of the table (its ``Pod`` is made on access).

Anything else (another kind in the file, a List that is not plain, an error anywhere, a pod
whose name or timestamps do not check) is left to the ordinary reader, which words the error
exactly as it always does: :func:`pending_table_of_file` then returns ``None``, or a pod that
does not check is read in full.
"""

from __future__ import annotations

import gc
import os
import re
from collections.abc import Iterator, Mapping
from typing import Any

from ksched.api import ManifestMemo, Pod
from ksched.api.reader import ManifestReader
from ksched.api.schema import FieldChecker
from ksched.errors import KschedError
from ksched.io import admit_priorities
from ksched.pod_table import PodTable
from ksched.stream import PLAIN_VALUES, json_documents
from ksched.validation import DNS1123_SUBDOMAIN_FMT

__all__ = ["pending_table_of_file"]

#: Metadata the reader does not read (or reads as a pod's identity, checked apart).
_IDENTITY_METADATA = frozenset({"name", "uid", "creationTimestamp", "resourceVersion",
                                "generateName", "managedFields", "selfLink"})
#: The condition fields the reader reads (``podutil.IsPodReady``).
_CONDITION_FIELDS = ("type", "status")
_SUBDOMAIN = re.compile(DNS1123_SUBDOMAIN_FMT)
_MISSING = object()


class _Fallback(Exception):
    """The file is not one the fast path reads: the ordinary reader takes it."""


def pending_table_of_file(path: str | os.PathLike) -> PodTable | None:
    """The pending pods of a JSON file holding one List of Pods (``kubectl get pods -o
    json``), as :func:`ksched.load_pods` returns them; ``None`` for any other file, or when
    reading it fails (the caller reads it the ordinary way, which words the error)."""
    if not PLAIN_VALUES or not os.path.isfile(path):
        return None
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if not data.lstrip()[:1] == b"{":
        return None
    was_enabled = gc.isenabled()
    gc.disable()  # records hold no cycles (as ksched.io reads)
    try:
        return _Reader().table(_items(data, f"file {os.fspath(path)}"))
    except (_Fallback, KschedError, RecursionError):
        return None
    finally:
        if was_enabled:
            gc.freeze()
            gc.unfreeze()
            gc.enable()


def _items(data: bytes, where: str) -> Iterator[Any]:
    """The items of the file's one List (``kind`` ``List`` or ``PodList``), each with its
    skeleton (:class:`~ksched.api.schema.FieldChecker`)."""
    documents = json_documents(data, where, skeletons=True)
    for count, (value, items) in enumerate(documents):
        if count or items is None or type(value) is not dict \
                or value.get("kind") not in ("List", "PodList") \
                or not FieldChecker().check_list(value):
            raise _Fallback
        yield from items


class _Reader:
    """The columns of the pending pods, read item by item."""

    def __init__(self) -> None:
        self.memo = ManifestMemo()
        #: Template key -> its spec row (-1: its pods are not pending).
        self.rows: dict[bytes, int] = {}
        self.specs: list[Pod] = []
        self.spec: list[int] = []
        self.names: list[str] = []
        self.uids: list[str] = []
        self.times: list[float | None] = []
        self._times: dict[str, float | None] = {}

    def table(self, items: Iterator[Any]) -> PodTable:
        fields = FieldChecker()
        for item, skeleton in items:
            if type(item) is not dict or item.get("kind") != "Pod":
                raise _Fallback
            fields.check(item, skeleton)
            self.add(item)
        specs = admit_priorities(self.specs, (), unknown="keep")
        return PodTable.from_columns(specs, self.spec, self.names, self.uids, self.times)

    def add(self, obj: dict) -> None:
        """One pod: a row of a template seen before when its identity checks, else read in
        full (a template's first pod, a pod with volumes: their names come from the pod's)."""
        key = _template_key(obj, self.memo)
        if key is not None:
            row = self.rows.get(key, _MISSING)
            if row is not _MISSING:
                identity = self._identity(obj["metadata"])
                if identity is not None:
                    if row >= 0:
                        self._append(row, *identity)
                    return
        pod = self.memo.pod(obj)
        row = -1
        if not pod.node_name and not pod.terminal:
            row = len(self.specs)
            self.specs.append(pod)
            self._append(row, pod.name, pod.uid, pod.creation_time)
        if key is not None:
            self.rows.setdefault(key, row)

    def _append(self, row: int, name: str, uid: str, created: float | None) -> None:
        self.spec.append(row)
        self.names.append(name)
        self.uids.append(uid)
        self.times.append(created)

    def _identity(self, meta: Mapping[str, Any]) -> tuple[str, str, float | None] | None:
        """The pod's name, uid and creation time as the reader reads them, or ``None`` when
        one would not check (the pod is then read in full, which words the error)."""
        name, uid, created = meta.get("name"), meta.get("uid"), meta.get("creationTimestamp")
        if type(name) is not str or len(name) > 253 or not _SUBDOMAIN.fullmatch(name):
            return None
        if uid is None:
            uid = ""
        elif type(uid) is not str:
            return None
        time = None
        if created is not None:
            if type(created) is not str:
                return None
            time = self._times.get(created, _MISSING)
            if time is _MISSING:
                try:
                    time = ManifestReader("pod").timestamp(created, "creationTimestamp")
                except KschedError:
                    return None
                self._times[created] = time
        return name, uid, time


def _template_key(obj: dict, memo: ManifestMemo) -> bytes | None:
    """What the reader reads of a pod but its identity, as bytes (``None``: no template; a
    pod with volumes, whose claim names come from its name, is read in full)."""
    meta, spec, status = obj.get("metadata"), obj.get("spec"), obj.get("status")
    if type(meta) is not dict or type(spec) is not dict or "volumes" in spec:
        return None
    if status is not None and type(status) is dict:
        conditions = status.get("conditions")
        if type(conditions) is list and all(type(c) is dict for c in conditions):
            status = {**status, "conditions": [[c.get(f) for f in _CONDITION_FIELDS]
                                               for c in conditions]}
    rest = {k: v for k, v in meta.items() if k not in _IDENTITY_METADATA}
    # An unset uid makes the reader merge affinity label keys (a pod being created).
    return memo.key([obj.get("apiVersion"), rest, spec, status, bool(meta.get("uid"))])
