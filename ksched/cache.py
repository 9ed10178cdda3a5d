"""The scheduler's cache of bound and assumed pods (``pkg/scheduler/backend/cache``).

``Cache.AssumePod`` / ``ForgetPod`` / ``RemovePod`` on a private, writable copy of a
:class:`~ksched.state.ClusterState`: the :class:`Assumer` adds a placed pod to its node's
columns before the next pod is considered (``NodeInfo.AddPod``), takes pods off
(``NodeInfo.RemovePod``), and keeps the pod log the state's pod list is a view of. Per node it
knows its pods in ``NodeInfo.Pods`` order, which preemption's :class:`PodTable` mirrors as
arrays for the compiled dry run. Its :class:`StorageCache` holds the volume binder's assumed
PersistentVolume and PersistentVolumeClaim versions (``assume_cache.go``), which the state's
storage objects show.
"""

from __future__ import annotations

import operator
import weakref
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import attrs
import numpy as np

from ksched.api import Pod
from ksched.constants import PODS
from ksched.kernels.preemption import discard_slot
from ksched.resources import node_info_non_zero, pod_requests
from ksched.bound_pods import log_key, log_pod
from ksched.dra.state import ClaimCache, dra_objects
from ksched.state import BoundPods, ClusterState, host_ports
from ksched.storage_listers import StorageObjects


class StorageCache:
    """The volume binder's PV and PVC assume caches (``assume_cache.go``): the API objects
    (``api``) and the storage objects with the versions Reserve assumed (``storage``).

    :meth:`assume` replaces objects by name, :meth:`restore` puts the API objects back
    (``Restore``). The :class:`Assumer` using the cache shows ``storage`` in its state; a
    simulator hands the cache on to the cache it rebuilds (an assumption outlives it).
    """

    def __init__(self, api: StorageObjects) -> None:
        self.api = api
        self.storage = api
        #: The Assumer showing the objects, weakly: it holds this cache, and a cycle would
        #: keep its state's arrays alive until the garbage collector runs.
        self._assumer: weakref.ref[Assumer] | None = None

    def attach(self, assumer: Assumer) -> None:
        """Show the assumed objects in ``assumer``'s state from now on."""
        self._assumer = weakref.ref(assumer)
        if assumer.state.storage is not self.storage:
            assumer.state = assumer.state.with_storage(self.storage)

    def assume(self, volumes: Iterable[Any] = (), claims: Iterable[Any] = ()) -> None:
        """``Assume``: these versions replace the objects of their names."""
        volumes, claims = tuple(volumes), tuple(claims)
        if volumes or claims:
            self._set(self.storage.updated(volumes, claims))

    def restore(self, volumes: Iterable[str] = (),
                claims: Iterable[tuple[str, str]] = ()) -> None:
        """``Restore``: the volumes of these names and the claims of these (namespace, name)
        keys back to their API objects (those the API does not hold are left alone)."""
        api = self.api
        found_volumes = [pv for pv in map(api.volume, volumes) if pv is not None]
        found_claims = [c for c in (api.claim(ns, name) for ns, name in claims)
                        if c is not None]
        if found_volumes or found_claims:
            self._set(self.storage.updated(found_volumes, found_claims))

    def _set(self, storage: StorageObjects) -> None:
        self.storage = storage
        assumer = self._assumer() if self._assumer is not None else None
        if assumer is not None:
            assumer.state = assumer.state.with_storage(storage)


