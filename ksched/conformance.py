"""Replay of traces recorded from the real kube-scheduler v1.35.4 (``kube-scheduler-oracle/v1``).

For each pending pod, in order, the replay runs one scheduling cycle and compares with the
trace: the PreFilter verdict, the feasible set, the first failing Filter plugin per node, every
plugin's weighted score per feasible node, the totals and the max-score set, and (where the
trace records it) the node walk and ``nextStartNodeIndex``. It then places the pod where the
trace says, so the next pod sees the cluster upstream saw.
"""

from __future__ import annotations

import errno
import gzip
import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs

from ksched import cluster_from_objects
from ksched.engine import Assumer
from ksched.errors import ConfigError, InvalidObjectError, KschedError, UnsupportedFeatureError
from ksched.api import Pod, parse_time
from ksched.disruption import pdb_status
from ksched.compiled_preemption import preemption_handle
from ksched.framework.interfaces import Cycle
from ksched.framework.runtime import Framework, ScheduleResult
from ksched.io import read_objects
from ksched.profile import default_profile
from ksched.status import Status, unresolvable, with_post_filter

PASS, FAIL, SKIP = "PASS", "FAIL", "SKIP"


@attrs.frozen
class CaseResult:
    name: str
    outcome: str
    detail: str = ""
    decisions: int = 0

    def line(self) -> str:
        return f"{self.outcome} {self.name}" + (f": {self.detail}" if self.detail else "")


class Mismatch(Exception):
    """The first difference between our cycle and the trace."""


#: The ``format`` of the traces this replay reads.
FORMATS = ("kube-scheduler-oracle/v1", "kube-scheduler-oracle/v1+preemption",
           "kube-scheduler-batch/v1")


def trace_files(paths: Iterable[str | Path]) -> list[Path]:
    """Every ``*.json.gz`` / ``*.json`` trace under ``paths``, sorted by name. A missing path,
    or a folder without traces, is refused."""
    found: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            traces = sorted(p for p in path.iterdir() if p.name.endswith((".json.gz", ".json")))
            if not traces:
                raise InvalidObjectError(f"folder {path}", "", "no traces (*.json.gz, *.json)")
            found += traces
        elif path.exists():
            found.append(path)
        else:
            raise FileNotFoundError(errno.ENOENT, "no such file or directory", str(path))
    return found


def load_trace(path: Path) -> dict[str, Any]:
    """A recorded trace; a file that is not one is refused, naming it."""
    opener = gzip.open if path.name.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8") as f:
            trace = json.load(f)
    except (ValueError, EOFError, gzip.BadGzipFile) as exc:  # JSON, UTF-8 or gzip
        raise InvalidObjectError(f"trace {path}", "", f"not a kube-scheduler trace: cannot "
                                                      f"parse: {exc}") from None
    if not isinstance(trace, dict) or trace.get("format") not in FORMATS:
        got = trace.get("format") if isinstance(trace, dict) else type(trace).__name__
        raise InvalidObjectError(f"trace {path}", "format", f"not a kube-scheduler trace: want "
                                 f"{' or '.join(FORMATS)}, got {got!r}")
    for key in ("input", "output"):
        if not isinstance(trace.get(key), dict):
            raise InvalidObjectError(f"trace {path}", key, "required: an object")
    return trace


def run_case(path: Path) -> CaseResult:
    name = path.name.removesuffix(".gz").removesuffix(".json")
    trace = load_trace(path)
    try:
        decisions = (_replay_batch if trace["format"] == BATCH_FORMAT else _replay)(trace)
    except Mismatch as exc:
        return CaseResult(name, FAIL, str(exc))
    except UnsupportedFeatureError as exc:
        return CaseResult(name, SKIP, f"not supported yet: {exc}")
    except KschedError as exc:
        return CaseResult(name, FAIL, f"error: {exc}")
    return CaseResult(name, PASS, decisions=decisions)


def run(paths: Iterable[str | Path]) -> Iterator[CaseResult]:
    for path in trace_files(paths):
        yield run_case(path)


