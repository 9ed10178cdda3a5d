"""Bad records, each refused at construction (or at ``attrs.evolve``) with an
``InvalidObjectError`` naming the record and the field: wrong types, bad quantities, amounts
outside int64, unknown enum values."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import attrs
import pytest

from ksched import (
    Container,
    ContainerImage,
    ContainerPort,
    InvalidObjectError,
    Namespace,
    Node,
    NodeAffinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PriorityClass,
    Taint,
    Toleration,
)
from ksched.api import (
    LabelSelector,
    PodAffinity,
    PodAffinityTerm,
    PodDisruptionBudget,
    PreferredSchedulingTerm,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
    Workload,
)
from tests.refusals import refused

INT64_MAX = 2**63 - 1
POD = Pod("p", containers=[Container("c")])

# (id, a call building the record, the exact fragment of the message)
CASES: list[tuple[str, Callable[[], Any], str]] = [
    # ---- nodes
    ("node-unschedulable-string", lambda: Node("n1", unschedulable="false"),
     "node n1: unschedulable: expected a boolean, got a string"),
    ("node-unschedulable-int", lambda: Node("n1", unschedulable=1),
     "node n1: unschedulable: expected a boolean, got an integer"),
    ("node-name-int", lambda: Node(1), "node: name: expected a string, got an integer"),
    ("node-labels-list", lambda: Node("n1", labels=["a"]),
     "node n1: labels: expected an object, got a list"),
    ("node-label-value-int", lambda: Node("n1", labels={"zone": 1}),
     "node n1: labels.zone: expected a string, got an integer"),
    ("node-label-key-int", lambda: Node("n1", labels={1: "a"}),
     "node n1: labels: expected string keys, got an integer"),
    ("node-taints-string", lambda: Node("n1", taints="k=v:NoSchedule"),
     "node n1: taints: expected a list, got a string"),
    ("node-taint-not-a-taint", lambda: Node("n1", taints=[("k", "v", "NoSchedule")]),
     "node n1: taints[0]: expected a Taint, got a list"),
    ("node-allocatable-malformed", lambda: Node("n1", allocatable={"cpu": "eight"}),
     'node n1: allocatable.cpu: invalid quantity "eight"'),
    ("node-allocatable-negative-int", lambda: Node("n1", allocatable={"cpu": -1}),
     "node n1: allocatable.cpu: Invalid value: -1: must be greater than or equal to 0"),
    ("node-allocatable-negative-text", lambda: Node("n1", allocatable={"memory": "-1Gi"}),
     'node n1: allocatable.memory: Invalid value: "-1Gi": must be greater than or equal to 0'),
    ("node-allocatable-over-int64", lambda: Node("n1", allocatable={"memory": 2**63}),
     f"node n1: allocatable.memory: Invalid value: {2**63}: must be at most {INT64_MAX}"),
    ("node-allocatable-cpu-1e18", lambda: Node("n1", allocatable={"cpu": "1e18"}),
     'node n1: allocatable.cpu: quantity "1e18" is too large: kube-scheduler counts cpu as '
     "an int64 number of millicores"),
    ("node-allocatable-float-huge", lambda: Node("n1", allocatable={"memory": 1e300}),
     "node n1: allocatable.memory: quantity \"1e+300\" is too large"),
    ("node-allocatable-nan", lambda: Node("n1", allocatable={"cpu": math.nan}),
     'node n1: allocatable.cpu: invalid quantity "nan"'),
    ("node-allocatable-bool", lambda: Node("n1", allocatable={"pods": True}),
     "node n1: allocatable.pods: expected a quantity, got a boolean"),
    ("node-allocatable-list", lambda: Node("n1", allocatable=[("cpu", 1)]),
     "node n1: allocatable: expected an object, got a list"),
    ("node-images-item", lambda: Node("n1", images=["nginx"]),
     "node n1: images[0]: expected a ContainerImage, got a string"),
    ("image-size-string", lambda: ContainerImage(["nginx"], "1Gi"),
     "containerimage: size_bytes: expected an integer, got a string"),
    ("image-names-string", lambda: ContainerImage("nginx"),
     "containerimage: names: expected a list, got a string"),
    # ---- taints and tolerations
    ("taint-effect", lambda: Taint("k", "v", "NoScheduel"),
     'taint: effect: Unsupported value: "NoScheduel": supported values: "NoSchedule", '
     '"PreferNoSchedule", "NoExecute"'),
    ("taint-key-none", lambda: Taint(None), "taint: key: expected a string, got null"),
    ("toleration-operator", lambda: Toleration("k", "exists"),
     'toleration: operator: Unsupported value: "exists": supported values: "Equal", "Exists"'),
    ("toleration-effect", lambda: Toleration("k", "Exists", "", "Never"),
     'toleration: effect: Unsupported value: "Never"'),
    ("toleration-value-int", lambda: Toleration("k", "Equal", 5),
     "toleration: value: expected a string, got an integer"),
    # ---- containers and ports
    ("container-requests-malformed", lambda: Container("c", requests={"cpu": "1.5.0"}),
     'container c: requests.cpu: invalid quantity "1.5.0"'),
    ("container-requests-bool", lambda: Container("c", requests={"cpu": False}),
     "container c: requests.cpu: expected a quantity, got a boolean"),
    ("container-requests-none", lambda: Container("c", requests={"cpu": None}),
     "container c: requests.cpu: expected a quantity, got null"),
    ("container-limits-negative", lambda: Container("c", limits={"cpu": "-500m"}),
     'container c: limits.cpu: Invalid value: "-500m": must be greater than or equal to 0'),
    ("container-limits-huge", lambda: Container("c", limits={"cpu": "10E"}),
     'container c: limits.cpu: quantity "10E" is too large'),
    ("container-ports-item", lambda: Container("c", ports=[80]),
     "container c: ports[0]: expected a ContainerPort, got an integer"),
    ("container-name-none", lambda: Container(None),
     "container: name: expected a string, got null"),
    ("container-restart-policy-bool", lambda: Container("c", restart_policy=True),
     "container c: restart_policy: expected a string, got a boolean"),
    ("port-string", lambda: ContainerPort("80"),
     "containerport: container_port: expected an integer, got a string"),
    ("port-protocol", lambda: ContainerPort(80, protocol="tcp"),
     'containerport: protocol: Unsupported value: "tcp": supported values: "TCP", "UDP", '
     '"SCTP"'),
    ("port-host-float", lambda: ContainerPort(80, 80.0),
     "containerport: host_port: expected an integer, got a number"),
    # ---- pods
    ("pod-priority-string", lambda: Pod("p", priority="10"),
     "pod default/p: priority: expected an integer, got a string"),
    ("pod-priority-bool", lambda: Pod("p", priority=True),
     "pod default/p: priority: expected an integer, got a boolean"),
    ("pod-namespace-none", lambda: Pod("p", namespace=None),
     "pod p: namespace: expected a string, got null"),
    ("pod-containers-string", lambda: Pod("p", containers="c"),
     "pod default/p: containers: expected a list, got a string"),
    ("pod-containers-dict", lambda: Pod("p", containers=[{"name": "c"}]),
     "pod default/p: containers[0]: expected a Container, got an object"),
    ("pod-host-network-string", lambda: Pod("p", host_network="yes"),
     "pod default/p: host_network: expected a boolean, got a string"),
    ("pod-deleting-none", lambda: Pod("p", deleting=None),
     "pod default/p: deleting: expected a boolean, got null"),
    ("pod-preemption-policy", lambda: Pod("p", preemption_policy="Sometimes"),
     'pod default/p: preemption_policy: Unsupported value: "Sometimes": supported values: '
     '"PreemptLowerPriority", "Never"'),
    ("pod-start-time-string", lambda: Pod("p", start_time="2026-01-01T00:00:00Z"),
     "pod default/p: start_time: expected a number of seconds or null, got a string"),
    ("pod-node-selector-list", lambda: Pod("p", node_selector=["disk=ssd"]),
     "pod default/p: node_selector: expected an object, got a list"),
    ("pod-node-affinity-dict", lambda: Pod("p", node_affinity={"required": []}),
     "pod default/p: node_affinity: expected a NodeAffinity or null, got an object"),
    ("pod-tolerations-item", lambda: Pod("p", tolerations=["k"]),
     "pod default/p: tolerations[0]: expected a Toleration, got a string"),
    ("pod-overhead-malformed", lambda: Pod("p", overhead={"cpu": "x"}),
     'pod default/p: overhead.cpu: invalid quantity "x"'),
    ("pod-requests-over-int64", lambda: Pod("p", pod_requests={"memory": 2**64}),
     "pod default/p: pod_requests.memory: Invalid value: 18446744073709551616: must be at most"),
    ("pod-limits-malformed", lambda: Pod("p", pod_limits={"cpu": "a lot"}),
     'pod default/p: pod_limits.cpu: invalid quantity "a lot"'),
    ("pod-scheduling-gates-string", lambda: Pod("p", scheduling_gates="example.com/a"),
     "pod default/p: scheduling_gates: expected a list, got a string"),
    ("pod-controller-ints", lambda: Pod("p", controller=("apps/v1", "ReplicaSet", 3)),
     "pod default/p: controller[2]: expected a string, got an integer"),
    ("pod-evolve-ready", lambda: attrs.evolve(POD, ready="True"),
     "pod default/p: ready: expected a boolean, got a string"),
    ("pod-evolve-containers", lambda: attrs.evolve(POD, containers=[Container("c"), "d"]),
     "pod default/p: containers[1]: expected a Container, got a string"),
    # ---- affinity and spread records
    ("requirement-values-string", lambda: NodeSelectorRequirement("k", "In", "ssd"),
     "nodeselectorrequirement: values: expected a list, got a string"),
    ("term-expressions-item", lambda: NodeSelectorTerm([("k", "In", ["a"])]),
     "nodeselectorterm: match_expressions[0]: expected a NodeSelectorRequirement, got a list"),
    ("preferred-weight-string", lambda: PreferredSchedulingTerm("5", NodeSelectorTerm()),
     "preferredschedulingterm: weight: expected an integer, got a string"),
    ("preferred-preference-none", lambda: PreferredSchedulingTerm(5, None),
     "preferredschedulingterm: preference: expected a NodeSelectorTerm, got null"),
    ("node-affinity-required-item", lambda: NodeAffinity(required=["zone"]),
     "nodeaffinity: required[0]: expected a NodeSelectorTerm, got a string"),
    ("selector-labels-int", lambda: LabelSelector({"app": 1}),
     "labelselector: match_labels.app: expected a string, got an integer"),
    ("pod-affinity-term-key-none", lambda: PodAffinityTerm(None),
     "podaffinityterm: topology_key: expected a string, got null"),
    ("pod-affinity-term-selector-dict", lambda: PodAffinityTerm("zone", {"app": "web"}),
     "podaffinityterm: label_selector: expected a LabelSelector or null, got an object"),
    ("weighted-term-weight-float", lambda: WeightedPodAffinityTerm(1.5, PodAffinityTerm("z")),
     "weightedpodaffinityterm: weight: expected an integer, got a number"),
    ("pod-affinity-required-item", lambda: PodAffinity(required=["zone"]),
     "podaffinity: required[0]: expected a PodAffinityTerm, got a string"),
    ("spread-when-unsatisfiable", lambda: TopologySpreadConstraint(1, "zone", "Never"),
     'topologyspreadconstraint: when_unsatisfiable: Unsupported value: "Never": supported '
     'values: "DoNotSchedule", "ScheduleAnyway"'),
    ("spread-policy", lambda: TopologySpreadConstraint(1, "zone", "DoNotSchedule",
                                                       node_taints_policy="honor"),
     'topologyspreadconstraint: node_taints_policy: Unsupported value: "honor"'),
    ("spread-min-domains-string", lambda: TopologySpreadConstraint(1, "zone", "DoNotSchedule",
                                                                   min_domains="2"),
     "topologyspreadconstraint: min_domains: expected an integer or null, got a string"),
    ("spread-max-skew-none", lambda: TopologySpreadConstraint(None, "zone", "DoNotSchedule"),
     "topologyspreadconstraint: max_skew: expected an integer, got null"),
    # ---- other kinds
    ("namespace-labels-int", lambda: Namespace("ns", {"team": 1}),
     "namespace ns: labels.team: expected a string, got an integer"),
    ("priority-class-value-string", lambda: PriorityClass("gold", "1000"),
     "priorityclass gold: value: expected an integer, got a string"),
    ("priority-class-policy", lambda: PriorityClass("gold", 1, False, "Always"),
     'priorityclass gold: preemption_policy: Unsupported value: "Always"'),
    ("pdb-min-available-float", lambda: PodDisruptionBudget("b", min_available=0.5),
     "poddisruptionbudget default/b: min_available: expected an integer, a percentage or "
     "null, got a number"),
    ("pdb-selector-dict", lambda: PodDisruptionBudget("b", selector={"app": "web"}),
     "poddisruptionbudget default/b: selector: expected a LabelSelector or null, got an object"),
    ("workload-replicas-string", lambda: Workload("ReplicaSet", "rs", replicas="3"),
     "workload default/rs: replicas: expected an integer or null, got a string"),
]


@pytest.mark.parametrize("build, match", [pytest.param(b, m, id=i) for i, b, m in CASES])
def test_bad_record(build: Callable[[], Any], match: str) -> None:
    err = refused(build, match=match, error=InvalidObjectError)
    assert str(err).startswith(match.split(":")[0])