class Assumer:
    """Adds placed pods to a private, writable copy of a state (``Cache.AssumePod``).

    ``storage_cache`` goes on with the volume bindings assumed so far (a fresh one, of the
    state's storage objects, by default)."""

    def __init__(self, state: ClusterState, pending: Iterable[Pod],
                 storage_cache: StorageCache | None = None) -> None:
        state = state.widened_for(pending)
        self.state = attrs.evolve(state, requested=state.requested.copy(),
                                  nonzero_requested=state.nonzero_requested.copy(),
                                  port_count=state.port_count.copy(), match_cache={})
        #: The volume binder's assume cache, whose storage objects the state shows.
        self.storage_cache = storage_cache or StorageCache(self.state.storage)
        self.storage_cache.attach(self)
        #: DynamicResources' claim assume cache, whose claims the state shows.
        self.claim_cache = ClaimCache(dra_objects(self.state))
        self.claim_cache.attach(self)
        pods = self.state.pods
        # A batch's log goes on from the entries of the state's (pods not bound again).
        self._log = pods.entries() if isinstance(pods, BoundPods) else list(pods)
        count = len(self._log)
        self._pod_node = np.empty(max(2 * count, 1024), dtype=np.int64)
        self._pod_node[:count] = self.state.pod_node
        #: Each logged pod's serial number, ascending along the log: rows shift when removed
        #: pods leave the log, serials do not (a serial's row is found by bisection).
        self._serial = np.arange(len(self._pod_node), dtype=np.int64)
        self._next_serial = count
        self._affinity_pods = list(self.state.affinity_pods)
        #: Bumped whenever a pod with pod (anti-)affinity comes or goes.
        self.affinity_version = 0
        self._columns = {name: j for j, name in enumerate(self.state.resource_names)}
        #: Per node, its pods' keys in ``NodeInfo.Pods`` order (built on first use).
        self._node_pods: list[list[str]] | None = None
        #: Pod key -> serial (built on first use), and rows removed since the last sync.
        self._rows: dict[str, int] | None = None
        self._dead: set[int] = set()
        #: Preemption's columns of the log (built on first use, see :meth:`pod_table`).
        self._table: PodTable | None = None
        self._footprints: dict[tuple, Any] = {}
        self._footprints_seen: dict[tuple, Any] = {}

    def assume(self, pod: Pod, node: int) -> None:
        """Account ``pod`` on node row ``node``, as ``NodeInfo.AddPod`` does, and sync."""
        self.add(pod, node)
        self.sync()

    def add(self, pod: Pod, node: int) -> None:
        """:meth:`assume` without the sync: the arrays change, the pod list at the next one."""
        state = self.state
        vector, nonzero, columns = self.footprint(pod)
        state.requested[node] += vector
        state.nonzero_requested[node] += nonzero
        for column in columns:
            state.port_count[node, column] += 1
        self.record(pod, node)

    def record(self, pod: Pod, node: int) -> None:
        """Note a pod whose resources the compiled loop has already added to the arrays."""
        if self._node_pods is not None:
            self._node_pods[node].append(pod.key)
        self._log_pod(pod, node)

    def _log_pod(self, pod: Pod, node: int) -> None:
        """:meth:`record` but the node's pod order."""
        count = len(self._log)
        if count == len(self._pod_node):
            self._grow()
        serial = self._next_serial
        self._next_serial += 1
        self._serial[count] = serial
        if self._rows is not None:
            self._rows[pod.key] = serial
        if pod.has_pod_affinity:
            self._affinity_pods.append(count)
            self.affinity_version += 1
        if self._table is not None:
            self._table.add(node, serial, pod)
        self._log.append((pod, self.state.node_names[node]))
        self._pod_node[count] = node

    def record_many(self, pods: Sequence[Pod | tuple[Any, int]], nodes: np.ndarray,
                    affinity: np.ndarray | None = None) -> None:
        """:meth:`record` for ``pods`` in order, ``nodes`` their node rows (``affinity``:
        whether each has pod affinity, when the caller knows): the log and the arrays grow by
        slices, the per-node lists, key map and preemption table only where already built.
        ``pods`` may hold ``(pod table, row)`` pairs for pods the table has not made
        (:meth:`PodTable.entries <ksched.pod_table.PodTable.entries>`): made when read."""
        keys = list(map(log_key, pods)) \
            if self._node_pods is not None or self._rows is not None else None
        self._log_many(pods, nodes, keys, affinity)
        if self._node_pods is not None:
            for key, node in zip(keys, nodes.tolist()):
                self._node_pods[node].append(key)

    def _log_many(self, items: Sequence[Any], nodes: np.ndarray, keys: list[str] | None,
                  affinity: np.ndarray | None = None) -> None:
        """:meth:`record_many` but the nodes' pod orders: log entries ``items`` on their node
        rows ``nodes``, by slices (``keys``: theirs, needed where the key map is built)."""
        count, added = len(self._log), len(nodes)
        if not added:
            return
        while count + added > len(self._pod_node):
            self._grow()
        serials = np.arange(self._next_serial, self._next_serial + added, dtype=np.int64)
        self._next_serial += added
        self._serial[count:count + added] = serials
        self._pod_node[count:count + added] = nodes
        if self._rows is not None:
            self._rows.update(zip(keys, serials.tolist()))
        if affinity is None:
            affinity = np.fromiter((log_pod(p).has_pod_affinity for p in items), np.bool_, added)
        with_affinity = np.flatnonzero(affinity)
        if len(with_affinity):
            self._affinity_pods.extend((count + with_affinity).tolist())
            self.affinity_version += len(with_affinity)
        if self._table is not None:
            for pod, node, serial in zip(map(log_pod, items), nodes.tolist(), serials.tolist()):
                self._table.add(node, serial, pod)
        self._log.extend(items)  # bound on first read (:class:`BoundPods`)

    def _grow(self) -> None:
        self._pod_node = np.concatenate([self._pod_node, np.empty_like(self._pod_node)])
        self._serial = np.concatenate([self._serial, np.empty_like(self._serial)])

    def node_pods(self) -> list[list[str]]:
        """Per node row, the keys of its pods in ``NodeInfo.Pods`` order: the order they
        were added, except that removing a pod moves the node's last pod into its place."""
        if self._node_pods is None:
            self._index_log()
        return self._node_pods

    def _index_log(self) -> None:
        """Build the per-node key lists and the key -> serial map, in one pass."""
        node_pods: list[list[str]] = [[] for _ in range(self.state.num_nodes)]
        rows: dict[str, int] = {}
        dead = self._dead
        for row, (item, node, serial) in enumerate(zip(
                self._log, self._pod_node[:len(self._log)].tolist(),
                self._serial[:len(self._log)].tolist())):
            if row not in dead:
                key = log_key(item)
                node_pods[node].append(key)
                rows[key] = serial
        if self._node_pods is None:
            self._node_pods = node_pods
        if self._rows is None:
            self._rows = rows

    def serial_of(self, key: str) -> int | None:
        """The serial of bound pod ``key`` (``None`` when it is not bound)."""
        if self._rows is None:
            self._index_log()
        return self._rows.get(key)

    def row_of(self, key: str) -> int | None:
        """The log row of bound pod ``key`` (``None`` when it is not bound)."""
        serial = self.serial_of(key)
        if serial is None:
            return None
        return int(self._serial[:len(self._log)].searchsorted(serial))

    def node_row(self, row: int) -> int:
        """The node (its row in ``state``) of the pod logged at ``row``."""
        return int(self._pod_node[row])

    def logged(self, row: int) -> Pod:
        """The pod logged at ``row`` as recorded: one placed here may have no
        ``spec.nodeName`` (:func:`ksched.bound_pods.log_pod`)."""
        return log_pod(self._log[row])

    def rows_on(self, node: int) -> list[int]:
        """Rows (in ``state.pods``) of the node's pods, in ``NodeInfo.Pods`` order."""
        self.sync()
        return [self.row_of(key) for key in self.node_pods()[node]]

    def remove(self, keys: Iterable[str]) -> list[Pod]:
        """Take bound pods off their nodes (``NodeInfo.RemovePod``); returns them, bound.
        The arrays change at once; the pod list drops them at the next :meth:`sync`."""
        state, removed, order = self.state, [], self.node_pods()
        if self._rows is None:
            self._index_log()
        present = [key for key in keys if key in self._rows]
        serials = [self._rows.pop(key) for key in present]
        rows = self._serial[:len(self._log)].searchsorted(serials).tolist()
        freed: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        for key, row, serial in zip(present, rows, serials):
            item, node = self._log[row], int(self._pod_node[row])
            pod = log_pod(item)
            if pod.has_pod_affinity:
                self.affinity_version += 1
            vector, nonzero, columns = self.footprint(pod)
            if node in freed:
                freed[node] = (freed[node][0] + vector, freed[node][1] + nonzero)
            else:
                freed[node] = (vector, nonzero)
            for column in columns:
                state.port_count[node, column] -= 1
            on_node = order[node]
            at = on_node.index(key)
            on_node[at] = on_node[-1]
            on_node.pop()
            if self._table is not None:
                self._table.discard(node, serial)
            self._dead.add(row)
            name = state.node_names[node]
            removed.append(pod if pod.node_name == name else pod.bound_to(name))
        for node, (vector, nonzero) in freed.items():
            state.requested[node] -= vector
            state.nonzero_requested[node] -= nonzero
        return removed

    def replay(self, entries: Sequence[tuple[str, int, Pod | None]],
               names: Sequence[str] | None = None) -> None:
        """Pods the compiled loop placed and took off, in order, their resources already
        counted in the arrays: each ``(key, node row, pod)``, ``pod`` ``None`` for a removal
        (of a pod of ``state.pods``, or one placed earlier in ``entries``). The nodes' pod
        orders follow as :meth:`record` and :meth:`remove` make them (a removal moves the
        node's last pod into its place); a pod placed and removed among ``entries`` is never
        logged. ``names``: the nodes' names, when the caller has them at hand."""
        order = self.node_pods()
        removed = {key for key, _, pod in entries if pod is None}
        rows, logged = self._rows, []  # the serials and nodes of logged pods removed
        staying: list[tuple[str, int, Pod]] = []  # logged at once, after the loop
        for key, node, pod in entries:
            on_node = order[node]
            if pod is not None:
                on_node.append(key)
                if key not in removed:
                    staying.append((key, node, pod))
                continue
            at = on_node.index(key)
            on_node[at] = on_node[-1]
            on_node.pop()
            serial = rows.pop(key, None)
            if serial is not None:  # else placed among ``entries``
                logged.append((serial, node))
        if staying:
            keys, nodes, pods = zip(*staying)
            named = names if names is not None else self.state.node_names
            self._log_many([(pod, named[node]) for node, pod in zip(nodes, pods)],
                           np.array(nodes, dtype=np.int64), list(keys))
        if not logged:
            return
        found = self._serial[:len(self._log)].searchsorted([s for s, _ in logged]).tolist()
        for row, (serial, node) in zip(found, logged):
            if self._affinity_pods and log_pod(self._log[row]).has_pod_affinity:
                self.affinity_version += 1
            if self._table is not None:
                self._table.discard(node, serial)
            self._dead.add(row)

    def footprint(self, pod: Pod) -> tuple[np.ndarray, np.ndarray, list[int]]:
        """What the pod adds to its node: to ``requested`` (the pod count included), to
        ``nonzero_requested``, and the host-port columns it occupies. Replicas sharing their
        spec objects share one."""
        key = (pod.containers, pod.init_containers, pod.overhead, pod.pod_requests)
        identity = tuple(map(id, key))
        seen = self._footprints_seen.get(identity)
        if seen is not None and all(map(operator.is_, seen[0], key)):
            return seen[1]  # the same spec objects: no hashing of the spec
        try:
            found = self._footprints.get(key)
        except TypeError:  # an unhashable spec: not kept
            found, key = None, None
        if found is not None:
            self._remember_footprint(identity, key, found)
            return found
        requests = pod_requests(pod)
        vector = np.zeros(len(self._columns), dtype=np.int64)
        for name, amount in requests.items():
            column = self._columns.get(name)
            if column is not None and name != PODS:
                vector[column] += amount
        vector[self._columns[PODS]] += 1
        nonzero = np.array(node_info_non_zero(pod, requests), dtype=np.int64)
        columns = [self.state.port_keys.index(port) for port in set(host_ports(pod))]
        if key is not None:
            if len(self._footprints) > 4096:
                self._footprints.clear()
            self._footprints[key] = (vector, nonzero, columns)
            self._remember_footprint(identity, key, self._footprints[key])
        return vector, nonzero, columns

    def _remember_footprint(self, identity: tuple, key: tuple, found: tuple) -> None:
        """Keep a footprint under its spec objects' identities (the entry holds the objects,
        so their ids stay theirs)."""
        if len(self._footprints_seen) > 65536:
            self._footprints_seen.clear()
        self._footprints_seen[identity] = (key, found)

    def _compact(self) -> None:
        """Drop removed pods from the log (renumbering rows; serials stay)."""
        count = len(self._log)
        dead = sorted(self._dead)
        keep = np.ones(count, dtype=np.bool_)
        keep[dead] = False
        self._log = _Log.compacted(self._log, keep)
        log = self._log
        kept = len(log)
        size = max(2 * kept, 1024)
        for name in ("_pod_node", "_serial"):
            old = getattr(self, name)[:count][keep]
            fresh = np.empty(size, dtype=np.int64)
            fresh[:kept] = old
            setattr(self, name, fresh)
        if self._affinity_pods:
            new_row = np.cumsum(keep) - 1
            self._affinity_pods = [int(new_row[r]) for r in self._affinity_pods if keep[r]]
        self._dead = set()
        self.state = attrs.evolve(self.state, pods=self._bound_pods(kept),
                                  pod_node=self._pod_node[:kept], match_cache={},
                                  affinity_pods=tuple(self._affinity_pods))

    @property
    def num_bound(self) -> int:
        """How many pods are bound now (whether or not the state's pod list is synced)."""
        return len(self._log) - len(self._dead)

    def sync(self) -> None:
        """Bring the state's pod list up to date with the recorded pods (O(1): views, unless
        pods were removed since)."""
        if self._dead:
            self._compact()
            return
        count = len(self._log)
        if count != len(self.state.pods):
            self.state = attrs.evolve(self.state, pods=self._bound_pods(count),
                                      pod_node=self._pod_node[:count],
                                      affinity_pods=tuple(self._affinity_pods))

    def _bound_pods(self, count: int) -> BoundPods:
        """The first ``count`` pods of the log, as the state shows them."""
        return BoundPods(self._log, count, self._pod_node[:count], self.state.node_names)

    def pod_table(self) -> PodTable:
        """Preemption's view of the bound pods, synced: per row priority, start time and
        request vector; per node its rows in ``NodeInfo.Pods`` order. Kept up to date as pods
        come and go once built."""
        if self._table is None:
            self.sync()
            self._table = PodTable(self)
        return self._table

    def serials(self) -> np.ndarray:
        """The logged pods' serials, row by row (ascending: a serial's row is where it
        stands); the array does not change afterwards."""
        return self._serial[:len(self._log)]

    def rows_of_serials(self, serials: np.ndarray) -> np.ndarray:
        """The log rows of bound pods by serial."""
        return np.searchsorted(self.serials(), serials)

    def keys_of_serials(self, serials: np.ndarray) -> list[str]:
        """The keys of bound pods by serial (synced or not)."""
        log = self._log
        return [log_key(log[row]) for row in self.rows_of_serials(serials).tolist()]

    def frozen(self) -> ClusterState:
        """The final state, its arrays made read-only."""
        self.sync()
        self.state = attrs.evolve(self.state, pod_node=self.state.pod_node.copy())
        for array in (self.state.requested, self.state.nonzero_requested, self.state.port_count,
                      self.state.pod_node):
            array.flags.writeable = False
        return self.state


