"""Hypothesis strategies for clusters with storage: nodes with zone labels, CSINodes with
attach limits, StorageClasses, PersistentVolumes (CSI and in-tree, zone-labelled), claims
(bound, unbound, ReadWriteOncePod, ephemeral ones owned or not), and pods mounting them or
inline disks, drawn from small pools so that shared volumes, conflicts and limits come often.

:func:`volume_scenarios` gives both views the volume plugins' tests compare: the
:class:`~ksched.state.ClusterState` (with its storage) the plugins read, and per-node
:class:`~ksched.framework.node_info.NodeInfo` records for the references.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import attrs
import numpy as np
import numpy.typing as npt
from hypothesis import strategies as st

from ksched.api import (
    ClaimRef,
    Container,
    CSINode,
    CSINodeDriver,
    Node,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    StorageClass,
    Volume,
)
from ksched.constants import LABEL_REGION, LABEL_REGION_BETA, LABEL_ZONE, LABEL_ZONE_BETA
from ksched.framework.interfaces import Cycle
from ksched.framework.node_info import NodeInfo
from ksched.state import ClusterState
from ksched.storage_listers import StorageObjects

ZONE_KEYS = (LABEL_ZONE, LABEL_ZONE_BETA, LABEL_REGION, LABEL_REGION_BETA)
ZONES = ("us-east1-b", "us-east1-c", "zone-a")
DRIVERS = ("ebs.csi.aws.com", "pd.csi.storage.gke.io", "csi.example.com", "disk.csi.azure.com",
           "pxd.portworx.com", "cinder.csi.openstack.org")
PORTWORX = "kubernetes.io/portworx-volume"
CLASSES = (
    StorageClass("wffc", provisioner="csi.example.com",
                 volume_binding_mode="WaitForFirstConsumer"),
    StorageClass("immediate", provisioner="ebs.csi.aws.com"),
    StorageClass("gce-in-tree", provisioner="kubernetes.io/gce-pd",
                 volume_binding_mode="WaitForFirstConsumer"),
    StorageClass("portworx", provisioner=PORTWORX, volume_binding_mode="WaitForFirstConsumer"),
    StorageClass("local", provisioner="kubernetes.io/no-provisioner",
                 volume_binding_mode="WaitForFirstConsumer"),
)
CLASS_NAMES = ("wffc", "immediate", "gce-in-tree", "portworx", "local", "", "missing-class")
ACCESS_MODES = (("ReadWriteOnce",), ("ReadWriteOncePod",), ("ReadOnlyMany",),
                ("ReadWriteMany", "ReadOnlyMany"))
EBS_IDS = ("vol-1", "vol-2", "aws://us-east-1a/vol-1", "aws:///vol-3")
BAD_EBS_ID = "aws://us-east-1a/bad"
AZURE_KINDS = ("", "Managed", "Managed", "Shared")
DISK_NAMES = ("d1", "d2", "d3")
MONITORS = ("m1", "m2", "m3")


def _chance(draw: st.DrawFn, percent: int) -> bool:
    return draw(st.integers(0, 99)) < percent


#: EBS volume IDs, now and then one that does not translate.
ebs_ids = st.sampled_from(EBS_IDS * 5 + (BAD_EBS_ID,))


@st.composite
def zone_labels(draw: st.DrawFn) -> dict[str, str]:
    """Zone and region labels, legacy or GA, with single, multi-zone (``a__b``) or broken
    (``a__``) values."""
    labels = {}
    for key in ZONE_KEYS:
        if _chance(draw, 35):
            values = draw(st.lists(st.sampled_from(ZONES), min_size=1, max_size=2))
            labels[key] = "__".join(values) + ("__" if _chance(draw, 5) else "")
    return labels


@st.composite
def csi_nodes(draw: st.DrawFn, name: str) -> CSINode:
    drivers = draw(st.lists(st.sampled_from(DRIVERS), max_size=3, unique=True))
    return CSINode(name, tuple(
        CSINodeDriver(d, allocatable=None if _chance(draw, 25) else draw(st.integers(0, 3)))
        for d in drivers), migrated_plugins=(PORTWORX,) if _chance(draw, 30) else ())


@st.composite
def persistent_volumes(draw: st.DrawFn, name: str) -> PersistentVolume:
    source = draw(st.sampled_from(("csi", "csi", "gcePersistentDisk", "awsElasticBlockStore",
                                   "azureDisk", "cinder", "portworxVolume", "local", "nfs")))
    fields: dict = {"source": source, "labels": draw(zone_labels())}
    if source == "csi":
        fields.update(driver=draw(st.sampled_from(DRIVERS[:3])),
                      volume_handle=draw(st.sampled_from(("h1", "h2", "h3", "h4", "h5"))))
    elif source == "gcePersistentDisk":
        fields["pd_name"] = draw(st.sampled_from(DISK_NAMES))
    elif source == "awsElasticBlockStore":
        fields["volume_id"] = draw(ebs_ids)
    elif source == "azureDisk":
        fields.update(disk_uri=draw(st.sampled_from(DISK_NAMES)),
                      disk_kind=draw(st.sampled_from(AZURE_KINDS)))
    elif source in ("cinder", "portworxVolume"):
        fields["volume_id"] = draw(st.sampled_from(DISK_NAMES))
    return PersistentVolume(name, capacity=1, access_modes=("ReadWriteOnce",), **fields)


VOLUME_NAMES = ("pv-0", "pv-1", "pv-2", "pv-3", "pv-4", "pv-missing")


@st.composite
def claims(draw: st.DrawFn, name: str, namespace: str = "default",
           owner: str | None = None) -> PersistentVolumeClaim:
    bound = _chance(draw, 50)
    return PersistentVolumeClaim(
        name, namespace, access_modes=draw(st.sampled_from(ACCESS_MODES)), request=1,
        storage_class=draw(st.sampled_from(CLASS_NAMES)),
        volume_name=draw(st.sampled_from(VOLUME_NAMES)) if bound else "",
        controller_uid=owner)


CLAIM_NAMES = ("c0", "c1", "c2", "c3", "c4", "missing")


@st.composite
def pod_volumes(draw: st.DrawFn) -> tuple[Volume, ...]:
    """A pod's volumes: claims, an ephemeral volume, inline disks, a config map."""
    kinds = draw(st.lists(st.sampled_from((
        "persistentVolumeClaim", "persistentVolumeClaim", "persistentVolumeClaim",
        "persistentVolumeClaim", "ephemeral", "gcePersistentDisk",
        "awsElasticBlockStore", "rbd", "iscsi", "azureDisk", "cinder", "portworxVolume",
        "configMap")), max_size=3))
    volumes = []
    for i, kind in enumerate(kinds):
        read_only = _chance(draw, 40)
        fields: dict = {}
        if kind == "persistentVolumeClaim":
            fields["claim_name"] = ("missing" if _chance(draw, 4)
                                    else draw(st.sampled_from(CLAIM_NAMES[:-1])))
        elif kind == "gcePersistentDisk":
            fields["pd_name"] = draw(st.sampled_from(DISK_NAMES))
        elif kind == "awsElasticBlockStore":
            fields["volume_id"] = draw(ebs_ids)
        elif kind in ("cinder", "portworxVolume"):
            fields["volume_id"] = draw(st.sampled_from(DISK_NAMES))
        elif kind == "azureDisk":
            fields.update(disk_uri=draw(st.sampled_from(DISK_NAMES)),
                          disk_kind=draw(st.sampled_from(AZURE_KINDS)))
        elif kind == "rbd":
            fields.update(monitors=tuple(draw(st.lists(st.sampled_from(MONITORS), min_size=1,
                                                       max_size=2))),
                          rbd_pool=draw(st.sampled_from(("rbd", "fast"))),
                          rbd_image=draw(st.sampled_from(DISK_NAMES)))
        elif kind == "iscsi":
            fields.update(iqn=draw(st.sampled_from(("iqn.2001-04.com.a:x",
                                                    "iqn.2001-04.com.a:y"))),
                          target_portal="10.0.0.1:3260")
        volumes.append(Volume(f"v{i}", kind, read_only=read_only, **fields))
    return tuple(volumes)