def _frameworks(trace: Mapping[str, Any]) -> tuple[dict[str, Framework], int] | None:
    """The trace's profiles by scheduler name and the global percentageOfNodesToScore; ``None``
    when the trace expects the configuration to be rejected (and it was, exactly so)."""
    inputs, output = trace["input"], trace["output"]
    config_input = inputs.get("scheduler_config")
    if config_input is None:
        profile = default_profile(inputs.get("percentage_of_nodes_to_score", 100))
        return {profile.scheduler_name: Framework(profile)}, 0
    from ksched.config import load_config

    expected_error = output.get("config_error")
    try:
        config = load_config(config_input)
    except ConfigError as exc:
        if expected_error is None:
            raise Mismatch(f"configuration rejected: {exc}") from None
        _same("configuration error", (exc.stage, str(exc)),
              (expected_error["stage"], expected_error["message"]))
        return None
    if expected_error is not None:
        raise Mismatch(f"configuration accepted, want {expected_error['stage']} error: "
                       f"{expected_error['message']}")
    for profile, want in zip(config.profiles, output.get("profiles") or ()):
        for point in ("preFilter", "filter", "preScore", "score"):
            _same(f"profile {profile.scheduler_name}: {point} plugins",
                  [(n, profile.weights.get(n, 1)) if point == "score" else n
                   for n in profile.plugins[point]],
                  [(e["name"], e["weight"]) if point == "score" else e["name"]
                   for e in want["plugins"].get(point) or ()])
    return ({p.scheduler_name: Framework(p, config.registry) for p in config.profiles},
            config.percentage_of_nodes_to_score)


#: The trace inputs holding resource.k8s.io objects (DynamicResources reads them).
_DRA_INPUTS = ("device_classes", "resource_slices", "resource_claims",
               "resource_claim_templates")
#: The trace inputs holding storage objects (the volume plugins read them).
_STORAGE_INPUTS = ("persistent_volumes", "persistent_volume_claims", "storage_classes",
                   "csi_nodes", "csi_drivers", "csi_storage_capacities")


def _replay(trace: Mapping[str, Any]) -> int:
    inputs = trace["input"]
    configured = _frameworks(trace)
    if configured is None:
        return 0
    frameworks, global_percentage = configured
    objects = read_objects(
        list(inputs.get("nodes", [])) + list(inputs.get("existing_pods", []))
        + list(inputs.get("namespaces", [])) + list(inputs.get("priority_classes", []))
        + list(inputs.get("pod_disruption_budgets", []))
        + [o for key in ("services", "replica_sets", "stateful_sets", "replication_controllers")
           for o in inputs.get(key, [])]
        + [o for key in _STORAGE_INPUTS for o in inputs.get(key, [])]
        + [o for key in _DRA_INPUTS for o in inputs.get(key, [])])
    pending = {(p.namespace, p.name): p
               for p in read_objects(list(inputs["pending_pods"])
                                     + list(inputs.get("priority_classes", []))).pods}
    assumer = Assumer(cluster_from_objects(objects), pending.values())
    cluster = _Preemptions(objects, assumer)
    next_start = 0
    decisions = 0
    for expected in trace["output"]["results"]:
        key = (expected["namespace"], expected["pod"])
        pod = pending[key]
        framework = frameworks.get(pod.scheduler_name)
        if expected.get("no_matching_profile") or framework is None:
            _same(f"{pod.key}: ignored for naming no profile", framework is None,
                  bool(expected.get("no_matching_profile")))
            continue
        if "next_start_node_index_before" in expected:
            _same(f"{pod.key}: nextStartNodeIndex before", next_start,
                  expected["next_start_node_index_before"])
        got = framework.schedule_one(assumer.state, pod, next_start_index=next_start,
                                     percentage_of_nodes_to_score=global_percentage,
                                     always_score=True, nominated=cluster.nominated)
        _compare(pod.key, got, expected, assumer)
        if "nominated_node_fast_path" in expected:
            _same(f"{pod.key}: placed through its nominated node", got.nominated_fast_path,
                  expected["nominated_node_fast_path"])
        next_start = got.next_start_index
        if expected.get("postfilter") is not None:
            pending[key] = cluster.post_filter(framework, got, expected)
        if expected.get("chosen"):
            placed = attrs.evolve(pod, start_time=_timestamp(expected.get("assigned_start_time")),
                                  nominated_node_name="")
            cluster.forget_nomination(pod)
            if "claim_allocations" in expected:
                _claims_bound(framework, got, assumer, expected)
            assumer.assume(placed, assumer.state.node_index[expected["chosen"]])
        decisions += 1
    return decisions