class _Log:
    """The pod log once pods have left it: rows of an append-only list (shared with the
    states made before), by an index array, so that dropping pods copies no list. Old states
    keep reading the rows they had (a row's item never changes; new rows go after them)."""

    __slots__ = ("_items", "_index", "_count")

    def __init__(self, items: list, index: np.ndarray, count: int) -> None:
        self._items, self._index, self._count = items, index, count

    @classmethod
    def compacted(cls, log: list | _Log, keep: np.ndarray) -> _Log:
        """``log`` without the rows ``keep`` leaves out."""
        if isinstance(log, _Log):
            items, index = log._items, log._index[:len(keep)][keep]
        else:
            items, index = log, np.flatnonzero(keep)
        if len(items) > 2 * len(index) + 1024:  # mostly gone: copy the rest once
            items, index = [items[i] for i in index.tolist()], np.arange(len(index))
        room = np.empty(max(2 * len(index), 1024), dtype=np.int64)
        room[:len(index)] = index
        return cls(items, room, len(index))

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, row: Any) -> Any:
        if isinstance(row, slice):
            items = self._items
            return [items[i] for i in self._index[:self._count][row].tolist()]
        return self._items[self._index[row]]

    def __setitem__(self, row: int, item: Any) -> None:
        self._items[self._index[row]] = item

    def __iter__(self) -> Iterator[Any]:
        items = self._items
        return (items[i] for i in self._index[:self._count].tolist())

    def append(self, item: Any) -> None:
        if self._count == len(self._index):
            self._index = np.concatenate([self._index, np.empty_like(self._index)])
        self._index[self._count] = len(self._items)
        self._items.append(item)
        self._count += 1

    def extend(self, items: Iterable[Any]) -> None:
        first = len(self._items)
        self._items.extend(items)
        added = len(self._items) - first
        while self._count + added > len(self._index):
            self._index = np.concatenate([self._index, np.empty_like(self._index)])
        self._index[self._count:self._count + added] = np.arange(first, first + added)
        self._count += added


