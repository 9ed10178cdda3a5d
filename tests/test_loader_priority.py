"""Pod priority, start-time and readiness fields, PriorityClass, PodDisruptionBudget and
Priority admission in the loader."""

from __future__ import annotations

import copy
import datetime
import gzip
import json
from pathlib import Path
from typing import Any

import pytest

import ksched
from ksched.api import LabelSelector, LabelSelectorRequirement, Pod, PodDisruptionBudget
from ksched.api import PriorityClass, parse_time
from ksched.errors import InvalidObjectError
from ksched.io import admit_priorities, read_objects

TRACE = Path(__file__).parent / "conformance" / "preempt-pdb-1.json.gz"
UTC = datetime.timezone.utc

CLASS_VALUES = {"scavenger": -100, "batch-low": 100, "default-tier": 1000, "high-priority": 10000,
                "high-priority-nonpreempting": 10000, "critical-apps": 100000,
                "system-cluster-critical": 2000000000}


def running_pod() -> dict[str, Any]:
    """A bound, Ready pod as ``kubectl get pod -o json`` writes it."""
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "etl-07fa516324-xjjwf", "namespace": "batch",
                     "uid": "a55beac2-8c00-c00f-5d8f-d54f3f610553",
                     "creationTimestamp": "2026-10-23T03:45:05.250Z",
                     "labels": {"app": "etl", "pod-template-hash": "07fa516324"}},
        "spec": {
            "containers": [{"name": "main", "image": "gcr.io/ml/trainer:2.1",
                            "resources": {"requests": {"cpu": "600m", "memory": "1472Mi"}}}],
            "schedulerName": "default-scheduler",
            "preemptionPolicy": "Never",
            "priority": 100,
            "priorityClassName": "batch-low",
            "schedulingGates": [{"name": "example.com/quota"}, {"name": "example.com/image"}],
            "nodeName": "ip-10-0-97-162.ec2.internal",
        },
        "status": {
            "phase": "Running", "qosClass": "Burstable",
            "startTime": "2026-10-23T03:45:06Z",
            "nominatedNodeName": "ip-10-0-1-7.ec2.internal",
            "conditions": [
                {"type": "Initialized", "status": "True"},
                {"type": "Ready", "status": "True"},
                {"type": "ContainersReady", "status": "True"},
            ],
        },
    }


def pod(name: str = "p", namespace: str = "default", labels: dict | None = None,
        **spec: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels is not None:
        meta["labels"] = labels
    return {"kind": "Pod", "metadata": meta, "spec": {"containers": [{"name": "c"}], **spec}}


def priority_class(name: str, value: int, **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": name}, "value": value, **extra}


def pdb(spec: dict[str, Any], status: dict[str, Any] | None = None,
        namespace: str = "default") -> dict[str, Any]:
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "web-pdb", "namespace": namespace},
            "spec": spec, "status": status or {}}


def error_text(excinfo: pytest.ExceptionInfo) -> str:
    return str(excinfo.value)


# --------------------------------------------------------------------------- Pod fields


def test_pod_new_fields_from_kubectl_manifest() -> None:
    p = Pod.from_manifest(running_pod())
    start = datetime.datetime(2026, 10, 23, 3, 45, 6, tzinfo=UTC).timestamp()
    assert start == 1792727106.0
    assert p.start_time == 1792727106.0
    assert p.creation_time == 1792727105.25
    assert p.priority == 100
    assert p.priority_set is True
    assert p.priority_class_name == "batch-low"
    assert p.preemption_policy == "Never"
    assert p.preemption_policy_set is True
    assert p.nominated_node_name == "ip-10-0-1-7.ec2.internal"
    assert p.scheduling_gates == ("example.com/quota", "example.com/image")
    assert p.ready is True


def test_pod_defaults_when_fields_absent() -> None:
    p = Pod.from_manifest(pod())
    assert (p.priority, p.priority_set, p.priority_class_name) == (0, False, "")
    assert (p.preemption_policy, p.preemption_policy_set) == ("PreemptLowerPriority", False)
    assert (p.start_time, p.creation_time, p.nominated_node_name) == (None, None, "")
    assert (p.scheduling_gates, p.ready) == ((), False)
    assert Pod("direct").preemption_policy == "PreemptLowerPriority"


@pytest.mark.parametrize("conditions, ready", [
    ([{"type": "Ready", "status": "False"}], False),
    ([{"type": "ContainersReady", "status": "True"}], False),
    ([{"type": "Ready", "status": "Unknown"}, {"type": "Ready", "status": "True"}], False),
    ([{"type": "PodScheduled", "status": "True"}, {"type": "Ready", "status": "True"}], True),
])
def test_pod_ready_reads_first_ready_condition(conditions: list, ready: bool) -> None:
    obj = pod()
    obj["status"] = {"conditions": conditions}
    assert Pod.from_manifest(obj).ready is ready


