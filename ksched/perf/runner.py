"""Running scheduler_perf workloads: the batch path, the simulator, skips and duplicates.

A workload whose ops only create objects (and wait, or delete) runs on the batch path: each
``createPods`` op is one :func:`ksched.schedule_batch` call on the cluster built so far,
timed on the wall clock. A workload that needs the scheduling queue over time (churn, node
updates, measurement windows across events, pods of a higher priority that may preempt) runs
its leading create-only ops the same way, then the rest on a
paced :class:`~ksched.simulator.Simulator` (virtual clock, :mod:`ksched.perf.clock`). Workloads that
use what ksched does not model are skipped with the reason; workloads that differ from one
already run only by feature gates ksched has one behaviour for are not run again but reported
under their own name with a note.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from ksched.engine import schedule_batch
from ksched.errors import KschedError
from ksched.perf.clock import CYCLE_SECONDS, paced_simulator
from ksched.perf.config import Workload
from ksched.perf.objects import pod_namespace
from ksched.perf.results import Measurement
from ksched.perf.script import OpScript
from ksched.perf.world import World
from ksched.pod_table import PodTable

__all__ = ["Outcome", "run_workload", "run_workloads", "skip_reason", "ONE_BEHAVIOUR_GATES"]

#: Gates whose settings ksched schedules identically (it has one queue, one API path).
ONE_BEHAVIOUR_GATES = frozenset({"SchedulerQueueingHints", "SchedulerAsyncAPICalls",
                                 "SchedulerAsyncPreemption"})
_DRA_OPS = frozenset({"createResourceDriver", "allocResourceClaims", "createResourceClaims"})
_SIM_OPS = frozenset({"churn", "updateAny", "startCollectingMetrics", "sleep"})
_KNOWN_OPS = frozenset({"createNodes", "createNamespaces", "createPods", "createPodSets",
                        "createAny", "barrier", "deletePods", "stopCollectingMetrics"}) \
    | _SIM_OPS


@attrs.frozen
class Outcome:
    """What running one workload gave.

    Attributes
    ----------
    workload : the workload.
    status : ``"ok"``, ``"skipped"`` or ``"failed"``.
    reason : why it was skipped or failed.
    path : ``"batch"`` or ``"simulator"`` (how its measured ops ran).
    measurements : one per measured op or collection window.
    scheduled, unscheduled : pods bound at the end, pods still pending (gated ones included).
    seconds : the wall-clock time the run took.
    notes : approximations worth knowing about (waits given up, shared runs).
    """

    workload: Workload
    status: str
    reason: str = ""
    path: str = ""
    measurements: tuple[Measurement, ...] = ()
    scheduled: int = 0
    unscheduled: int = 0
    seconds: float = 0.0
    notes: tuple[str, ...] = ()


def skip_reason(workload: Workload) -> str | None:
    """Why ksched cannot run ``workload`` (a feature it does not model), or ``None``."""
    for i, op in enumerate(workload.ops):
        code = op["opcode"]
        if code in _DRA_OPS:
            return f"op {i} {code}: dynamic resource allocation ops are not modelled here"
        if code not in _KNOWN_OPS:
            return f"op {i} {code}: not supported"
    return None


def _needs_simulator(world: World, ops: Sequence[Mapping[str, Any]]) -> bool:
    return any(op["opcode"] in _SIM_OPS or (op["opcode"] == "createPods"
                                           and world.template_priority(op) > 0) for op in ops)


def _batch_prefix(world: World, ops: Sequence[Mapping[str, Any]]) -> int:
    """How many leading ops run on the batch path before the simulator takes over."""
    for i, op in enumerate(ops):
        code = op["opcode"]
        if code in _SIM_OPS or code in ("barrier", "deletePods", "stopCollectingMetrics"):
            return i
        if code == "createPods" and (op.get("collectMetrics") or op.get("skipWaitToCompletion")
                                     or world.template_priority(op) > 0):
            return i
    return len(ops)


class _Batch:
    """The batch path's state: the world, the pods still pending, what was measured."""

    def __init__(self, world: World, profile: Any, notes: list[str]) -> None:
        self.world, self.profile, self.notes = world, profile, notes
        self.pending: dict[str, Any] = {}
        self.measurements: list[Measurement] = []

    def run(self, ops: Sequence[Mapping[str, Any]], stop: int) -> None:
        for index, op in enumerate(ops[:stop]):
            getattr(self, "_" + op["opcode"], self._ignore)(op, index)

    def _ignore(self, op: Mapping[str, Any], index: int) -> None:
        return None

    def _createNodes(self, op: Mapping[str, Any], index: int) -> None:
        self.world.create_nodes(op)

    def _createNamespaces(self, op: Mapping[str, Any], index: int) -> None:
        self.world.create_namespaces(op)

    def _createAny(self, op: Mapping[str, Any], index: int) -> None:
        self.world.create_any(op)

    def _createPodSets(self, op: Mapping[str, Any], index: int) -> None:
        """One batch for the pods of all the namespaces (upstream creates and waits for them
        namespace by namespace: the same order)."""
        inner = op["createPodsOp"]
        made = [pod for i in range(int(op.get("count", 0))) for pod in self.world.make_pods(
            {**inner, "namespace": f"{op['namespacePrefix']}-{i}"}, index)]
        self._schedule(inner, index, made)

    def _createPods(self, op: Mapping[str, Any], index: int) -> None:
        self._schedule(op, index, self.world.make_pods(op, index))

    def _schedule(self, op: Mapping[str, Any], index: int, made: list[Any]) -> None:
        for pod in made:
            if pod.scheduling_gates:  # never attempted while gated (PreEnqueue)
                self.pending[pod.key] = pod
        pods = [pod for pod in made if not pod.scheduling_gates]
        cluster = self.world.cluster()
        table = PodTable.of(pods)
        series: list[tuple[float, int]] = []
        started = time.perf_counter()
        done = [0]

        def progress(n: int) -> None:
            done[0] += n
            series.append((time.perf_counter() - started, done[0]))
        result = schedule_batch(cluster, table, profile=self.profile, progress=progress)
        seconds = time.perf_counter() - started
        self.world.set_state(result.state)
        rows = np.asarray(result.node_rows)
        for pod, row in zip(pods, rows):
            if row < 0:
                self.pending[pod.key] = pod
        if op.get("collectMetrics"):
            self.measurements.append(_wall_measurement(pod_namespace(op, index), rows, series,
                                                       seconds))

    def _deletePods(self, op: Mapping[str, Any], index: int) -> None:
        namespace = op.get("namespace")
        selector = dict(op.get("labelSelector") or {})
        chosen = [k for k, p in self.world.pods.items()
                  if (not namespace or p.namespace == namespace)
                  and all(p.labels.get(a) == b for a, b in selector.items())
                  and k not in self.world.finalized]
        bound = {f"{p.namespace}/{p.name}" for p in self.world.cluster().pods}
        gone = [k for k in chosen if k in bound]
        if gone:
            self.world.set_state(self.world.cluster().unbind(gone))
        for key in chosen:
            self.pending.pop(key, None)
            del self.world.pods[key]
        if op.get("deletePodsPerSecond"):
            self.notes.append(f"op {index}: deletes applied at once (the batch path has no "
                              "clock)")


