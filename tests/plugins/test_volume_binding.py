"""VolumeBinding: the plugin's vectorised Filter against the binder's object-level
``find_pod_volumes`` (``binder.go``) on random clusters with storage, and upstream's rules and
messages on named cases."""

from __future__ import annotations

import attrs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ksched.api import (
    ClaimRef,
    Container,
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    LabelSelector,
    LabelSelectorRequirement,
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
from ksched.constants import LABEL_HOSTNAME, LABEL_ZONE, LABEL_ZONE_BETA
from ksched.framework.capabilities import FilterKind, filter_kind, node_static_for
from ksched.framework.interfaces import Cycle
from ksched.plugins.volume_binding import VolumeBinding
from ksched.state import ClusterState
from ksched.status import Code, Status, unresolvable
from ksched.storage_listers import StorageObjects
from ksched.volume_binder import (
    REASON_BIND_CONFLICT,
    REASON_NODE_CONFLICT,
    REASON_NOT_ENOUGH_SPACE,
    REASON_PV_NOT_EXIST,
    REASON_UNBOUND_IMMEDIATE,
    BinderError,
    claim_problem,
    find_pod_volumes,
    pod_volume_claims,
)
from tests.strategies import assert_filter_equal

SETTINGS = settings(max_examples=150, deadline=None)
GI = 1024 ** 3
ZONES = ("z1", "z2")
CLASSES = (
    StorageClass("wffc", provisioner="csi.example.com", volume_binding_mode="WaitForFirstConsumer"),
    StorageClass("local", provisioner="kubernetes.io/no-provisioner",
                 volume_binding_mode="WaitForFirstConsumer"),
    StorageClass("zonal", provisioner="csi.example.com", volume_binding_mode="WaitForFirstConsumer",
                 allowed_topologies=(TopologySelectorTerm((TopologySelectorLabelRequirement(
                     LABEL_ZONE, ("z1",)),)),)),
    StorageClass("tracked", provisioner="cap.example.com",
                 volume_binding_mode="WaitForFirstConsumer"),
    StorageClass("immediate", provisioner="csi.example.com"),
    StorageClass("no-provisioner", volume_binding_mode="WaitForFirstConsumer"),
)
CLASS_NAMES = ("wffc", "local", "zonal", "tracked", "immediate", "no-provisioner", "", "gone")
DRIVERS = (CSIDriver("cap.example.com", storage_capacity=True), CSIDriver("csi.example.com"))


def term(*requirements: tuple[str, str, tuple[str, ...]], fields=()) -> NodeSelectorTerm:
    return NodeSelectorTerm(tuple(NodeSelectorRequirement(*r) for r in requirements),
                            tuple(NodeSelectorRequirement(*r) for r in fields))


def pod(*claims: str, ephemeral: tuple[str, ...] = (), uid: str = "uid-p") -> Pod:
    volumes = [Volume(f"v{i}", "persistentVolumeClaim", claim_name=c) for i, c in enumerate(claims)]
    volumes += [Volume(name, "ephemeral") for name in ephemeral]
    return Pod("p", uid=uid, containers=[Container("c")], volumes=volumes)


def node(name: str, zone: str | None = None) -> Node:
    labels = {LABEL_HOSTNAME: name}
    if zone is not None:
        labels[LABEL_ZONE] = zone
    return Node(name, labels=labels)


# --------------------------------------------------------------------------- random clusters

_affinities = st.sampled_from((
    None,
    (term((LABEL_HOSTNAME, "In", ("n0",))),),
    (term((LABEL_HOSTNAME, "In", ("n1", "n2"))),),
    (term((LABEL_ZONE, "In", ("z1",))),),
    (term((LABEL_ZONE, "NotIn", ("z1",))), term((LABEL_HOSTNAME, "In", ("n3",)))),
    (term(fields=(("metadata.name", "In", ("n0",)),)),),      # the binder's node has no name
    (term(fields=(("metadata.name", "NotIn", ("n0",)),)),),
    (term((LABEL_ZONE, "Exists", ())), ),
    (term(("bad key!", "In", ("x",))),),
    (term(),),
))


@st.composite
def volumes(draw: st.DrawFn, name: str, claim_names: tuple[str, ...]) -> PersistentVolume:
    source = draw(st.sampled_from(("csi", "csi", "local", "awsElasticBlockStore",
                                   "gcePersistentDisk")))
    labels = {"tier": draw(st.sampled_from(("a", "b")))}
    fields: dict = {}
    if source == "awsElasticBlockStore":
        fields["volume_id"] = draw(st.sampled_from(("vol-1", "aws://z1/vol-2", "aws://z1/bad")))
        labels[LABEL_ZONE] = draw(st.sampled_from(("z1", "z2")))
    elif source == "gcePersistentDisk":
        fields["pd_name"] = "d"
        labels[LABEL_ZONE_BETA] = draw(st.sampled_from(("z1", "us-east1-b__us-east1-c",
                                                        "us-east1-b__us-west1-a")))
    ref = None
    if draw(st.integers(0, 99)) < 35:
        ref = ClaimRef("default", draw(st.sampled_from(claim_names)),
                       draw(st.sampled_from(("", "uid-c0", "other-uid"))))
    return PersistentVolume(
        name, labels=labels, capacity=draw(st.sampled_from((1, 2, 5, 10))) * GI,
        access_modes=draw(st.sampled_from((("ReadWriteOnce",), ("ReadWriteMany",),
                                           ("ReadWriteOnce", "ReadOnlyMany")))),
        volume_mode=draw(st.sampled_from(("Filesystem", "Filesystem", "Block"))),
        storage_class=draw(st.sampled_from(CLASS_NAMES[:4])), node_affinity=draw(_affinities),
        claim_ref=ref, phase=draw(st.sampled_from(("Available", "Available", "Bound",
                                                   "Released"))),
        deleting=draw(st.integers(0, 99)) < 5, source=source, **fields)


_selectors = st.sampled_from((None, None, LabelSelector({"tier": "a"}), LabelSelector(),
                              LabelSelector(match_expressions=(
                                  LabelSelectorRequirement("tier", "Gt", ("1",)),))))


@st.composite
def claims(draw: st.DrawFn, name: str, volume_names: tuple[str, ...]) -> PersistentVolumeClaim:
    bound = draw(st.integers(0, 99)) < 35
    return PersistentVolumeClaim(
        name, uid=f"uid-{name}", request=draw(st.sampled_from((1, 2, 5, 20))) * GI,
        access_modes=draw(st.sampled_from((("ReadWriteOnce",), ("ReadWriteMany",)))),
        storage_class=draw(st.sampled_from(CLASS_NAMES)),
        volume_name=draw(st.sampled_from(volume_names + ("pv-gone",))) if bound else "",
        volume_mode=draw(st.sampled_from(("Filesystem", "Filesystem", "Block"))),
        selector=draw(_selectors), bind_completed=bound and draw(st.integers(0, 99)) < 85,
        phase="Bound" if bound else "Pending",
        selected_node=draw(st.sampled_from(("", "", "", "n0", "n1"))) if not bound else "",
        controller_uid=draw(st.sampled_from(("uid-p", None))))


@st.composite
def clusters(draw: st.DrawFn) -> tuple[ClusterState, Pod]:
    count = draw(st.integers(1, 6))
    nodes = [node(f"n{i}", draw(st.sampled_from(ZONES + (None,)))) for i in range(count)]
    claim_names = ("c0", "c1", "c2", "c3")
    volume_names = tuple(f"pv-{i}" for i in range(draw(st.integers(0, 6))))
    pvs = [draw(volumes(name, claim_names)) for name in volume_names]
    pvcs = [draw(claims(name, volume_names)) for name in claim_names]
    pvcs.append(draw(claims("p-eph", volume_names)))
    csi_nodes = [CSINode(n.name, migrated_plugins=("kubernetes.io/aws-ebs",
                                                   "kubernetes.io/gce-pd"))
                 for n in nodes if draw(st.integers(0, 99)) < 40]
    capacities = [CSIStorageCapacity(f"cap-{i}", storage_class="tracked",
                                     node_topology=draw(st.sampled_from((
                                         None, LabelSelector({LABEL_ZONE: "z1"}),
                                         LabelSelector(), LabelSelector({"bad key!": "x"})))),
                                     capacity=draw(st.sampled_from((None, 3 * GI, 30 * GI))),
                                     maximum_volume_size=draw(st.sampled_from((None, 4 * GI))))
                  for i in range(draw(st.integers(0, 3)))]
    storage = StorageObjects(persistent_volumes=pvs, persistent_volume_claims=pvcs,
                             storage_classes=CLASSES, csi_nodes=csi_nodes, csi_drivers=DRIVERS,
                             csi_storage_capacities=capacities)
    wanted = draw(st.lists(st.sampled_from(claim_names + ("missing",)), min_size=0, max_size=3))
    incoming = pod(*wanted, ephemeral=("eph",) if draw(st.integers(0, 99)) < 15 else ())
    return ClusterState.from_records(nodes, storage=storage), incoming


def expected_filter(state: ClusterState, incoming: Pod, nodes: np.ndarray) -> list[Status]:
    claims = pod_volume_claims(incoming, state.storage)
    out = []
    for i in nodes.tolist():
        try:
            _, reasons = find_pod_volumes(incoming, claims, state.nodes[i], state.storage)
        except BinderError as exc:
            out.append(Status(Code.ERROR, (str(exc),)))
            continue
        out.append(unresolvable(*reasons) if reasons else Status())
    return out


def check(state: ClusterState, incoming: Pod, nodes: np.ndarray) -> None:
    plugin = VolumeBinding()
    cycle = Cycle(state, incoming)
    outcome = plugin.pre_filter(cycle)
    has, problem = claim_problem(incoming, state.storage)
    if problem is not None:
        assert outcome == unresolvable(problem)
        return
    if not has:
        assert outcome == Status(Code.SKIP)
        return
    if pod_volume_claims(incoming, state.storage).unbound_immediate:
        assert outcome == unresolvable(REASON_UNBOUND_IMMEDIATE)
        return
    assert outcome is None
    result = plugin.filter(cycle, nodes)
    expected = expected_filter(state, incoming, nodes)
    assert_filter_equal(result, expected, [state.nodes[i] for i in nodes.tolist()])
    for i, want in enumerate(expected):
        if want.code == Code.ERROR:
            assert result.status_at(i) == want


@SETTINGS
@given(clusters())
def test_filter_matches_the_binder_on_every_node(cluster) -> None:
    state, incoming = cluster
    check(state, incoming, np.arange(state.num_nodes, dtype=np.int64))


@SETTINGS
@given(clusters(), st.randoms(use_true_random=False))
def test_filter_matches_the_binder_on_node_subsets(cluster, rng) -> None:
    state, incoming = cluster
    nodes = list(range(state.num_nodes))
    rng.shuffle(nodes)
    check(state, incoming, np.array(nodes[:rng.randint(0, len(nodes))], dtype=np.int64))


@SETTINGS
@given(clusters())
def test_node_static_exactly_when_no_claim_has_volumes_to_match(cluster) -> None:
    """Node-static when every claim is usable and bound, or unbound of a
    WaitForFirstConsumer class none of whose volumes is unclaimed (provisioning decides)."""
    state, incoming = cluster
    storage = state.storage
    claims = [storage.claim("default", v.claim_for(incoming.name)) for v in incoming.volumes]

    def static(claim) -> bool:
        if claim.volume_name and claim.bind_completed:
            return True
        found = storage.storage_class(claim.storage_class) if claim.storage_class else None
        return (not claim.volume_name and found is not None
                and found.volume_binding_mode == "WaitForFirstConsumer"
                and all(pv.claim_ref is not None for pv in storage.persistent_volumes
                        if pv.storage_class == claim.storage_class))

    usable = claim_problem(incoming, storage)[1] is None
    expected = not incoming.volumes or (usable and all(static(c) for c in claims))
    assert node_static_for(VolumeBinding(), incoming, state) == expected
    assert VolumeBinding().judged_by_node_class(incoming) == (not incoming.volumes)


# --------------------------------------------------------------------------- named cases


def run(nodes, pvs=(), pvcs=(), incoming=None, **storage) -> tuple[Status | None, list]:
    state = ClusterState.from_records(nodes, storage=StorageObjects(
        persistent_volumes=pvs, persistent_volume_claims=pvcs,
        storage_classes=storage.pop("classes", CLASSES), **storage))
    cycle = Cycle(state, incoming)
    plugin = VolumeBinding()
    pre = plugin.pre_filter(cycle)
    if pre is not None:
        return pre, []
    result = plugin.filter(cycle, np.arange(state.num_nodes, dtype=np.int64))
    return pre, [() if result.passed[i] else result.status_at(i).reasons
                 for i in range(state.num_nodes)]


def bound_claim(name: str, volume: str, **fields) -> PersistentVolumeClaim:
    return PersistentVolumeClaim(name, volume_name=volume, bind_completed=True, phase="Bound",
                                 **fields)


def test_a_pod_without_claims_skips() -> None:
    assert run([node("n0")], incoming=Pod("p"))[0] == Status(Code.SKIP)


@pytest.mark.parametrize("pvcs, incoming, message", [
    ((), pod("data"), 'persistentvolumeclaim "data" not found'),
    ((), pod(ephemeral=("scratch",)), 'waiting for ephemeral volume controller to create the '
                                      'persistentvolumeclaim "p-scratch"'),
    ((PersistentVolumeClaim("data", volume_name="pv", phase="Lost"),), pod("data"),
     'persistentvolumeclaim "data" bound to non-existent persistentvolume "pv"'),
    ((PersistentVolumeClaim("data", deleting=True),), pod("data"),
     'persistentvolumeclaim "data" is being deleted'),
    ((PersistentVolumeClaim("p-scratch", controller_uid="someone"),), pod(ephemeral=("scratch",)),
     "PVC default/p-scratch was not created for pod default/p (pod is not owner)"),
    ((PersistentVolumeClaim("data", storage_class="immediate"),), pod("data"),
     REASON_UNBOUND_IMMEDIATE),
    ((PersistentVolumeClaim("data", storage_class="gone"),), pod("data"),
     REASON_UNBOUND_IMMEDIATE),
    ((PersistentVolumeClaim("data", storage_class="wffc", volume_name="pv"),), pod("data"),
     REASON_UNBOUND_IMMEDIATE),
])
def test_pre_filter_rejections(pvcs, incoming, message) -> None:
    assert run([node("n0")], pvcs=pvcs, incoming=incoming)[0] == unresolvable(message)


def test_bound_claims_check_their_volumes_node_affinity() -> None:
    pvs = [PersistentVolume("local", node_affinity=(term((LABEL_HOSTNAME, "In", ("n1",))),))]
    pre, reasons = run([node("n0"), node("n1")], pvs, [bound_claim("data", "local")],
                       pod("data"))
    assert pre is None and reasons == [(REASON_NODE_CONFLICT,), ()]
    pre, reasons = run([node("n0")], (), [bound_claim("data", "gone")], pod("data"))
    assert reasons == [(REASON_PV_NOT_EXIST,)]


def test_match_fields_read_an_unnamed_node() -> None:
    """``CheckNodeAffinity`` builds a node of labels only: ``metadata.name In [n0]`` matches
    no node, ``NotIn`` every node."""
    for operator, want in (("In", (REASON_NODE_CONFLICT,)), ("NotIn", ())):
        pvs = [PersistentVolume("pv", node_affinity=(
            term(fields=(("metadata.name", operator, ("n0",)),)),))]
        assert run([node("n0")], pvs, [bound_claim("data", "pv")], pod("data"))[1] == [want]


def test_an_in_tree_volume_is_translated_where_its_plugin_migrated() -> None:
    """On a node whose CSINode migrated aws-ebs, the zone requirement moves to the EBS CSI
    driver's topology key, which the node lacks."""
    pv = PersistentVolume("ebs", source="awsElasticBlockStore", volume_id="vol-1",
                          node_affinity=(term((LABEL_ZONE, "In", ("z1",))),))
    nodes = [node("n0", "z1"), node("n1", "z1"), node("n2", "z2")]
    csi = [CSINode("n1", migrated_plugins=("kubernetes.io/aws-ebs",))]
    assert run(nodes, [pv], [bound_claim("data", "ebs")], pod("data"), csi_nodes=csi)[1] == [
        (), (REASON_NODE_CONFLICT,), (REASON_NODE_CONFLICT,)]
    ebs = Node("n1", labels={"topology.ebs.csi.aws.com/zone": "z1"})
    assert run([ebs], [pv], [bound_claim("data", "ebs")], pod("data"), csi_nodes=csi)[1] == [()]


def test_a_translation_error_is_an_error_on_migrated_nodes_only() -> None:
    pv = PersistentVolume("ebs", source="awsElasticBlockStore", volume_id="aws://z1/bad")
    state = ClusterState.from_records([node("n0"), node("n1")], storage=StorageObjects(
        persistent_volumes=[pv], persistent_volume_claims=[bound_claim("data", "ebs")],
        csi_nodes=[CSINode("n1", migrated_plugins=("kubernetes.io/aws-ebs",))]))
    cycle = Cycle(state, pod("data"))
    plugin = VolumeBinding()
    assert plugin.pre_filter(cycle) is None
    result = plugin.filter(cycle, np.arange(2, dtype=np.int64))
    assert result.passed.tolist() == [True, False]
    assert result.status_at(1) == Status(Code.ERROR, (
        "could not translate pv: failed to translate Kubernetes ID to EBS Volume ID Invalid "
        "format for AWS volume (aws://z1/bad)",))


def wffc_claim(name: str = "data", request: int = GI, **fields) -> PersistentVolumeClaim:
    fields.setdefault("storage_class", "local")
    return PersistentVolumeClaim(name, uid=f"uid-{name}", request=request,
                                 access_modes=("ReadWriteOnce",), **fields)


def local_pv(name: str, host: str, size: int = 1, **fields) -> PersistentVolume:
    fields = {"storage_class": "local", "access_modes": ("ReadWriteOnce",),
              "phase": "Available", **fields}
    return PersistentVolume(name, capacity=size * GI, node_affinity=(
        term((LABEL_HOSTNAME, "In", (host,))),), **fields)


def test_unbound_claims_need_a_matching_volume_on_the_node() -> None:
    nodes = [node("n0"), node("n1"), node("n2")]
    pvs = [local_pv("a", "n0"), local_pv("b", "n1", size=1, phase="Released"),
           local_pv("c", "n2", access_modes=("ReadOnlyMany",))]
    assert run(nodes, pvs, [wffc_claim()], pod("data"))[1] == [
        (), (REASON_BIND_CONFLICT,), (REASON_BIND_CONFLICT,)]


def test_two_claims_of_a_pod_cannot_take_one_volume() -> None:
    nodes = [node("n0"), node("n1")]
    pvs = [local_pv("a", "n0"), local_pv("b", "n1"), local_pv("c", "n1", size=5)]
    pvcs = [wffc_claim("x"), wffc_claim("y")]
    assert run(nodes, pvs, pvcs, pod("x", "y"))[1] == [(REASON_BIND_CONFLICT,), ()]


def test_the_smallest_fitting_volume_is_chosen() -> None:
    state = ClusterState.from_records([node("n0")], storage=StorageObjects(
        persistent_volumes=[local_pv("big", "n0", 10), local_pv("small", "n0", 2),
                            local_pv("tiny", "n0", 1)],
        persistent_volume_claims=[wffc_claim(request=2 * GI)], storage_classes=CLASSES))
    claims = pod_volume_claims(pod("data"), state.storage)
    found, reasons = find_pod_volumes(pod("data"), claims, state.nodes[0], state.storage)
    assert reasons == () and [b.volume.name for b in found.static_bindings] == ["small"]


def test_a_volume_pre_bound_to_the_claim_wins_or_blocks() -> None:
    """A volume whose claimRef names the claim ends the search: it is taken if the node suits
    it (even over a smaller one), otherwise the claim finds no volume on that node, even where
    another volume seen before or after would fit."""
    claim = wffc_claim()
    pre_bound = attrs.evolve(local_pv("pre", "n1", 10),
                             claim_ref=ClaimRef("default", "data", ""))
    pvs = [local_pv("small", "n0"), local_pv("small-n1", "n1"), pre_bound, local_pv("x", "n0")]
    assert run([node("n0"), node("n1")], pvs, [claim], pod("data"))[1] == [
        (REASON_BIND_CONFLICT,), ()]
    state = ClusterState.from_records([node("n1")], storage=StorageObjects(
        persistent_volumes=pvs, persistent_volume_claims=[claim], storage_classes=CLASSES))
    found, _ = find_pod_volumes(pod("data"), pod_volume_claims(pod("data"), state.storage),
                                state.nodes[0], state.storage)
    assert [b.volume.name for b in found.static_bindings] == ["pre"]


def test_a_selected_node_ends_the_search_elsewhere() -> None:
    claim = wffc_claim(storage_class="wffc", selected_node="n1")
    pv = PersistentVolume("gone", node_affinity=(term((LABEL_HOSTNAME, "In", ("n1",))),))
    pvcs = [claim, bound_claim("old", "gone")]
    assert run([node("n0"), node("n1")], [pv], pvcs, pod("old", "data"))[1] == [
        (REASON_NODE_CONFLICT, REASON_BIND_CONFLICT), ()]


@pytest.mark.parametrize("claim_class, want", [
    ("wffc", [(), (), ()]),
    ("zonal", [(), (REASON_BIND_CONFLICT,), (REASON_BIND_CONFLICT,)]),
    ("no-provisioner", [(REASON_BIND_CONFLICT,)] * 3),
    ("tracked", [(), (REASON_NOT_ENOUGH_SPACE,), (REASON_NOT_ENOUGH_SPACE,)]),
])
def test_dynamic_provisioning(claim_class, want) -> None:
    nodes = [node("n0", "z1"), node("n1", "z2"), node("n2")]
    capacities = [CSIStorageCapacity("small", storage_class="tracked",
                                      node_topology=LabelSelector({LABEL_ZONE: "z2"}),
                                      capacity=GI // 2),
                  CSIStorageCapacity("large", storage_class="tracked",
                                     node_topology=LabelSelector({LABEL_ZONE: "z1"}),
                                     capacity=100 * GI, maximum_volume_size=GI)]
    got = run(nodes, (), [wffc_claim(storage_class=claim_class)], pod("data"),
              csi_drivers=DRIVERS, csi_storage_capacities=capacities)[1]
    assert got == want


def test_an_invalid_claim_selector_is_an_error() -> None:
    claim = wffc_claim(selector=LabelSelector({"bad key!": "x"}))
    state = ClusterState.from_records([node("n0")], storage=StorageObjects(
        persistent_volume_claims=[claim], storage_classes=CLASSES))
    cycle = Cycle(state, pod("data"))
    plugin = VolumeBinding()
    plugin.pre_filter(cycle)
    status = plugin.filter(cycle, np.zeros(1, dtype=np.int64)).status_at(0)
    assert status.code == Code.ERROR and status.message.startswith(
        "error creating internal label selector for claim: default/data: ")


def test_declarations() -> None:
    assert filter_kind(VolumeBinding()) is FilterKind.NODE_STATIC
    state = ClusterState.from_records([node("n0")], storage=StorageObjects(
        persistent_volume_claims=[bound_claim("b", "pv"), wffc_claim("u")]))
    assert node_static_for(VolumeBinding(), Pod("p"), state)
    assert node_static_for(VolumeBinding(), pod("b"), state)
    assert not node_static_for(VolumeBinding(), pod("b", "u"), state)
    assert VolumeBinding().pre_score(Cycle(state, pod("b")), np.zeros(1, np.int64)) \
        == Status(Code.SKIP)
