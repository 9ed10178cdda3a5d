"""VolumeBinding's Reserve and Unreserve across pods: the volume binding (or the provisioning
node) one pod assumes is what the next pod sees, in ``schedule_batch`` and in the Simulator,
and a later Reserve or Permit failure gives it back (``AssumePodVolumes``,
``RevertAssumedPodVolumes``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import attrs
import pytest

from ksched import (
    ClusterState,
    Container,
    Node,
    Pod,
    cluster_from_objects,
    load_pods,
    read_objects,
    schedule_batch,
)
from ksched.api import (
    ClaimRef,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    Volume,
)
from ksched.config import load_config
from ksched.conformance import load_trace
from ksched.plugins import IN_TREE_REGISTRY
from ksched.simulator import Event, Simulator
from ksched.status import Code, Status
from ksched.storage_listers import StorageObjects
from ksched.volume_binder import REASON_BIND_CONFLICT

GI = 2**30
CLASSES = (StorageClass("local", provisioner="kubernetes.io/no-provisioner",
                        volume_binding_mode="WaitForFirstConsumer"),
           StorageClass("wffc", provisioner="csi.example.com",
                        volume_binding_mode="WaitForFirstConsumer"))


def node(name: str) -> Node:
    return Node(name, labels={"kubernetes.io/hostname": name},
                allocatable={"cpu": 4000, "memory": 64 * GI, "pods": 110})


def pod(name: str, *claims: str) -> Pod:
    return Pod(name, uid=f"uid-{name}", containers=[Container("c", requests={"cpu": 100})],
               volumes=[Volume(f"v{i}", "persistentVolumeClaim", claim_name=c)
                        for i, c in enumerate(claims)])


def claim(name: str, storage_class: str = "local") -> PersistentVolumeClaim:
    return PersistentVolumeClaim(name, uid=f"uid-{name}", request=GI,
                                 access_modes=("ReadWriteOnce",), storage_class=storage_class)


def local_pv(name: str, host: str) -> PersistentVolume:
    return PersistentVolume(name, capacity=GI, access_modes=("ReadWriteOnce",),
                            storage_class="local", phase="Available", source="local",
                            node_affinity=(NodeSelectorTerm((NodeSelectorRequirement(
                                "kubernetes.io/hostname", "In", (host,)),)),))


def cluster(pvs=(local_pv("pv", "n0"),), pvcs=(claim("a-data"), claim("b-data"))
            ) -> ClusterState:
    return ClusterState.from_records([node("n0"), node("n1")], storage=StorageObjects(
        persistent_volumes=pvs, persistent_volume_claims=pvcs, storage_classes=CLASSES))


NO_VOLUME = f"0/2 nodes are available: 2 {REASON_BIND_CONFLICT}."


def claimed_by(state: ClusterState, volume: str = "pv") -> str | None:
    ref = state.storage.volume(volume).claim_ref
    return None if ref is None else ref.name


@attrs.frozen
class Refuse:
    """A Reserve and Permit plugin that refuses pod ``a`` (and logs its calls)."""

    NAME: ClassVar[str] = "Refuse"
    args: Any = None
    calls: list = attrs.field(factory=list)

    def reserve(self, cycle, node):
        self.calls.append(("reserve", cycle.pod.name))
        return Status(Code.UNSCHEDULABLE, ("no budget",)) if cycle.pod.name == "a" \
            else Status()

    def unreserve(self, cycle, node):
        self.calls.append(("unreserve", cycle.pod.name))

    def permit(self, cycle, node):
        return (Status(Code.UNSCHEDULABLE, ("not now",)) if cycle.pod.name == "a"
                else Status()), 0.0


def refusing(point: str, plugin: Refuse):
    registry = IN_TREE_REGISTRY.merged({"Refuse": lambda args: plugin})
    return load_config({"apiVersion": "kubescheduler.config.k8s.io/v1",
                        "kind": "KubeSchedulerConfiguration",
                        "profiles": [{"plugins": {point: {"enabled": [{"name": "Refuse"}]}}}]},
                       registry=registry)


# --------------------------------------------------------------------------- schedule_batch


@pytest.mark.parametrize("fast_path", [True, False])
def test_two_pods_one_volume_the_second_does_not_get_it(fast_path) -> None:
    result = schedule_batch(cluster(), [pod("a", "a-data"), pod("b", "b-data")],
                            fast_path=fast_path)
    assert [(p.node, p.reason) for p in result.placements] == [("n0", ""), (None, NO_VOLUME)]
    assert result.state.storage.volume("pv").claim_ref == ClaimRef("default", "a-data",
                                                                    "uid-a-data")
    assert claimed_by(cluster()) is None  # the input is not changed


def test_the_second_pod_takes_the_other_volume() -> None:
    pvs = (local_pv("pv", "n0"), local_pv("pv-1", "n1"))
    result = schedule_batch(cluster(pvs), [pod("a", "a-data"), pod("b", "b-data")])
    assert [p.node for p in result.placements] == ["n0", "n1"]
    assert (claimed_by(result.state), claimed_by(result.state, "pv-1")) == ("a-data", "b-data")


def test_a_pod_sharing_the_claim_goes_where_its_volume_is() -> None:
    """The assumed PV is bound to the claim: a second pod of the claim is matched to it."""
    result = schedule_batch(cluster(pvs=(local_pv("pv", "n1"),)),
                            [pod("a", "a-data"), pod("b", "a-data")])
    assert [p.node for p in result.placements] == ["n1", "n1"]


def test_a_provisioned_claim_keeps_its_selected_node() -> None:
    """Reserve sets the claim's selected node; a second pod of the claim can go only there."""
    pvcs = (claim("data", "wffc"),)
    result = schedule_batch(cluster(pvs=(), pvcs=pvcs), [pod("a", "data"), pod("b", "data")])
    first = result.placements[0].node
    assert result.state.storage.claim("default", "data").selected_node == first
    assert result.placements[1].node == first