def _wall_measurement(namespace: str, rows: np.ndarray, series: list[tuple[float, int]],
                      seconds: float) -> Measurement:
    """The measured batch: bind times from the progress series (pods bound by each report),
    every attempt the batch's mean time per pod."""
    placed = int(np.sum(rows >= 0))
    times = np.zeros(placed)
    last, filled = 0.0, 0
    for at, count in series or [(seconds, len(rows))]:
        upto = min(count, placed)
        times[filled:upto] = at
        filled, last = max(filled, upto), at
    times[filled:] = max(last, seconds)
    per_pod = seconds / max(len(rows), 1)
    results = tuple("scheduled" if r >= 0 else "unschedulable" for r in rows)
    return Measurement(namespace, "wall", times, max(seconds, 1e-9),
                       np.full(len(rows), per_pod), results)


def _profile(workload: Workload) -> Any:
    if workload.scheduler_config is None:
        return None
    from ksched.config import load_config

    return load_config(workload.scheduler_config)


def run_workload(workload: Workload, cycle_seconds: float = CYCLE_SECONDS) -> Outcome:
    """Run one workload (or say why it is skipped); errors make a ``failed`` outcome (an
    unexpected exception too, named as a ksched bug, so that the other workloads still run)."""
    reason = skip_reason(workload)
    if reason is not None:
        return Outcome(workload, "skipped", reason)
    started = time.perf_counter()
    notes: list[str] = []
    try:
        outcome = _run(workload, cycle_seconds, notes)
    except KschedError as exc:
        return Outcome(workload, "failed", str(exc), seconds=time.perf_counter() - started)
    except Exception as exc:  # noqa: BLE001 - one workload's bug must not lose the others'
        return Outcome(workload, "failed", f"{type(exc).__name__}: {exc} (a ksched bug)",
                       seconds=time.perf_counter() - started)
    return attrs.evolve(outcome, seconds=time.perf_counter() - started, notes=tuple(notes))


