"""Pods with volumes on the compiled loop: it counts attach limits, classes replicas that mount
claims of their own together, runs Reserve after it places pods with unbound claims, and
places every pod exactly as the object-level framework does, with the same storage objects
after the batch (the assumed bindings and selected nodes)."""

from __future__ import annotations

import attrs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ksched.api import (
    ClaimRef,
    Container,
    CSINode,
    CSINodeDriver,
    Node,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    StorageClass,
    TopologySelectorLabelRequirement,
    TopologySelectorTerm,
    Volume,
)
from ksched.constants import LABEL_HOSTNAME, LABEL_ZONE
from ksched.driver import Driver
from ksched.engine import schedule_batch
from ksched.fused_loop import FusedLoop
from ksched.simulator import Simulator
from ksched.state import ClusterState
from ksched.storage_listers import StorageObjects
from ksched.timeline import Event
from ksched.workloads import scheduling_csi_pvs, stateful_set_claims
from tests.plugins.volume_scenarios import DRIVERS, persistent_volumes, pod_volumes

ZONES = ("z1", "z2")
CLASSES = (
    StorageClass("wffc", provisioner="csi.example.com",
                 volume_binding_mode="WaitForFirstConsumer"),
    StorageClass("zonal", provisioner="ebs.csi.aws.com",
                 volume_binding_mode="WaitForFirstConsumer",
                 allowed_topologies=(TopologySelectorTerm((TopologySelectorLabelRequirement(
                     LABEL_ZONE, ("z1",)),)),)),
    StorageClass("gce-in-tree", provisioner="kubernetes.io/gce-pd",
                 volume_binding_mode="WaitForFirstConsumer"),
    StorageClass("immediate", provisioner="ebs.csi.aws.com"),
    StorageClass("local", provisioner="kubernetes.io/no-provisioner",
                 volume_binding_mode="WaitForFirstConsumer"),
)
CLASS_NAMES = ("wffc", "zonal", "gce-in-tree", "immediate", "local")
AFFINITIES = (None, (NodeSelectorTerm((NodeSelectorRequirement(LABEL_ZONE, "In", ("z2",)),)),),
              (NodeSelectorTerm((NodeSelectorRequirement(LABEL_HOSTNAME, "In", ("n0",)),)),))


def _both(cluster: ClusterState, pods: list[Pod], **options):
    fast = schedule_batch(cluster, pods, **options)
    slow = schedule_batch(cluster, pods, fast_path=False, **options)
    return fast, slow


def _assert_same(fast, slow) -> None:
    assert [(p.pod.key, p.node, p.reason) for p in fast.placements] == \
           [(p.pod.key, p.node, p.reason) for p in slow.placements]
    assert np.array_equal(fast.state.requested, slow.state.requested)
    assert fast.state.storage == slow.state.storage


@st.composite
def own_claims(draw: st.DrawFn, name: str) -> tuple[PersistentVolumeClaim, list]:
    """A replica's own claim: unbound of a class, or bound to a volume of its own (now and
    then one whose CSI handle another volume has)."""
    storage_class = draw(st.sampled_from(CLASS_NAMES))
    if draw(st.booleans()):
        return PersistentVolumeClaim(name, access_modes=("ReadWriteOnce",), request=1,
                                     storage_class=storage_class), []
    handle = draw(st.sampled_from((f"h-{name}",) * 4 + ("h1",)))
    pv = PersistentVolume(f"pv-{name}", capacity=1, access_modes=("ReadWriteOnce",),
                          storage_class=storage_class, claim_ref=ClaimRef("default", name),
                          phase="Bound", source="csi",
                          driver=draw(st.sampled_from(DRIVERS[:3])), volume_handle=handle,
                          node_affinity=draw(st.sampled_from(AFFINITIES)))
    bound = draw(st.integers(0, 9)) > 0
    return PersistentVolumeClaim(name, access_modes=("ReadWriteOnce",), request=1,
                                 storage_class=storage_class, volume_name=pv.name,
                                 phase="Bound", bind_completed=bound), [pv]