@pytest.mark.parametrize("point, reason", [("reserve", "no budget"), ("permit", "not now")])
def test_a_later_reserve_or_permit_failure_gives_the_volume_back(point, reason) -> None:
    plugin = Refuse()
    result = schedule_batch(cluster(), [pod("a", "a-data"), pod("b", "b-data")],
                            profile=refusing(point, plugin))
    assert [(p.node, p.reason) for p in result.placements] == [
        (None, f"0/1 nodes are available: 1 {reason}."), ("n0", "")]
    assert (("unreserve", "a") in plugin.calls) == (point == "reserve")
    assert claimed_by(result.state) == "b-data"
    assert int(result.state.requested[0, result.state.resource_column("pods")]) == 1


@pytest.mark.parametrize("fast_path", [True, False])
def test_reserve_runs_where_the_filter_is_off(fast_path) -> None:
    """Without VolumeBinding's Filter the compiled loop would take the pods; their Reserve
    still assumes (so both paths agree): the first pod's volume is not the second's."""
    config = load_config({"apiVersion": "kubescheduler.config.k8s.io/v1",
                          "kind": "KubeSchedulerConfiguration",
                          "profiles": [{"plugins": {"filter": {"disabled": [
                              {"name": "VolumeBinding"}]}}}]})
    result = schedule_batch(cluster(), [pod("a", "a-data"), pod("b", "b-data")],
                            profile=config, fast_path=fast_path)
    assert [p.node for p in result.placements] == ["n0", "n1"]
    assert claimed_by(result.state) == "a-data"


def test_without_reserve_plugins_nothing_is_assumed() -> None:
    config = load_config({"apiVersion": "kubescheduler.config.k8s.io/v1",
                          "kind": "KubeSchedulerConfiguration",
                          "profiles": [{"plugins": {"reserve": {"disabled": [
                              {"name": "VolumeBinding"}]}}}]})
    result = schedule_batch(cluster(), [pod("a", "a-data"), pod("b", "b-data")],
                            profile=config)
    assert [p.node for p in result.placements] == ["n0", "n0"]
    assert claimed_by(result.state) is None


# --------------------------------------------------------------------------- the Simulator


def create(at: float, p: Pod) -> Event:
    return Event(at, "create", pod=p)


def history(result, key: str) -> list[tuple[float, str, str | None]]:
    return [(d.time, d.outcome, d.node) for d in result.decisions if d.pod == key]


@pytest.mark.parametrize("fast_path", [True, False])
def test_simulator_the_second_pod_does_not_get_the_volume(fast_path) -> None:
    result = Simulator(cluster(), fast_path=fast_path).run(
        [create(0, pod("a", "a-data")), create(1, pod("b", "b-data"))])
    assert history(result, "default/a") == [(0, "bound", "n0")]
    assert history(result, "default/b") == [(1, "unschedulable", None)]
    assert next(d for d in result.decisions if d.pod == "default/b").reason.startswith(
        NO_VOLUME + " no new claims to deallocate, preemption: ")
    assert claimed_by(result.state) == "a-data"