def _run(workload: Workload, cycle_seconds: float, notes: list[str]) -> Outcome:
    world, profile = World(workload), _profile(workload)
    ops = workload.ops
    simulate = _needs_simulator(world, ops)
    batch = _Batch(world, profile, notes)
    stop = _batch_prefix(world, ops) if simulate else len(ops)
    batch.run(ops, stop)
    if not simulate:
        bound = len(world.cluster().pods)
        return Outcome(workload, "ok", path="batch", measurements=tuple(batch.measurements),
                       scheduled=bound, unscheduled=len(batch.pending))
    script = OpScript(world, ops, stop, notes)
    sim = paced_simulator(world.cluster(), script, cycle_seconds, profile=profile)
    events = [_create(pod) for pod in batch.pending.values()]
    result = sim.run(events)
    return Outcome(workload, "ok", path="simulator",
                   measurements=tuple(batch.measurements) + tuple(script.measurements(sim)),
                   scheduled=len(result.state.pods), unscheduled=len(result.pending))


def _create(pod: Any) -> Any:
    from ksched.simulator import Event

    return Event(0.0, "create", pod=pod)


def _dedup_key(workload: Workload) -> tuple[Any, ...]:
    gates = {k: v for k, v in workload.feature_gates.items() if k not in ONE_BEHAVIOUR_GATES}
    return (str(workload.source), workload.test_case, repr(workload.ops),
            repr(sorted(gates.items())))


def run_workloads(workloads: Sequence[Workload], cycle_seconds: float = CYCLE_SECONDS,
                  report: Callable[[Outcome], None] | None = None) -> list[Outcome]:
    """Run ``workloads`` in order; one that differs from one run before only by
    :data:`ONE_BEHAVIOUR_GATES` reuses its outcome, with a note. ``report`` is told each
    outcome as it comes."""
    done: dict[tuple[Any, ...], Outcome] = {}
    out = []
    for workload in workloads:
        key = _dedup_key(workload)
        first = done.get(key)
        if first is None:
            outcome = done[key] = run_workload(workload, cycle_seconds)
        else:
            outcome = attrs.evolve(first, workload=workload, seconds=0.0, notes=first.notes + (
                f"same run as {first.workload.name}: ksched has one behaviour for "
                + ", ".join(sorted(ONE_BEHAVIOUR_GATES)),))
        out.append(outcome)
        if report is not None:
            report(outcome)
    return out