def pod(name: str, volumes: Sequence[Volume], node: str = "", namespace: str = "default",
        uid: str = "") -> Pod:
    return Pod(name, namespace, uid=uid or f"uid-{name}", node_name=node,
               containers=[Container("c")], volumes=tuple(volumes))


@attrs.frozen(eq=False)
class VolumeScenario:
    """A cluster with storage, the incoming pod, and both views of the cluster."""

    nodes: tuple[Node, ...]
    bound: tuple[Pod, ...]
    pod: Pod
    storage: StorageObjects
    state: ClusterState
    infos: tuple[NodeInfo, ...]

    @property
    def indices(self) -> npt.NDArray[np.int64]:
        return np.arange(len(self.nodes), dtype=np.int64)

    def cycle(self) -> Cycle:
        return Cycle(self.state, self.pod)


def build_volume_scenario(nodes: Sequence[Node], bound: Sequence[Pod], incoming: Pod,
                          storage: StorageObjects) -> VolumeScenario:
    """The state (:meth:`ClusterState.from_records` with the storage) and one NodeInfo per
    node, built from the records independently."""
    state = ClusterState.from_records(nodes, bound, storage=storage)
    infos = tuple(NodeInfo(n, tuple(p for p in bound if p.node_name == n.name)) for n in nodes)
    return VolumeScenario(tuple(nodes), tuple(bound), incoming, storage, state, infos)