class PodTable:
    """The bound pods as preemption's dry run reads them: per node, its pods in
    ``NodeInfo.Pods`` order (appended; a removed pod's place taken by the node's last one).

    ``slots[node, :counts[node]]`` are the pods' serials (:meth:`Assumer.rows_of_serials`
    gives their rows), with ``priority`` int64, ``start`` float64 (``GetPodStartTime``:
    +inf when unset) and ``request`` int64[..., R] (what the pod adds to ``requested``, the
    pod count included) beside them. Serials do not change when the log is compacted.
    """

    def __init__(self, assumer: Assumer) -> None:
        state = assumer.state
        self.names = state.resource_names
        self._footprint = assumer.footprint
        lists = assumer.node_pods()
        self.counts = np.array([len(keys) for keys in lists], dtype=np.int64)
        #: How many pods the table holds.
        self.size = int(self.counts.sum())
        #: Bumped whenever a node's pods change (its requests with them).
        self.stamp = np.zeros(state.num_nodes, dtype=np.int64)
        #: Dry-run outcomes per pod class, reused while stamps stand (see ``dry_run_cache``).
        self.caches: dict[Any, Any] = {}
        self._allocate(state.num_nodes, max(int(self.counts.max(initial=0)), 4))
        serials = np.array([assumer.serial_of(key) for keys in lists for key in keys],
                           np.int64)
        rows = assumer.rows_of_serials(serials)
        nodes = np.repeat(np.arange(len(lists), dtype=np.int64), self.counts)
        at = np.arange(len(rows), dtype=np.int64) - np.repeat(np.cumsum(self.counts)
                                                              - self.counts, self.counts)
        pods = list(map(assumer.logged, rows.tolist()))
        self.slots[nodes, at] = serials
        self.priority[nodes, at] = [p.priority for p in pods]
        self.start[nodes, at] = [np.inf if p.start_time is None else p.start_time for p in pods]
        self.request[nodes, at] = np.array(self._vectors(pods), dtype=np.int64).reshape(
            len(pods), len(self.names))

    def _vectors(self, pods: list[Pod]) -> list[np.ndarray]:
        """Each pod's request vector; pods sharing their spec objects (replicas) share one,
        looked up once (the pods stay alive meanwhile, so the objects' ids stay theirs)."""
        seen: dict[tuple[int, ...], np.ndarray] = {}
        vectors = []
        for pod in pods:
            identity = (id(pod.containers), id(pod.init_containers), id(pod.overhead),
                        id(pod.pod_requests))
            vector = seen.get(identity)
            if vector is None:
                vector = seen[identity] = self._footprint(pod)[0]
            vectors.append(vector)
        return vectors

    def _allocate(self, nodes: int, width: int) -> None:
        self.slots = np.full((nodes, width), -1, dtype=np.int64)
        self.priority = np.zeros((nodes, width), dtype=np.int64)
        self.start = np.zeros((nodes, width), dtype=np.float64)
        self.request = np.zeros((nodes, width, len(self.names)), dtype=np.int64)

    def _put(self, node: int, at: int, serial: int, pod: Pod) -> None:
        self.slots[node, at] = serial
        self.priority[node, at] = pod.priority
        self.start[node, at] = np.inf if pod.start_time is None else pod.start_time
        self.request[node, at] = self._footprint(pod)[0]

    def add(self, node: int, serial: int, pod: Pod) -> None:
        """``pod`` was appended to ``node`` (``NodeInfo.AddPod``)."""
        at = int(self.counts[node])
        if at == self.slots.shape[1]:
            old = (self.slots, self.priority, self.start, self.request)
            self._allocate(self.slots.shape[0], 2 * at)
            for new, values in zip((self.slots, self.priority, self.start, self.request), old):
                new[:, :at] = values
        self._put(node, at, serial, pod)
        self.counts[node] = at + 1
        self.size += 1
        self.stamp[node] += 1

    def discard(self, node: int, serial: int) -> None:
        """The pod ``serial`` left ``node``: the node's last pod takes its place."""
        discard_slot(self.slots, self.priority, self.start, self.request, self.counts,
                     self.stamp, node, serial)
        self.size -= 1



__all__ = ["Assumer", "PodTable", "StorageCache"]