def test_bad_preemption_policy() -> None:
    with pytest.raises(InvalidObjectError) as excinfo:
        Pod.from_manifest(pod(preemptionPolicy="Sometimes"))
    assert error_text(excinfo) == (
        'pod default/p: spec.preemptionPolicy: Unsupported value: "Sometimes": '
        'supported values: "PreemptLowerPriority", "Never"')


def test_bad_start_time() -> None:
    obj = pod()
    obj["status"] = {"startTime": "2026-10-23 03:45:06"}
    with pytest.raises(InvalidObjectError) as excinfo:
        Pod.from_manifest(obj)
    assert error_text(excinfo) == (
        'pod default/p: status.startTime: invalid RFC 3339 timestamp "2026-10-23 03:45:06"')


def test_bad_creation_timestamp_type() -> None:
    obj = pod()
    obj["metadata"]["creationTimestamp"] = 1792727106
    with pytest.raises(InvalidObjectError) as excinfo:
        Pod.from_manifest(obj)
    assert error_text(excinfo) == (
        "pod default/p: metadata.creationTimestamp: expected a string, got an integer")


@pytest.mark.parametrize("text, expected", [
    ("2026-10-23T03:45:06Z", 1792727106.0),
    ("2026-10-23T03:45:06.5Z", 1792727106.5),
    ("2026-10-23T03:45:06+00:00", 1792727106.0),
    ("2026-10-23T05:45:06+02:00", 1792727106.0),
    ("2026-10-22T22:15:06.125-05:30", 1792727106.125),
])
def test_parse_time(text: str, expected: float) -> None:
    assert parse_time(text) == expected


@pytest.mark.parametrize("text", ["2026-10-23", "2026-10-23T03:45:06", "2026-13-01T00:00:00Z",
                                  "2026-10-23T03:45:60Z", "2026-10-23t03:45:06z",
                                  "2026-10-23T03:45:06+0200", "2026-10-23T03:45:06Z "])
def test_parse_time_rejects(text: str) -> None:
    with pytest.raises(ValueError) as excinfo:
        parse_time(text)
    assert error_text(excinfo) == f'invalid RFC 3339 timestamp "{text}"'


# --------------------------------------------------------------------------- PriorityClass


def test_priority_class_parsing() -> None:
    pc = PriorityClass.from_manifest(priority_class(
        "high-priority-nonpreempting", 10000, globalDefault=True, preemptionPolicy="Never",
        description="high priority but never preempts"))
    assert pc == PriorityClass("high-priority-nonpreempting", 10000, True, "Never")
    assert PriorityClass.from_manifest(priority_class("x", -5)) == PriorityClass(
        "x", -5, False, "PreemptLowerPriority")


@pytest.mark.parametrize("obj, message", [
    ({"kind": "PriorityClass", "metadata": {"name": "nov"}},
     "priorityclass nov: value: Required value"),
    (priority_class("big", 2**31), "priorityclass big: value: must be a 32-bit integer, "
                                   "got 2147483648"),
    (priority_class("s", "10"), "priorityclass s: value: expected an integer, got a string"),
    (priority_class("p", 1, preemptionPolicy="Always"),
     'priorityclass p: preemptionPolicy: Unsupported value: "Always": '
     'supported values: "PreemptLowerPriority", "Never"'),
])
def test_priority_class_errors(obj: dict, message: str) -> None:
    with pytest.raises(InvalidObjectError) as excinfo:
        PriorityClass.from_manifest(obj)
    assert error_text(excinfo) == message


# --------------------------------------------------------------------------- PodDisruptionBudget


def test_pdb_parsing() -> None:
    budget = PodDisruptionBudget.from_manifest(pdb(
        {"selector": {"matchLabels": {"app": "web"}}, "maxUnavailable": "50%"},
        {"disruptionsAllowed": 2, "currentHealthy": 6, "desiredHealthy": 4, "expectedPods": 7,
         "disruptedPods": {"web-1": "2026-11-18T02:56:12Z"}, "observedGeneration": 1},
        namespace="shop"))
    assert budget == PodDisruptionBudget(
        "web-pdb", "shop", LabelSelector({"app": "web"}), None, "50%", 2, 6, 4, 7,
        frozenset({"web-1"}))
    assert budget.key == "shop/web-pdb"


def test_pdb_min_available_int_and_absent_selector() -> None:
    budget = PodDisruptionBudget.from_manifest(pdb({"minAvailable": 3}))
    assert (budget.selector, budget.min_available, budget.max_unavailable) == (None, 3, None)
    assert (budget.disruptions_allowed, budget.disrupted_pods) == (0, frozenset())
    assert PodDisruptionBudget.from_manifest(pdb({"minAvailable": "100%"})).min_available == "100%"
    both_null = PodDisruptionBudget.from_manifest(pdb({"minAvailable": None,
                                                       "maxUnavailable": None}))
    assert (both_null.min_available, both_null.max_unavailable) == (None, None)