def _claims_bound(framework: Framework, got: ScheduleResult, assumer: Assumer,
                  expected: Mapping[str, Any]) -> None:
    """DynamicResources' Reserve and PreBind on the chosen node (the claims written go into
    the claim assume cache), then each pod claim compared with the trace's
    ``claim_allocations``: the claim, whether this pod allocated it, the allocation, the
    consumers and the finalizers."""
    from ksched.dra.state import CLAIM_CACHE, dra_objects
    from ksched.plugins.dynamic_resources import pod_claims

    pod, node = got.pod, expected["chosen"]
    before = dra_objects(assumer.state)
    cycle = got.cycle if got.cycle is not None else Cycle(assumer.state, pod)
    cycle.data[CLAIM_CACHE] = assumer.claim_cache
    status = framework.run_reserve(cycle, node)
    if status.is_success:
        status = framework.run_pre_bind(cycle, node)
    if not status.is_success:
        raise Mismatch(f"{pod.key}: Reserve/PreBind on {node} failed: {status.message}")
    want = expected["claim_allocations"]
    if not pod.claim_sources:
        _same(f"{pod.key}: claim allocations", None, want)
        return
    after = dra_objects(assumer.state)
    found = {name: (source, claim) for name, source, claim in pod_claims(pod, before)}
    rows = []
    for name, claim_name, _ in pod.claim_sources:
        source = "resourceClaimName" if claim_name else "resourceClaimTemplateName"
        if name not in found:
            rows.append({"name": name, "resource_claim": None, "source": source,
                         "newly_allocated": False, "allocation": None, "reserved_for": None,
                         "finalizers": None})
            continue
        old = found[name][1]
        new = after.claim(old.namespace, old.name)
        rows.append({"name": name, "resource_claim": old.name, "source": source,
                     "newly_allocated": old.allocation is None and new.allocation is not None,
                     "allocation": new.allocation.wire() if new.allocation else None,
                     "reserved_for": [r[1] for r in new.reserved_for],
                     "finalizers": list(new.finalizers)})
    for got_row, want_row in zip(rows, want):
        _same(f"{pod.key}: claim {got_row['name']}", got_row, want_row)
    _same(f"{pod.key}: claim allocations", len(rows), len(want))


def _timestamp(text: str | None) -> float | None:
    return None if text is None else parse_time(text)


class _Preemptions:
    """What preemption traces add to a replay: nominations, PDBs and evictions."""

    def __init__(self, objects: Any, assumer: Assumer) -> None:
        self.assumer = assumer
        self.pdbs = list(objects.pod_disruption_budgets)
        self.replicas = {(w.namespace, w.kind, w.name): w.replicas for w in objects.workloads
                         if w.replicas is not None}
        #: Node row -> the pods nominated to it (the scheduling queue's nominator).
        self.nominated: dict[int, list[Pod]] = {}

    def forget_nomination(self, pod: Pod) -> None:
        for pods in self.nominated.values():
            pods[:] = [p for p in pods if p.key != pod.key]

    def post_filter(self, framework: Framework, got: ScheduleResult,
                    expected: Mapping[str, Any]) -> Pod:
        """Run PostFilter as the trace's attempt did, compare, and carry out the preemption;
        returns the pod as the next attempt sees it (nominated)."""
        want = expected["postfilter"]
        pod, state = got.pod, self.assumer.state
        handle = preemption_handle(framework, self.assumer, nominated=self.nominated,
                                   pdbs=self.pdbs)
        result, status = framework.run_post_filter(Cycle(state, pod), got, handle)
        key = pod.key
        _same(f"{key}: PostFilter status", (status.code.upstream_name, status.plugin,
                                            status.message),
              (want["code"], want.get("plugin") or "", want["message"]))
        if "fit_error_message" in expected:
            _same(f"{key}: FitError message", with_post_filter(got.message, status),
                  expected["fit_error_message"])
        nominated = result.nominated_node if result is not None else None
        _same(f"{key}: nominated node", nominated, want["nominated_node"])
        if result is None:
            return pod
        _same(f"{key}: potential nodes", list(result.potential_nodes),
              want.get("potential_nodes", list(result.potential_nodes)))
        _same(f"{key}: dry-run failures",
              {n: (s.code.upstream_name, s.plugin or None, list(s.reasons))
               for n, s in result.dry_run_failures.items()},
              {n: (f["code"], f.get("plugin"), f["reasons"])
               for n, f in want["dry_run_failures"].items()})
        _same(f"{key}: candidates",
              [(c.node, [v.key for v in c.victims], c.num_pdb_violations)
               for c in result.candidates],
              [(c["node"], c["victims"], c["num_pdb_violations"]) for c in want["candidates"]])
        _same(f"{key}: nodes tied after the five criteria", list(result.tie_nodes),
              sorted(want["tie_nodes"]) if want["tie_nodes"] else list(result.tie_nodes))
        _same(f"{key}: victims", [(v.namespace, v.name, v.priority) for v in result.victims],
              [(v["namespace"], v["name"], v["priority"]) for v in want["victims"]])
        _same(f"{key}: PDB violations", result.num_pdb_violations, want["num_pdb_violations"])
        if not result.nominated_node:
            self.forget_nomination(pod)
            return attrs.evolve(pod, nominated_node_name="")
        self.assumer.remove(v.key for v in result.victims)
        self._update_pdbs(key, want.get("pdb_status_after") or [])
        self.forget_nomination(pod)
        nominated_pod = attrs.evolve(pod, nominated_node_name=result.nominated_node)
        self.nominated.setdefault(state.node_index[result.nominated_node], []).append(
            nominated_pod)
        return nominated_pod

    def _update_pdbs(self, key: str, want: list[Mapping[str, Any]]) -> None:
        self.assumer.sync()
        pods = list(self.assumer.state.pods)
        changed = []
        for i, pdb in enumerate(self.pdbs):
            new = pdb_status(pdb, pods, self.replicas)
            if new != pdb:
                changed.append({"namespace": new.namespace, "name": new.name,
                                "disruptionsAllowed": new.disruptions_allowed,
                                "currentHealthy": new.current_healthy,
                                "desiredHealthy": new.desired_healthy,
                                "expectedPods": new.expected_pods})
                self.pdbs[i] = new
        _same(f"{key}: PDB status after the evictions",
              sorted(changed, key=lambda d: (d["namespace"], d["name"])),
              sorted(want, key=lambda d: (d["namespace"], d["name"])))


