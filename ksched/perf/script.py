"""scheduler_perf's ops on the virtual clock: the :class:`~ksched.perf.clock.Script` that
plays a workload's ops in a paced :class:`~ksched.simulator.Simulator` (its ``on_cycle`` hook).

Ops run in order at the clock's current time. ``createPods`` creates its pods and, unless
``skipWaitToCompletion``, waits until they are bound; ``barrier`` waits until the pods of its
namespaces (and ``labelSelector``) are bound, or only attempted (``stageRequirement:
Attempted``; a gated pod counts as attempted, as its ``PodScheduled=False`` condition does
upstream); ``deletePods`` deletes at ``deletePodsPerSecond`` (pods with finalizers stay,
terminating, as they do upstream); ``churn`` runs in the background until the last op is
done; ``createNodes`` and node ``updateAny`` change the nodes at once (one cluster event per
op, not one per node); pod ``updateAny`` updates its pods at once, pending or bound (a bound
pod's labels, or with ``subresources: [resize]`` its containers' requests, changed in place);
``createPodSets`` creates its namespaces' pods at once and waits for them all; the
PersistentVolumes and claims of a ``createPods`` op are added to the simulator's storage
before its pods; ``startCollectingMetrics`` / ``stopCollectingMetrics`` and measured
``createPods`` open and close measurement windows. A wait that can no longer be met (no pod
is active or backing off, no event is due but churn) is given up and noted, where upstream
would time out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs
import numpy as np

from ksched.api import Pod
from ksched.decisions import BOUND, DELETED, EVICTED, FINISHED, PREEMPTED, PREEMPTING, \
    UNSCHEDULABLE
from ksched.io import read_objects
from ksched.perf.objects import manifests_of, pod_namespace
from ksched.perf.results import Measurement
from ksched.perf.world import World
from ksched.simulator import Event, Simulator

__all__ = ["OpScript"]

_GONE = {PREEMPTED, DELETED, EVICTED, FINISHED}


class _Window:
    """A measurement window: which pods count, since when."""

    def __init__(self, name: str, start: float, wanted: Callable[[str], bool],
                 keys: set[str] | None = None) -> None:
        self.name, self.start, self.wanted, self.keys = name, start, wanted, keys
        self.end: float | None = None


class OpScript:
    """The ops ``ops[first:]`` of a workload, played on a :class:`Simulator` whose cluster
    is ``world``'s now (pods bound there count as bound; every pod of ``world`` can be
    deleted or waited for)."""

    def __init__(self, world: World, ops: tuple[Mapping[str, Any], ...], first: int,
                 notes: list[str]) -> None:
        self.world, self.ops, self.next, self.notes = world, ops, first, notes
        self.wait: Callable[[], bool] | None = None
        self.wait_label = ""
        self.done = False
        self.bound: set[str] = {pod.key for pod in world.cluster().pods}
        self.attempted: set[str] = set(self.bound)
        self.deleted: set[str] = set()
        #: Every pod the workload created, the batch path's included (by key).
        self.created: dict[str, Pod] = world.pods
        #: The latest version updateAny sent of each pod it updated (by key).
        self.updated: dict[str, Pod] = {}
        self.windows: list[_Window] = []
        self.open: _Window | None = None
        self.churn: list[dict[str, Any]] = []
        self.last_event = 0.0
        self.fresh = False
        self._seen = 0

    # ----------------------------------------------------------------- the loop

    def poll(self, sim: Simulator, idle: bool) -> None:
        self.fresh = False  # ``idle`` knows of the events pushed before this call only
        self._observe(sim)
        self._churn(sim)
        while not self.done:
            if self.wait is not None:
                if not self.wait():
                    if not idle or self.fresh or self.last_event > sim.now:
                        return  # an event of the ops is still to come
                    self.notes.append(f"op {self.next - 1} ({self.wait_label}): gave up "
                                      f"waiting at t={sim.now:.3f}s, nothing left to change")
                self.wait = None
                self._close_measured(sim.now)
            if self.next >= len(self.ops):
                self.done = True
                break
            op = self.ops[self.next]
            self.next += 1
            self.wait_label = op["opcode"]
            self.wait = getattr(self, "_" + op["opcode"])(sim, op, self.next - 1)

    def _observe(self, sim: Simulator) -> None:
        decisions = sim.decisions
        for d in decisions[self._seen:]:
            if d.outcome == BOUND:
                self.bound.add(d.pod)
                self.attempted.add(d.pod)
            elif d.outcome in (UNSCHEDULABLE, PREEMPTING):
                self.attempted.add(d.pod)
            elif d.outcome in _GONE:
                self.bound.discard(d.pod)
        self._seen = len(decisions)

    def _push(self, sim: Simulator, event: Event, churn: bool = False) -> None:
        sim.push(event)
        if not churn:
            self.last_event = max(self.last_event, event.time)
            self.fresh = True

    # ----------------------------------------------------------------- ops

    def _createPods(self, sim: Simulator, op: Mapping[str, Any], index: int):
        return self._create_pods(sim, op, self._made(sim, op, index), index)

    def _createPodSets(self, sim: Simulator, op: Mapping[str, Any], index: int):
        inner = op["createPodsOp"]
        pods = [pod for i in range(int(op.get("count", 0))) for pod in self._made(
            sim, {**inner, "namespace": f"{op['namespacePrefix']}-{i}"}, index)]
        return self._create_pods(sim, inner, pods, index)

    def _made(self, sim: Simulator, op: Mapping[str, Any], index: int) -> list[Pod]:
        """The op's pods, their volumes and claims added to the simulator's storage."""
        pods, storage = self.world.make_pods_and_storage(op, index)
        if storage.persistent_volumes or storage.persistent_volume_claims:
            sim.change(volumes=storage.persistent_volumes,
                       claims=storage.persistent_volume_claims)
        return pods

    def _create_pods(self, sim: Simulator, op: Mapping[str, Any], pods: list[Pod],
                     index: int):
        for pod in pods:
            self._push(sim, Event(sim.now, "create", pod=pod))
        keys = {p.key for p in pods}
        if op.get("collectMetrics"):
            self._measure(pod_namespace(op, index), sim.now, lambda key: key in keys, keys)
        if op.get("skipWaitToCompletion"):
            return None
        return _all_of([p.key for p in pods], self.bound.__contains__)

    def _createNodes(self, sim: Simulator, op: Mapping[str, Any], index: int):
        added = self.world.create_nodes(op)
        if added.csi_nodes:
            self.notes.append(f"op {index}: CSINodes created during the run are not seen")
        sim.change(nodes=sim.assumer.state.nodes + added.nodes, event="NodeAdd")
        return None

    def _barrier(self, sim: Simulator, op: Mapping[str, Any], index: int):
        chosen = self._pods_of(op.get("namespaces"), op.get("labelSelector"))
        if op.get("stageRequirement") == "Attempted":
            return _all_of(chosen, lambda k: k in self.attempted or k in self.deleted
                           or bool(self.created[k].scheduling_gates))
        return _all_of(chosen, lambda k: k in self.bound or k in self.deleted)

    def _deletePods(self, sim: Simulator, op: Mapping[str, Any], index: int):
        chosen = [k for k in self._pods_of([op["namespace"]] if op.get("namespace") else None,
                                           op.get("labelSelector"))
                  if k not in self.deleted and k not in self.world.finalized]
        rate = float(op.get("deletePodsPerSecond") or 0)
        for i, key in enumerate(chosen):
            self.deleted.add(key)
            self._push(sim, Event(sim.now + (i / rate if rate else 0.0), "delete", name=key))
        if op.get("skipWaitToCompletion") or not chosen:
            return None
        until = sim.now + (len(chosen) - 1) / rate if rate else sim.now
        return lambda: sim.now >= until

    def _churn(self, sim: Simulator, op: Mapping[str, Any] | None = None,
               index: int = 0):
        """Start a churn op (with ``op``), or push the due churn events of those running."""
        if op is not None:
            self.churn.append({"op": op, "index": index, "next": sim.now,
                               "interval": float(op.get("intervalMilliseconds", 500)) / 1000.0,
                               "live": [[] for _ in op.get("templatePaths", [])]})
            kinds = {self.world.templates.make(self.world.base / path).get("kind")
                     for path in op.get("templatePaths", [])}
            others = ", ".join(sorted(kinds - {"Pod", "Node"}))
            if others:
                self.notes.append(f"op {index}: churn of {others} not modelled (no effect on "
                                  "scheduling here)")
            return None
        while not self.done and self.churn:
            state = min(self.churn, key=lambda s: s["next"])
            if state["next"] > sim.now + state["interval"]:
                return
            state["next"] += state["interval"]
            self._churn_tick(sim, state, state["next"])
        return None

    def _churn_tick(self, sim: Simulator, state: dict[str, Any], at: float) -> None:
        op, world = state["op"], self.world
        number = int(op.get("number", 0) or 0)
        for path, live in zip(op.get("templatePaths", []), state["live"]):
            obj = world.templates.make(world.base / path)
            kind = obj.get("kind")
            if kind not in ("Pod", "Node"):
                continue
            if op.get("mode") == "recreate" and number and len(live) >= number:
                old = live.pop(0)
                if kind == "Pod":
                    self._push(sim, Event(at, "delete", name=old), churn=True)
                else:
                    self._push(sim, Event(at, "node-remove", name=old), churn=True)
            if kind == "Pod":
                pod = world.make_pods({"podTemplatePath": path, "count": 1,
                                       "namespace": f"namespace-{state['index']}"},
                                      state["index"])[0]
                live.append(pod.key)
                self._push(sim, Event(at, "create", pod=pod), churn=True)
            else:
                node = world.create_nodes({"count": 1, "nodeTemplatePath": path}).nodes[0]
                live.append(node.name)
                self._push(sim, Event(at, "node-add", node=node), churn=True)

    def _updateAny(self, sim: Simulator, op: Mapping[str, Any], index: int):
        path = self.world.base / op["templatePath"]
        count = int(op.get("count", 1))
        objs = [self.world.templates.make(path, i, count) for i in range(count)]
        if objs and objs[0].get("kind") == "Node":
            nodes = self.world.add(objs).nodes
            by_name = {n.name: n for n in nodes}
            sim.change(nodes=[by_name.get(n.name, n) for n in sim.assumer.state.nodes],
                       event="NodeUpdate")
            return None
        for obj in objs:
            obj.setdefault("metadata", {})["namespace"] = op.get("namespace") or "default"
        resize = "resize" in (op.get("subresources") or ())
        for pod in read_objects(manifests_of(objs)).pods:
            if resize:  # the resize subresource changes the containers' resources only
                pod = attrs.evolve(self.updated.get(pod.key) or self.created[pod.key],
                                   containers=pod.containers)
            self.updated[pod.key] = pod
            self._push(sim, Event(sim.now, "update", pod=pod))
        return None

    def _sleep(self, sim: Simulator, op: Mapping[str, Any], index: int):
        until = sim.now + _seconds(op.get("duration", 0))
        self._push(sim, Event(until, "finish", name="ksched-perf/sleep"))
        return lambda: sim.now >= until

    def _startCollectingMetrics(self, sim: Simulator, op: Mapping[str, Any], index: int):
        namespaces = set(op.get("namespaces") or ())
        selector = op.get("labelSelector")

        def wanted(key: str) -> bool:
            pod = self.created.get(key)
            return pod is not None and (not namespaces or pod.namespace in namespaces) \
                and _matches(pod, selector)
        self._measure(op.get("name") or "collect", sim.now, wanted)
        return None

    def _stopCollectingMetrics(self, sim: Simulator, op: Mapping[str, Any], index: int):
        if self.open is not None:
            self.open.end = sim.now
            self.open = None
        return None

    def _measure(self, name: str, now: float, wanted: Callable[[str], bool],
                 keys: set[str] | None = None) -> None:
        window = _Window(name, now, wanted, keys)
        self.windows.append(window)
        if keys is None:
            self.open = window

    def _close_measured(self, now: float) -> None:
        for window in self.windows:
            if window.keys is not None and window.end is None:
                window.end = now

    def _pods_of(self, namespaces: Any, selector: Any) -> list[str]:
        names = set(namespaces or ())
        return [k for k, p in self.created.items()
                if (not names or p.namespace in names) and _matches(p, selector)]

    # ----------------------------------------------------------------- results

    def measurements(self, sim: Simulator) -> list[Measurement]:
        """One :class:`Measurement` per window, from the run's decisions."""
        out = []
        for window in self.windows:
            end = window.end if window.end is not None else sim.now
            binds, attempts, results = [], [], []
            for d in sim.decisions:
                if d.time < window.start or d.time > end or not window.wanted(d.pod):
                    continue
                if d.outcome == BOUND:
                    binds.append(d.time + sim.cycle_seconds - window.start)
                    results.append("scheduled")
                elif d.outcome == UNSCHEDULABLE and d.attempt:
                    results.append("unschedulable")
                else:
                    continue
                attempts.append(sim.cycle_seconds)
            out.append(Measurement(window.name, "virtual", np.array(binds, dtype=np.float64),
                                   max(end - window.start, sim.cycle_seconds),
                                   np.array(attempts, dtype=np.float64), tuple(results)))
        return out


def _all_of(keys: list[str], done: Callable[[str], bool]) -> Callable[[], bool]:
    """A wait for every key to be ``done``, checked from the first key not found done yet:
    a key found done stays so (a wait asked after every attempt costs O(1) while it holds)."""
    position = 0

    def check() -> bool:
        nonlocal position
        while position < len(keys) and done(keys[position]):
            position += 1
        return position == len(keys)
    return check


def _matches(pod: Pod, selector: Any) -> bool:
    if not selector:
        return True
    return all(pod.labels.get(k) == v for k, v in dict(selector).items())


def _seconds(value: Any) -> float:
    """A Go duration (``1s``, ``500ms``, ``2m``) or a number of seconds."""
    if isinstance(value, int | float):
        return float(value)
    text = str(value)
    for suffix, scale in (("ms", 0.001), ("s", 1.0), ("m", 60.0), ("h", 3600.0)):
        if text.endswith(suffix):
            return float(text[: -len(suffix)]) * scale
    return float(text)