def test_simulator_a_permit_rejection_gives_the_volume_back() -> None:
    plugin = Refuse()
    result = Simulator(cluster(), profile=refusing("permit", plugin)).run(
        [create(0, pod("a", "a-data")), create(1, pod("b", "b-data"))], until=2)
    assert history(result, "default/a")[0] == (0, "rejected", "n0")
    assert history(result, "default/b") == [(1, "bound", "n0")]
    assert claimed_by(result.state) == "b-data"


@attrs.frozen
class Hold:
    """A Permit plugin that makes every pod wait 30 s (then the pod is rejected)."""

    NAME: ClassVar[str] = "Hold"
    args: Any = None

    def permit(self, cycle, node):
        return Status(Code.WAIT), 30.0


def hold_config():
    registry = IN_TREE_REGISTRY.merged({"Hold": Hold})
    return load_config({"apiVersion": "kubescheduler.config.k8s.io/v1",
                        "kind": "KubeSchedulerConfiguration",
                        "profiles": [{"plugins": {"permit": {"enabled": [{"name": "Hold"}]}}}]},
                       registry=registry)


def test_simulator_a_permit_timeout_gives_the_volume_back() -> None:
    result = Simulator(cluster(), profile=hold_config()).run([create(0, pod("a", "a-data"))],
                                                             until=30)
    assert history(result, "default/a")[:2] == [(0, "waiting", "n0"), (30, "rejected", "n0")]


def test_simulator_unreserve_reaches_the_cache_rebuilt_for_a_new_node() -> None:
    """The assumption outlives the cache rebuilt for a new node, and Unreserve (the waiting
    pod is deleted) reverts it there: the next pod gets the volume."""
    events = [create(0, pod("a", "a-data")), Event(10, "node-add", node=node("n2")),
              Event(20, "delete", name="default/a"), create(20, pod("b", "b-data"))]
    result = Simulator(cluster(), profile=hold_config()).run(events[:2], until=15)
    assert claimed_by(result.state) == "a-data"
    result = Simulator(cluster(), profile=hold_config()).run(events, until=25)
    assert history(result, "default/a") == [(0, "waiting", "n0"), (20, "deleted", None)]
    assert history(result, "default/b") == [(20, "waiting", "n0")]
    assert claimed_by(result.state) == "b-data"


# --------------------------------------------------------------------------- the volumes traces

TRACES = sorted((Path(__file__).parent / "conformance").glob("volumes-*.json.gz"))
_STORAGE = ("persistent_volumes", "persistent_volume_claims", "storage_classes", "csi_nodes",
            "csi_drivers", "csi_storage_capacities")
NO_RESERVE = {"apiVersion": "kubescheduler.config.k8s.io/v1",
              "kind": "KubeSchedulerConfiguration", "percentageOfNodesToScore": 100,
              "profiles": [{"plugins": {"reserve": {"disabled": [{"name": "*"}]}}}]}


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name.removesuffix(".json.gz"))
def test_volumes_traces_batch_alike_with_and_without_reserve(path: Path) -> None:
    """The traces were recorded without Reserve (each unbound claim has one pod): assuming
    the bindings changes no placement there, and the compiled loop (bound-claim pods) and the
    framework agree."""
    inputs = load_trace(path)["input"]
    cluster = cluster_from_objects(read_objects(
        inputs["nodes"] + inputs["existing_pods"] + inputs.get("namespaces", [])
        + [o for key in _STORAGE for o in inputs.get(key, [])]))
    pods = load_pods(inputs["pending_pods"])
    runs = [schedule_batch(cluster, pods, percentage_of_nodes_to_score=100, fast_path=fast)
            for fast in (True, False)]
    runs.append(schedule_batch(cluster, pods, profile=load_config(NO_RESERVE)))
    first = [(p.node, p.reason) for p in runs[0].placements]
    assert all([(p.node, p.reason) for p in r.placements] == first for r in runs[1:])
    storage = runs[0].state.storage
    for placement in runs[0].scheduled:  # the provisioned claims carry their pod's node
        for volume in placement.pod.volumes:
            before = cluster.storage.claim(placement.pod.namespace, volume.claim_name)
            if volume.uses_claim and not before.volume_name:
                after = storage.claim(before.namespace, before.name)
                assert after.selected_node == placement.node