@st.composite
def volume_scenarios(draw: st.DrawFn, max_nodes: int = 6, max_pods: int = 10
                     ) -> VolumeScenario:
    """1-``max_nodes`` nodes ``n0``, ``n1``, ... (zone-labelled or not, most with a
    CSINode), PersistentVolumes ``pv-0..4``, claims ``c0..4`` (a few in another namespace, and
    the incoming pod's ephemeral claim, owned by it or not), up to ``max_pods`` bound pods
    with volumes, and an incoming pod (``incoming``, in ``default``) with volumes."""
    count = draw(st.integers(1, max_nodes))
    names = [f"n{i}" for i in range(count)]
    nodes = [Node(name, labels={**draw(zone_labels()), "kubernetes.io/hostname": name})
             for name in names]
    csi = [draw(csi_nodes(name)) for name in names if _chance(draw, 80)]
    volumes = [draw(persistent_volumes(f"pv-{i}")) for i in range(5)]
    claim_list = [draw(claims(name)) for name in CLAIM_NAMES[:-1]]
    claim_list += [draw(claims(name, "other")) for name in ("c0", "c1") if _chance(draw, 50)]
    owner = st.sampled_from(("uid-incoming",) * 6 + ("uid-p0", None))
    claim_list += [draw(claims(f"incoming-v{i}", owner=draw(owner))) for i in range(3)
                   if _chance(draw, 80)]
    bound = []
    for i in range(draw(st.integers(0, max_pods))):
        namespace = "other" if _chance(draw, 15) else "default"
        bound.append(pod(f"p{i}", draw(pod_volumes()), draw(st.sampled_from(names)),
                         namespace))
        if _chance(draw, 20):  # the bound pod's own ephemeral claims
            claim_list += [draw(claims(f"p{i}-v{j}", namespace, draw(st.sampled_from(
                (f"uid-p{i}",) * 4 + (None,))))) for j in range(3)]
    claim_list = list({(c.namespace, c.name): c for c in claim_list}.values())
    storage = StorageObjects(persistent_volumes=volumes, persistent_volume_claims=claim_list,
                             storage_classes=CLASSES, csi_nodes=csi)
    return build_volume_scenario(nodes, bound, pod("incoming", draw(pod_volumes())), storage)


def with_claim_ref(pv: PersistentVolume, claim: PersistentVolumeClaim) -> PersistentVolume:
    """The volume bound to the claim (as the binder's assume cache holds it)."""
    return attrs.evolve(pv, claim_ref=ClaimRef(claim.namespace, claim.name, claim.uid),
                        phase="Bound")


def node_subset(nodes: Sequence[int], rng: random.Random) -> np.ndarray:
    """A shuffled prefix of ``nodes`` (possibly empty): the node lists a plugin is also judged
    on, as the walk hands them over."""
    order = [int(i) for i in nodes]
    rng.shuffle(order)
    return np.array(order[:rng.randint(0, len(order))], dtype=np.int64)