@pytest.mark.parametrize("spec, message", [
    ({"minAvailable": "half"}, 'spec.minAvailable: Invalid value: "half": a valid percent '
                               "string must be a numeric string followed by an ending '%' "
                               "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"),
    ({"maxUnavailable": "5"}, 'spec.maxUnavailable: Invalid value: "5": a valid percent '
                              "string must be a numeric string followed by an ending '%' "
                              "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"),
    ({"maxUnavailable": "150%"}, 'spec.maxUnavailable: Invalid value: "150%": '
                                 'must not be greater than 100%'),
    ({"minAvailable": -1}, "spec.minAvailable: Invalid value: -1: "
                           "must be greater than or equal to 0"),
    ({"minAvailable": 1.5}, "spec.minAvailable: expected an integer or a percentage, "
                            "got a number"),
    ({"minAvailable": 1, "maxUnavailable": "10%"},
     'spec: Invalid value: {"minAvailable":1,"maxUnavailable":"10%"}: '
     "minAvailable and maxUnavailable cannot be both set"),
])
def test_pdb_errors(spec: dict, message: str) -> None:
    with pytest.raises(InvalidObjectError) as excinfo:
        PodDisruptionBudget.from_manifest(pdb(spec))
    assert error_text(excinfo) == "poddisruptionbudget default/web-pdb: " + message


def test_pdb_matches() -> None:
    budget = PodDisruptionBudget("web-pdb", "shop", LabelSelector({"app": "web"}))
    web = Pod("w", "shop", labels={"app": "web", "tier": "fe"})
    assert budget.matches(web)
    assert not budget.matches(Pod("w", "other", labels={"app": "web"}))
    assert not budget.matches(Pod("w", "shop", labels={"app": "db"}))
    assert not budget.matches(Pod("w", "shop"))
    assert not PodDisruptionBudget("nil", "shop").matches(web)
    assert not PodDisruptionBudget("empty", "shop", LabelSelector()).matches(web)
    # an unlabelled pod never matches, even a selector that needs no label
    absent = PodDisruptionBudget("absent", "shop", LabelSelector(match_expressions=(
        LabelSelectorRequirement("app", "DoesNotExist"),)))
    assert not absent.matches(Pod("w", "shop"))
    assert absent.matches(Pod("w", "shop", labels={"x": "y"}))


def test_pdb_matches_expressions() -> None:
    budget = PodDisruptionBudget.from_manifest(pdb({"selector": {"matchExpressions": [
        {"key": "app", "operator": "In", "values": ["web", "api"]},
        {"key": "canary", "operator": "DoesNotExist"}]}}))
    assert budget.matches(Pod("a", labels={"app": "api"}))
    assert not budget.matches(Pod("a", labels={"app": "api", "canary": "true"}))
    assert not budget.matches(Pod("a", labels={"app": "db"}))
    # ValidatePodDisruptionBudgetSpec validates the selector: "NotIn" needs values
    with pytest.raises(InvalidObjectError, match=r"spec\.selector\.matchExpressions\[0\]\.values: "
                       "Required value: must be specified when `operator` is 'In' or 'NotIn'"):
        PodDisruptionBudget.from_manifest(pdb({"selector": {"matchExpressions": [
            {"key": "app", "operator": "NotIn", "values": []}]}}))


# --------------------------------------------------------------------------- Priority admission


def admitted(*objs: dict) -> tuple[Pod, ...]:
    return read_objects(list(objs)).pods


def test_admission_applies_class_value_and_policy() -> None:
    # the PriorityClass comes after the pod in the source
    (p,) = admitted(pod("a", priorityClassName="nonpreempting"),
                    priority_class("nonpreempting", 10000, preemptionPolicy="Never"))
    assert (p.priority, p.preemption_policy, p.priority_class_name) == (
        10000, "Never", "nonpreempting")
    assert (p.priority_set, p.preemption_policy_set) == (True, True)


def test_admission_keeps_stated_preemption_policy() -> None:
    (p,) = admitted(priority_class("nonpreempting", 7, preemptionPolicy="Never"),
                    pod("a", priorityClassName="nonpreempting",
                        preemptionPolicy="PreemptLowerPriority"))
    assert (p.priority, p.preemption_policy) == (7, "PreemptLowerPriority")


def test_admission_global_default() -> None:
    classes = (priority_class("low-default", 5, globalDefault=True, preemptionPolicy="Never"),
               priority_class("other", 1000))
    p, named = admitted(pod("a"), pod("b", priorityClassName="other"), *classes)
    assert (p.priority, p.priority_class_name, p.preemption_policy) == (
        5, "low-default", "Never")
    assert (named.priority, named.priority_class_name) == (1000, "other")