def _same(what: str, got: Any, want: Any) -> None:
    if got != want:
        raise Mismatch(f"{what}: got {got!r}, want {want!r}")


def _compare(key: str, got: ScheduleResult, want: Mapping[str, Any], assumer: Assumer) -> None:
    state = assumer.state
    names = state.node_names
    pre = want.get("prefilter_status")
    if pre is not None or got.pre_filter_status is not None:
        _same(f"{key}: PreFilter status",
              got.pre_filter_status and _status(got.pre_filter_status),
              pre and _recorded(pre))
        _compare_unschedulable_plugins(key, got, want)
        return
    _compare_unschedulable_plugins(key, got, want)
    _same(f"{key}: feasible nodes", sorted(names[i] for i in got.feasible), want["feasible"])
    _compare_filter_failures(key, got, want, names)
    if "evaluated_nodes" in want:
        _same(f"{key}: evaluated nodes", [names[i] for i in got.evaluated],
              want["evaluated_nodes"])
        _same(f"{key}: num_nodes_to_find", got.num_nodes_to_find, want["num_nodes_to_find"])
        _same(f"{key}: nextStartNodeIndex after", got.next_start_index,
              want["next_start_node_index_after"])
    if len(got.feasible) == 0:
        return
    scores = {}
    if len(got.totals) == 0:  # Score failed on a lone feasible node (trace: score_error)
        _same(f"{key}: Score failed", True, "score_error" in want)
    for j, node in enumerate(got.feasible[:len(got.totals)]):
        row = {plugin: int(values[j]) for plugin, values in got.scores.items()}
        row["total"] = int(got.totals[j])
        scores[names[node]] = row
    _same(f"{key}: scores", scores, want["scores"])
    _same(f"{key}: max-score nodes", sorted(names[i] for i in got.max_nodes),
          sorted(want["max_nodes"]))


def _status(status: Status) -> tuple[str, str | None, list[str]]:
    """A status as :func:`_recorded` reads the trace's: code, plugin (``None`` for none) and
    reasons."""
    return status.code.upstream_name, status.plugin or None, list(status.reasons)


def _recorded(status: Mapping[str, Any]) -> tuple[str, str | None, list[str]]:
    """A trace's ``{code, plugin, reasons}`` status (``plugin`` absent: none)."""
    return status["code"], status.get("plugin"), list(status.get("reasons") or ())