@st.composite
def batches(draw: st.DrawFn) -> tuple[ClusterState, list[Pod]]:
    """Nodes in two zones with CSINodes limiting a driver or two to 0-3 volumes, volumes of
    the drawn kinds (a few unclaimed ones of a class), shared claims, bound pods with
    volumes, and pending replicas of a few templates, most mounting claims of their own,
    some shared claims or inline disks."""
    count = draw(st.integers(1, 6))
    names = [f"n{i}" for i in range(count)]
    nodes = [Node(n, labels={LABEL_HOSTNAME: n, LABEL_ZONE: ZONES[i % 2]},
                  allocatable={"cpu": 4000, "memory": 8 << 30, "pods": 110})
             for i, n in enumerate(names)]
    csi = [CSINode(n, tuple(CSINodeDriver(d, allocatable=draw(st.sampled_from((None, 0, 1, 2,
                                                                             3, 3)))) for d in
                            draw(st.lists(st.sampled_from(DRIVERS[:3]), max_size=2,
                                          unique=True))))
           for n in names if draw(st.integers(0, 9)) < 9]
    volumes = [attrs.evolve(draw(persistent_volumes(f"pv-{i}")),
                            storage_class=draw(st.sampled_from(CLASS_NAMES)))
               for i in range(draw(st.integers(0, 4)))]
    claims = [PersistentVolumeClaim(f"c{i}", access_modes=("ReadWriteOnce",), request=1,
                                    storage_class=draw(st.sampled_from(CLASS_NAMES)),
                                    volume_name=draw(st.sampled_from(
                                        ("",) * 3 + tuple(v.name for v in volumes))))
              for i in range(4)]
    claims = [attrs.evolve(c, bind_completed=bool(c.volume_name)) for c in claims]
    bound = [Pod(f"b{i}", uid=f"uid-b{i}", node_name=draw(st.sampled_from(names)),
                 containers=[Container("c")], volumes=draw(pod_volumes()))
             for i in range(draw(st.integers(0, 4)))]
    templates = [Pod("t", containers=[Container("c", requests={"cpu": draw(st.sampled_from(
        (100, 1000)))})], volumes=draw(st.sampled_from(((), (Volume("cfg", "configMap"),)))))
                 for _ in range(draw(st.integers(1, 3)))]
    pending = []
    for i in range(draw(st.integers(1, 14))):
        template = draw(st.sampled_from(templates))
        mounts = []
        for j in range(draw(st.sampled_from((1, 1, 1, 2, 0)))):
            kind = draw(st.integers(0, 9))
            if kind < 7:  # a claim of its own
                claim, pvs = draw(own_claims(f"own-{i}-{j}"))
                claims.append(claim)
                volumes += pvs
                mounts.append(Volume(f"v{j}", "persistentVolumeClaim", claim_name=claim.name))
            elif kind < 9:  # a shared one
                mounts.append(Volume(f"v{j}", "persistentVolumeClaim",
                                     claim_name=draw(st.sampled_from(("c0", "c1", "c2", "c3")))))
            else:
                mounts += [attrs.evolve(v, name=f"v{j}") for v in draw(pod_volumes())[:1]]
        pending.append(attrs.evolve(template, name=f"p{i}", uid=f"uid-p{i}",
                                    volumes=template.volumes + tuple(mounts)))
    storage = StorageObjects(persistent_volumes=volumes, persistent_volume_claims=claims,
                             storage_classes=CLASSES, csi_nodes=csi)
    return ClusterState.from_records(nodes, bound, storage=storage), pending


@settings(max_examples=150, deadline=None)
@given(batches(), st.sampled_from((0, 50, 100)))
def test_drawn_storage_batches_place_identically(batch, percentage: int) -> None:
    cluster, pods = batch
    fast, slow = _both(cluster, pods, percentage_of_nodes_to_score=percentage)
    _assert_same(fast, slow)
    assert cluster.storage is batch[0].storage  # the input is never changed


def _no_framework(monkeypatch) -> None:
    def refuse(self, framework, pod, *args, **kwargs):
        raise AssertionError(f"{pod.key} went to the framework")
    monkeypatch.setattr(Driver, "framework_cycle", refuse)


def test_replicas_with_claims_of_their_own_share_one_class_on_the_loop(monkeypatch) -> None:
    cluster, pods = stateful_set_claims(30, 10, 200, limit=3)
    fast, slow = _both(cluster, pods[:120])  # room for 30 nodes x 3 volumes
    _assert_same(fast, slow)
    assert len(fast.scheduled) == 90 and {p.reason for p in fast.unschedulable} == {
        "0/30 nodes are available: 30 node(s) exceed max volume count."}
    selected = [c.selected_node for c in fast.state.storage.persistent_volume_claims]
    assert selected[:90] == [p.node for p in fast.placements[:90]] and not any(selected[90:])
    _no_framework(monkeypatch)
    made = []
    monkeypatch.setattr(FusedLoop, "_compile", _counting(FusedLoop._compile, made))
    result = schedule_batch(cluster, pods[:90])
    assert len(result.scheduled) == 90 and len(made) == 1


def _counting(method, calls: list):
    def wrapped(self, *args, **kwargs):
        calls.append(args)
        return method(self, *args, **kwargs)
    return wrapped


def test_attach_limits_fill_up_on_the_loop_and_fail_alike() -> None:
    cluster, pods = scheduling_csi_pvs(4, 0, 12, limit=2)
    fast, slow = _both(cluster, pods)
    _assert_same(fast, slow)
    assert len(fast.scheduled) == 8
    assert fast.unschedulable[0].reason == \
        "0/4 nodes are available: 4 node(s) exceed max volume count."


def test_bound_pods_volumes_count_against_the_limit() -> None:
    cluster, pods = scheduling_csi_pvs(2, 0, 4, limit=2)
    bound = [attrs.evolve(pods[0], node_name="node-000000")]
    state = ClusterState.from_records(cluster.nodes, bound, storage=cluster.storage)
    fast, slow = _both(state, pods[1:])
    _assert_same(fast, slow)
    assert sorted(p.node for p in fast.placements) == ["node-000000", "node-000001",
                                                        "node-000001"]


def test_a_claim_two_pending_pods_share_follows_the_first() -> None:
    """The second pod sees the node the first pod's Reserve selected for their claim."""
    cluster, pods = stateful_set_claims(8, 0, 6)
    shared = attrs.evolve(pods[5], name="web-shared", volumes=pods[2].volumes)
    fast, slow = _both(cluster, [*pods[:5], shared])
    _assert_same(fast, slow)
    assert fast.placements[-1].node == fast.placements[2].node


@pytest.mark.parametrize("build", [stateful_set_claims, scheduling_csi_pvs])
def test_the_simulator_places_claim_pods_alike(build) -> None:
    cluster, pods = build(6, 0, 30, limit=4)
    events = [Event(float(i % 3), "create", p) for i, p in enumerate(pods)]
    runs = [Simulator(cluster, fast_path=fast).run(events) for fast in (True, False)]
    assert [(d.pod, d.outcome, d.node, d.reason) for d in runs[0].decisions] == \
        [(d.pod, d.outcome, d.node, d.reason) for d in runs[1].decisions]
    assert runs[0].state.storage == runs[1].state.storage