def test_a_second_global_default_is_refused_as_admission_refuses_it() -> None:
    with pytest.raises(InvalidObjectError) as excinfo:
        admitted(pod("a"), priority_class("low-default", 5, globalDefault=True),
                 priority_class("lower-default", 3, globalDefault=True))
    assert error_text(excinfo) == (
        "priorityclass lower-default: globalDefault: PriorityClass low-default is already "
        "marked as default. Only one default can exist")


def test_admission_without_class_gives_zero() -> None:
    (p,) = admitted(pod("a"), priority_class("other", 1000))
    assert (p.priority, p.priority_class_name, p.preemption_policy) == (
        0, "", "PreemptLowerPriority")


def test_admission_unknown_class() -> None:
    """A source naming a class it does not hold leaves the pod unadmitted (the cluster it
    meets may hold the class); where it meets one that does not, it is refused."""
    (p,) = admitted(pod("a", namespace="team-a", priorityClassName="gold"),
                    priority_class("x", 1))
    assert (p.priority_class_name, p.priority, p.priority_set) == ("gold", 0, False)
    with pytest.raises(InvalidObjectError) as excinfo:
        admit_priorities([p], [PriorityClass("x", 1)])
    assert error_text(excinfo) == (
        "pod team-a/a: spec.priorityClassName: no PriorityClass with name gold was found")


def test_admission_leaves_explicit_priority_alone() -> None:
    stated = Pod.from_manifest(pod("a", priority=42, priorityClassName="gold"))
    classes = [PriorityClass.from_manifest(priority_class("gold", 1, globalDefault=True))]
    (out,) = admit_priorities([stated], classes)
    assert out is stated
    assert (out.priority, out.preemption_policy) == (42, "PreemptLowerPriority")


def test_admission_returns_new_records() -> None:
    original = Pod.from_manifest(pod("a", priorityClassName="gold"))
    (out,) = admit_priorities([original], [PriorityClass("gold", 9)])
    assert (original.priority, original.priority_set) == (0, False)
    assert (out.priority, out.priority_set) == (9, True)
    assert admit_priorities([out], []) == (out,)


# --------------------------------------------------------------------------- the recorded trace


def trace_input() -> dict[str, Any]:
    with gzip.open(TRACE, "rt", encoding="utf-8") as f:
        return json.load(f)["input"]


def test_trace_loads_priorities_and_pdbs() -> None:
    inp = trace_input()
    objects = ksched.read_objects([inp["priority_classes"], inp["pending_pods"],
                                   inp["existing_pods"], inp["pod_disruption_budgets"]])
    assert {pc.name: pc.value for pc in objects.priority_classes} == CLASS_VALUES
    assert [pc.name for pc in objects.priority_classes
            if pc.preemption_policy == "Never"] == ["high-priority-nonpreempting"]
    assert len(objects.pending_pods) == len(inp["pending_pods"]) == 17
    for p in objects.pending_pods:
        assert p.priority == CLASS_VALUES.get(p.priority_class_name, 0), p.key
        nonpreempting = p.priority_class_name == "high-priority-nonpreempting"
        assert p.preemption_policy == ("Never" if nonpreempting else "PreemptLowerPriority")
    assert len(objects.bound_pods) == len(inp["existing_pods"])
    assert all(p.ready and p.start_time is not None for p in objects.bound_pods)
    first = inp["existing_pods"][0]
    assert objects.pods[17].start_time == parse_time(first["status"]["startTime"])
    assert [(b.key, b.disruptions_allowed) for b in objects.pod_disruption_budgets] == [
        (f'{m["metadata"]["namespace"]}/{m["metadata"]["name"]}', m["status"]["disruptionsAllowed"])
        for m in inp["pod_disruption_budgets"]]
    for budget in objects.pod_disruption_budgets:
        covered = [p for p in objects.bound_pods if budget.matches(p)]
        assert covered and all(p.labels["app"] == budget.selector.match_labels["app"]
                               for p in covered)


def test_trace_pods_admitted_from_their_classes() -> None:
    """Without spec.priority / spec.preemptionPolicy, admission recomputes the recorded values."""
    inp = trace_input()
    stripped = copy.deepcopy(inp["pending_pods"] + inp["existing_pods"])
    for obj in stripped:
        del obj["spec"]["priority"], obj["spec"]["preemptionPolicy"]
    recorded = ksched.read_objects(inp["pending_pods"] + inp["existing_pods"]).pods
    admitted_pods = ksched.read_objects([stripped, inp["priority_classes"]]).pods
    assert [(p.key, p.priority, p.preemption_policy) for p in admitted_pods] == [
        (p.key, p.priority, p.preemption_policy) for p in recorded]