def _compare_filter_failures(key: str, got: ScheduleResult, want: Mapping[str, Any],
                             names: Any) -> None:
    """Each node's first failing Filter plugin, then (where the trace records them) its
    status: code, plugin and reasons, word for word. Nodes outside PreFilter's node subset
    fail as upstream's absent-nodes status says, naming the narrowing plugins."""
    failures = {names[i]: [s.plugin] for i, s in got.failures.items()}
    statuses = {names[i]: _status(s) for i, s in got.failures.items()}
    if got.pre_filter_nodes is not None and not got.nominated_fast_path:
        plugins = sorted(got.pre_filter_plugins)
        outside = _status(unresolvable(f"node(s) didn't satisfy plugin(s) [{' '.join(plugins)}]"))
        for node in names:
            if node not in got.pre_filter_nodes:
                failures.setdefault(node, plugins)
                statuses.setdefault(node, outside)
    _same(f"{key}: first failing filter plugin per node", failures, want["filter_failures"])
    if "filter_statuses" in want:
        _same_per_node(f"{key}: filter status", statuses,
                       {node: _recorded(s) for node, s in want["filter_statuses"].items()})


def _same_per_node(what: str, got: Mapping[str, Any], want: Mapping[str, Any]) -> None:
    """:func:`_same` for node -> value maps, naming the first node that differs."""
    for node in sorted(got.keys() | want.keys()):
        _same(f"{what} of node {node}", got.get(node), want.get(node))


def _compare_unschedulable_plugins(key: str, got: ScheduleResult,
                                   want: Mapping[str, Any]) -> None:
    """The diagnosis set as the trace records it: the PreFilter plugins that narrowed the
    nodes and the plugins that rejected some node. On a PreFilter rejection the trace holds
    only the set ``RunPreFilterPlugins`` returned (none for an unresolvable rejection), not
    the rejecting plugin that ``AddPluginStatus`` adds afterwards."""
    if "unschedulable_plugins" not in want:
        return
    plugins = got.unschedulable_plugins
    if got.pre_filter_status is not None:
        plugins = got.pre_filter_plugins
    _same(f"{key}: unschedulable plugins", sorted(plugins),
          sorted(want["unschedulable_plugins"] or ()))


def summary(results: Iterable[CaseResult]) -> str:
    results = list(results)
    counts = {o: sum(r.outcome == o for r in results) for o in (PASS, FAIL, SKIP)}
    line = f"{counts[PASS]} passed, {counts[FAIL]} failed"
    return line + (f", {counts[SKIP]} skipped" if counts[SKIP] else "")


#: Whole batches at parallelism 1 (tests/conformance/BATCH.md), replayed by
#: :func:`_replay_batch`.
BATCH_FORMAT = "kube-scheduler-batch/v1"
#: What a batch trace records per pod beside the node, as :attr:`ksched.Result.walks` names it.
_BATCH_FIELDS = ("start_index", "evaluated_nodes", "feasible_nodes", "max_score",
                 "max_nodes_count")


def _replay_batch(trace: Mapping[str, Any]) -> int:
    """A batch trace: every pending pod in one ``schedule_batch`` with ``tie_break="heap"``
    (the default profile and adaptive sampling, as recorded), compared pod for pod: the
    node, the walk's start index, the nodes evaluated, the feasible nodes, the top total (not
    for a lone feasible node, which upstream does not score) and how many nodes have it.
    The snapshot's node order is checked against ``meta.node_order`` first."""
    from ksched.engine import schedule_batch

    inputs, meta = trace["input"], trace.get("meta") or {}
    objects = read_objects(list(inputs.get("nodes", [])) + list(inputs.get("existing_pods", []))
                           + list(inputs.get("namespaces", [])))
    cluster = cluster_from_objects(objects)
    if "node_order" in meta:
        _same("node order", [cluster.node_names[i] for i in cluster.tree_order.tolist()],
              meta["node_order"])
    pending = read_objects(list(inputs["pending_pods"])).pods
    result = schedule_batch(cluster, pending, tie_break="heap")
    walks = result.walk_columns()
    wanted = trace["output"]["placements"]
    _same("pods", [p.key for p in result.pods], [f"{w['namespace']}/{w['pod']}" for w in wanted])
    for i, (want, placement) in enumerate(zip(wanted, result.placements)):
        key = placement.pod.key
        for field in _BATCH_FIELDS:
            got = walks[field][i]
            if field == "max_score" and got is None and want["feasible_nodes"] == 1:
                continue  # upstream chose the lone node without scoring
            _same(f"{key}: {field}", got, want[field])
        _same(f"{key}: node", placement.node, want["node"])
    return len(wanted)
