"""Bad storage objects and pod volumes, each refused with an ``InvalidObjectError`` naming the
object and the field, in the API server's words where it has some
(``ValidatePersistentVolume``, ``ValidatePersistentVolumeClaim``, ``ValidateVolumes``,
``ValidateStorageClass``, ``ValidateCSINode``, ``ValidateCSIDriver``,
``ValidateCSIStorageCapacity``), through every way in: ``from_manifest``, ``read_objects`` and
``load_cluster``; plus fuzzing of each kind with random values in random fields."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ksched
from ksched import InvalidObjectError
from ksched.api import ClaimRef, PersistentVolume, PersistentVolumeClaim
from ksched.errors import KschedError
from ksched.storage_listers import StorageObjects
from tests.refusals import refused
from tests.test_storage_objects import CAPACITY, CSI_DRIVER, CSI_NODE, PV, PVC, SC

DNS_SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                 "characters, '-' or '.', and must start and end with an alphanumeric character")
LABEL_VALUE = "a valid label must be an empty string or consist of alphanumeric characters"
LABEL_NAME = "name part must consist of alphanumeric characters"
ACCESS = '"ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"'
_DELETE = object()
TEMPLATE = {"spec": {"accessModes": ["ReadWriteOnce"],
                     "resources": {"requests": {"storage": "1Gi"}}}}
ISCSI = {"targetPortal": "10.0.0.1", "iqn": "iqn.2001-04.com.example:disk"}


def changed(base: dict, path: str, value: Any) -> dict:
    """``base`` with the field at dotted ``path`` (list indices as numbers) set or deleted."""
    obj = copy.deepcopy(base)
    *parents, last = path.split(".")
    here: Any = obj
    for key in parents:
        here = here[int(key)] if isinstance(here, list) else here.setdefault(key, {})
    if value is _DELETE:
        del here[last]
    elif isinstance(here, list):
        here[int(last)] = value
    else:
        here[last] = value
    return obj


def volumes(*items: Any, name: str = "web-0") -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "db"},
            "spec": {"containers": [{"name": "c"}], "volumes": list(items)}}


PV_NAME, PVC_NAME = "persistentvolume pv-a", "persistentvolumeclaim db/data-0"
TERM = "spec.nodeAffinity.required.nodeSelectorTerms"
CASES: dict[str, tuple[dict, str]] = {
    # ------------------------------------------------------------------ PersistentVolume
    "pv without access modes": (changed(PV, "spec.accessModes", []),
                                f"{PV_NAME}: spec.accessModes: Required value"),
    "pv unknown access mode": (
        changed(PV, "spec.accessModes", ["ReadWriteOnce", "Sometimes"]),
        f'{PV_NAME}: spec.accessModes: Unsupported value: "Sometimes": supported values: '
        f"{ACCESS}"),
    "pv ReadWriteOncePod with another mode": (
        changed(PV, "spec.accessModes", ["ReadWriteOncePod", "ReadOnlyMany"]),
        f"{PV_NAME}: spec.accessModes: Forbidden: may not use ReadWriteOncePod with other "
        "access modes"),
    "pv without capacity": (changed(PV, "spec.capacity", {}),
                            f"{PV_NAME}: spec.capacity: Required value"),
    "pv capacity beside storage": (
        changed(PV, "spec.capacity", {"storage": "1Gi", "cpu": "1"}),
        f'{PV_NAME}: spec.capacity: Unsupported value: {{"cpu":"1","storage":"1Gi"}}: '
        'supported values: "storage"'),
    "pv zero capacity": (changed(PV, "spec.capacity.storage", "0"),
                         f'{PV_NAME}: spec.capacity[storage]: Invalid value: "0": must be '
                         "greater than zero"),
    "pv negative capacity": (changed(PV, "spec.capacity.storage", "-1Gi"),
                             f"{PV_NAME}: spec.capacity[storage]: Invalid value: -1073741824: "
                             "must be a valid resource quantity"),
    "pv capacity no quantity": (changed(PV, "spec.capacity.storage", "1.5.0"),
                                f'{PV_NAME}: spec.capacity.storage: invalid quantity "1.5.0"'),
    "pv capacity a boolean": (changed(PV, "spec.capacity.storage", True),
                              f"{PV_NAME}: spec.capacity.storage: expected a quantity, got a "
                              "boolean"),
    "pv unknown reclaim policy": (
        changed(PV, "spec.persistentVolumeReclaimPolicy", "Keep"),
        f'{PV_NAME}: spec.persistentVolumeReclaimPolicy: Unsupported value: "Keep": supported '
        'values: "Delete", "Recycle", "Retain"'),
    "pv node affinity without required": (
        changed(PV, "spec.nodeAffinity", {}),
        f"{PV_NAME}: spec.nodeAffinity.required: Required value: must specify required node "
        "constraints"),
    "pv node affinity without terms": (
        changed(PV, "spec.nodeAffinity.required", {"nodeSelectorTerms": []}),
        f"{PV_NAME}: {TERM}: Required value: must have at least one node selector term"),
    "pv node affinity bad operator": (
        changed(PV, "spec.nodeAffinity.required.nodeSelectorTerms.0.matchExpressions.0."
                "operator", "Near"),
        f'{PV_NAME}: {TERM}[0].matchExpressions[0].operator: Invalid value: "Near": not a '
        "valid selector operator"),
    "pv node affinity bad value": (
        changed(PV, "spec.nodeAffinity.required.nodeSelectorTerms.0.matchExpressions.0.values",
                ["bad value!"]),
        f'{PV_NAME}: {TERM}[0].matchExpressions[0].values[0]: Invalid value: "bad value!": '
        f"{LABEL_VALUE}"),
    "pv without a source": (changed(PV, "spec.csi", _DELETE),
                            f"{PV_NAME}: spec: Required value: must specify a volume type"),
    "pv with two sources": (changed(PV, "spec.hostPath", {"path": "/data"}),
                            f"{PV_NAME}: spec.csi: Forbidden: may not specify more than 1 volume "
                            "type"),
    "pv local without node affinity": (
        changed(changed(changed(PV, "spec.nodeAffinity", _DELETE), "spec.csi", _DELETE),
                "spec.local", {"path": "/mnt/ssd"}),
        f"{PV_NAME}: spec.nodeAffinity: Required value: Local volume requires node affinity"),
    "pv local path with ..": (
        changed(changed(PV, "spec.csi", _DELETE), "spec.local", {"path": "/mnt/../etc"}),
        f"{PV_NAME}: spec.local.path: Invalid value: \"/mnt/../etc\": must not contain '..'"),
    "pv csi without driver": (changed(PV, "spec.csi.driver", ""),
                              f"{PV_NAME}: spec.csi.driver: Required value"),
    "pv csi bad driver": (changed(PV, "spec.csi.driver", "Bad_Driver"),
                          f'{PV_NAME}: spec.csi.driver: Invalid value: "Bad_Driver": '
                          f"{DNS_SUBDOMAIN}"),
    "pv csi without handle": (changed(PV, "spec.csi.volumeHandle", ""),
                              f"{PV_NAME}: spec.csi.volumeHandle: Required value"),
    "pv gce without disk": (
        changed(changed(PV, "spec.csi", _DELETE), "spec.gcePersistentDisk", {"partition": 1}),
        f"{PV_NAME}: spec.persistentDisk.pdName: Required value"),
    "pv recycled hostPath root": (
        changed(changed(changed(PV, "spec.csi", _DELETE), "spec.hostPath", {"path": "//"}),
                "spec.persistentVolumeReclaimPolicy", "Recycle"),
        f"{PV_NAME}: spec.persistentVolumeReclaimPolicy: Forbidden: may not be 'recycle' for a "
        "hostPath mount of '/'"),
    "pv bad class": (changed(PV, "spec.storageClassName", "Fast_Class"),
                     f'{PV_NAME}: spec.storageClassName: Invalid value: "Fast_Class": '
                     f"{DNS_SUBDOMAIN}"),
    "pv unknown volume mode": (changed(PV, "spec.volumeMode", "Raw"),
                               f'{PV_NAME}: spec.volumeMode: Unsupported value: "Raw": supported '
                               'values: "Block", "Filesystem"'),
    "pv empty attributes class": (changed(PV, "spec.volumeAttributesClassName", ""),
                                  f"{PV_NAME}: spec.volumeAttributesClassName: Required value: "
                                  "an empty string is disallowed"),
    "pv unknown phase": (changed(PV, "status.phase", "Lost"),
                         f'{PV_NAME}: status.phase: Unsupported value: "Lost": supported values: '
                         '"Available", "Bound", "Failed", "Pending", "Released"'),
    "pv bad name": (changed(PV, "metadata.name", "PV_A"),
                    f'persistentvolume PV_A: metadata.name: Invalid value: "PV_A": '
                    f"{DNS_SUBDOMAIN}"),
    "pv bad label": (changed(PV, "metadata.labels", {"zone": "bad value!"}),
                     f'{PV_NAME}: metadata.labels: Invalid value: "bad value!": {LABEL_VALUE}'),
    "pv bad annotation key": (changed(PV, "metadata.annotations", {"bad key!": "x"}),
                              f'{PV_NAME}: metadata.annotations: Invalid value: "bad key!": '
                              f"{LABEL_NAME}"),
    "pv claimRef name a number": (changed(PV, "spec.claimRef.name", 5),
                                  f"{PV_NAME}: spec.claimRef.name: expected a string, got an "
                                  "integer"),
    "pv spec a list": (changed(PV, "spec", []),
                       f"{PV_NAME}: spec: expected an object, got a list"),
    # ------------------------------------------------------------------ PersistentVolumeClaim
    "pvc without access modes": (changed(PVC, "spec.accessModes", []),
                                 f"{PVC_NAME}: spec.accessModes: Required value: at least 1 "
                                 "access mode is required"),
    "pvc unknown access mode": (changed(PVC, "spec.accessModes", ["ReadWriteAlways"]),
                                f'{PVC_NAME}: spec.accessModes: Unsupported value: '
                                f'"ReadWriteAlways": supported values: {ACCESS}'),
    "pvc without storage request": (changed(PVC, "spec.resources.requests", {}),
                                    f"{PVC_NAME}: spec.resources[storage]: Required value"),
    "pvc zero storage request": (changed(PVC, "spec.resources.requests.storage", "0"),
                                 f'{PVC_NAME}: spec.resources[storage]: Invalid value: "0": '
                                 "must be greater than zero"),
    "pvc storage no quantity": (changed(PVC, "spec.resources.requests.storage", "lots"),
                                f'{PVC_NAME}: spec.resources.requests.storage: invalid quantity '
                                '"lots"'),
    "pvc bad class": (changed(PVC, "spec.storageClassName", "Gp3!"),
                      f'{PVC_NAME}: spec.storageClassName: Invalid value: "Gp3!": '
                      f"{DNS_SUBDOMAIN}"),
    "pvc lower-case volume mode": (changed(PVC, "spec.volumeMode", "block"),
                                   f'{PVC_NAME}: spec.volumeMode: Unsupported value: "block": '
                                   'supported values: "Block", "Filesystem"'),
    "pvc selector In without values": (
        changed(PVC, "spec.selector", {"matchExpressions": [{"key": "tier",
                                                             "operator": "In"}]}),
        f"{PVC_NAME}: spec.selector.matchExpressions[0].values: Required value: must be "
        "specified when `operator` is 'In' or 'NotIn'"),
    "pvc selector bad label": (changed(PVC, "spec.selector", {"matchLabels": {"tier": "a b"}}),
                               f'{PVC_NAME}: spec.selector.matchLabels: Invalid value: "a b": '
                               f"{LABEL_VALUE}"),
    "pvc unknown phase": (changed(PVC, "status.phase", "Released"),
                          f'{PVC_NAME}: status.phase: Unsupported value: "Released": supported '
                          'values: "Bound", "Lost", "Pending"'),
    "pvc bad namespace": (changed(PVC, "metadata.namespace", "Bad_NS"),
                          'persistentvolumeclaim Bad_NS/data-0: metadata.namespace: Invalid '
                          'value: "Bad_NS": a lowercase RFC 1123 label must consist of lower '
                          "case alphanumeric characters or '-'"),
    "pvc owner controller a string": (
        changed(PVC, "metadata.ownerReferences", [{"controller": "yes"}]),
        f"{PVC_NAME}: metadata.ownerReferences[0].controller: expected a boolean, got a "
        "string"),
    # ------------------------------------------------------------------ StorageClass
    "sc without provisioner": (changed(SC, "provisioner", _DELETE),
                               "storageclass gp3: provisioner: Required value"),
    "sc provisioner no qualified name": (
        changed(SC, "provisioner", "Bad Provisioner"),
        f'storageclass gp3: provisioner: Invalid value: "bad provisioner": {LABEL_NAME}'),
    "sc unknown binding mode": (
        changed(SC, "volumeBindingMode", "Later"),
        'storageclass gp3: volumeBindingMode: Unsupported value: "Later": supported values: '
        '"Immediate", "WaitForFirstConsumer"'),
    "sc empty binding mode": (changed(SC, "volumeBindingMode", ""),
                              'storageclass gp3: volumeBindingMode: Unsupported value: "": '
                              'supported values: "Immediate", "WaitForFirstConsumer"'),
    "sc recycling": (changed(SC, "reclaimPolicy", "Recycle"),
                     'storageclass gp3: reclaimPolicy: Unsupported value: "Recycle": supported '
                     'values: "Delete", "Retain"'),
    "sc empty parameter key": (changed(SC, "parameters", {"": "x"}),
                               'storageclass gp3: parameters: Invalid value: "": field can not '
                               "be empty."),
    "sc too many parameters": (changed(SC, "parameters", {f"k{i}": "v" for i in range(513)}),
                               "storageclass gp3: parameters: Too long: may not be more than "
                               "512 bytes"),
    "sc topology without values": (
        changed(SC, "allowedTopologies", [{"matchLabelExpressions": [{"key": "zone"}]}]),
        "storageclass gp3: allowedTopologies[0].matchLabelExpressions[0].values: Required "
        "value"),
    "sc topology value twice": (
        changed(SC, "allowedTopologies.0.matchLabelExpressions.0.values", ["z1", "z1"]),
        'storageclass gp3: allowedTopologies[0].matchLabelExpressions[0].values[1]: Duplicate '
        'value: "z1"'),
    "sc topology key twice": (
        changed(SC, "allowedTopologies", [{"matchLabelExpressions": [
            {"key": "zone", "values": ["a"]}, {"key": "zone", "values": ["b"]}]}]),
        'storageclass gp3: allowedTopologies[0].matchLabelExpressions[1].key: Duplicate value: '
        '"zone"'),
    "sc topology term twice": (
        changed(SC, "allowedTopologies", [
            {"matchLabelExpressions": [{"key": "zone", "values": ["a", "b"]}]},
            {"matchLabelExpressions": [{"key": "zone", "values": ["b", "a"]}]}]),
        'storageclass gp3: allowedTopologies[1].matchLabelExpressions: Duplicate value: ""'),
    "sc topology bad key": (
        changed(SC, "allowedTopologies.0.matchLabelExpressions.0.key", "bad key!"),
        'storageclass gp3: allowedTopologies[0].matchLabelExpressions[0].key: Invalid value: '
        f'"bad key!": {LABEL_NAME}'),
    # ------------------------------------------------------------------ CSINode
    "csinode driver without name": (changed(CSI_NODE, "spec.drivers.0.name", ""),
                                    "csinode n1: spec.drivers[0].name: Required value"),
    "csinode driver name too long": (changed(CSI_NODE, "spec.drivers.0.name", "x" * 64),
                                     "csinode n1: spec.drivers[0].name: Too long: may not be "
                                     "more than 63 bytes"),
    "csinode driver without node ID": (changed(CSI_NODE, "spec.drivers.0.nodeID", ""),
                                       "csinode n1: spec.drivers[0].nodeID: Required value"),
    "csinode node ID too long": (changed(CSI_NODE, "spec.drivers.0.nodeID", "i" * 257),
                                 "must be 256 characters or less"),
    "csinode negative attach limit": (
        changed(CSI_NODE, "spec.drivers.0.allocatable.count", -1),
        "csinode n1: spec.drivers[0].allocatable.count: Invalid value: -1: must be greater than "
        "or equal to 0"),
    "csinode attach limit a string": (
        changed(CSI_NODE, "spec.drivers.0.allocatable.count", "25"),
        "csinode n1: spec.drivers[0].allocatable.count: expected an integer, got a string"),
    "csinode driver twice": (changed(CSI_NODE, "spec.drivers.1.name", "ebs.csi.aws.com"),
                             'csinode n1: spec.drivers[1].name: Duplicate value: '
                             '"ebs.csi.aws.com"'),
    "csinode topology key twice": (changed(CSI_NODE, "spec.drivers.0.topologyKeys",
                                           ["zone", "zone"]),
                                   'csinode n1: spec.drivers[0]: Duplicate value: "zone"'),
    "csinode empty topology key": (changed(CSI_NODE, "spec.drivers.0.topologyKeys", [""]),
                                   "csinode n1: spec.drivers[0]: Required value"),
    "csinode bad name": (changed(CSI_NODE, "metadata.name", "N1"),
                         f'csinode N1: metadata.name: Invalid value: "N1": {DNS_SUBDOMAIN}'),
    # ------------------------------------------------------------------ CSIDriver
    "csidriver attachRequired a string": (
        changed(CSI_DRIVER, "spec.attachRequired", "true"),
        "csidriver ebs.csi.aws.com: spec.attachRequired: expected a boolean, got a string"),
    "csidriver unknown fsGroupPolicy": (
        changed(CSI_DRIVER, "spec.fsGroupPolicy", "Always"),
        'csidriver ebs.csi.aws.com: spec.fsGroupPolicy: Unsupported value: "Always": supported '
        'values: "File", "None", "ReadWriteOnceWithFSType"'),
    "csidriver unknown lifecycle mode": (
        changed(CSI_DRIVER, "spec.volumeLifecycleModes", ["Ephemeral", "Forever"]),
        'csidriver ebs.csi.aws.com: spec.volumeLifecycleModes: Unsupported value: "Forever": '
        'supported values: "Persistent", "Ephemeral"'),
    "csidriver short update period": (
        changed(CSI_DRIVER, "spec.nodeAllocatableUpdatePeriodSeconds", 5),
        "csidriver ebs.csi.aws.com: spec.nodeAllocatableUpdatePeriodSeconds: Invalid value: 5: "
        "must be greater than or equal to 10 seconds"),
    "csidriver audience twice": (
        changed(CSI_DRIVER, "spec.tokenRequests", [{"audience": "a"}, {"audience": "a"}]),
        'csidriver ebs.csi.aws.com: spec.tokenRequests[1].audience: Duplicate value: "a"'),
    # ------------------------------------------------------------------ CSIStorageCapacity
    "capacity without class": (changed(CAPACITY, "storageClassName", ""),
                               'csistoragecapacity kube-system/cap-z1: storageClassName: Invalid '
                               f'value: "": {DNS_SUBDOMAIN}'),
    "capacity negative": (changed(CAPACITY, "capacity", "-1"),
                          'csistoragecapacity kube-system/cap-z1: capacity: Invalid value: "-1": '
                          "must be greater than or equal to 0"),
    "capacity topology Exists with values": (
        changed(CAPACITY, "nodeTopology", {"matchExpressions": [
            {"key": "zone", "operator": "Exists", "values": ["a"]}]}),
        "csistoragecapacity kube-system/cap-z1: nodeTopology.matchExpressions[0].values: "
        "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"),
    # ------------------------------------------------------------------ a pod's volumes
    "volume without a source": (volumes({"name": "data"}),
                                "pod db/web-0: spec.volumes[0]: Required value: must specify a "
                                "volume type"),
    "volume with two sources": (
        volumes({"name": "data", "persistentVolumeClaim": {"claimName": "c"}, "emptyDir": {}}),
        "pod db/web-0: spec.volumes[0].persistentVolumeClaim: Forbidden: may not specify more "
        "than 1 volume type"),
    "volume without a name": (volumes({"emptyDir": {}}),
                              "pod db/web-0: spec.volumes[0].name: Required value"),
    "volume name no DNS label": (volumes({"name": "Data", "emptyDir": {}}),
                                 'pod db/web-0: spec.volumes[0].name: Invalid value: "Data": a '
                                 "lowercase RFC 1123 label must consist of lower case"),
    "volume name twice": (volumes({"name": "a", "emptyDir": {}}, {"name": "a", "projected": {}}),
                          'pod db/web-0: spec.volumes[1].name: Duplicate value: "a"'),
    "claim without a name": (volumes({"name": "data", "persistentVolumeClaim": {}}),
                             "pod db/web-0: spec.volumes[0].persistentVolumeClaim.claimName: "
                             "Required value"),
    "claim a string": (volumes({"name": "data", "persistentVolumeClaim": "c"}),
                       "pod db/web-0: spec.volumes[0].persistentVolumeClaim: expected an object, "
                       "got a string"),
    "claim readOnly a string": (
        volumes({"name": "d", "persistentVolumeClaim": {"claimName": "c", "readOnly": "yes"}}),
        "pod db/web-0: spec.volumes[0].persistentVolumeClaim.readOnly: expected a boolean, got "
        "a string"),
    "gce disk without a name": (volumes({"name": "pd", "gcePersistentDisk": {}}),
                                "pod db/web-0: spec.volumes[0].persistentDisk.pdName: Required "
                                "value"),
    "gce partition out of range": (
        volumes({"name": "pd", "gcePersistentDisk": {"pdName": "d", "partition": 300}}),
        "pod db/web-0: spec.volumes[0].persistentDisk.partition: Invalid value: 300: must be "
        "between 1 and 255, inclusive"),
    "ebs without a volume ID": (volumes({"name": "ebs", "awsElasticBlockStore": {}}),
                                "pod db/web-0: spec.volumes[0].awsElasticBlockStore.volumeID: "
                                "Required value"),
    "rbd without monitors": (volumes({"name": "ceph", "rbd": {"image": "i"}}),
                             "pod db/web-0: spec.volumes[0].rbd.monitors: Required value"),
    "rbd without an image": (volumes({"name": "ceph", "rbd": {"monitors": ["m"]}}),
                             "pod db/web-0: spec.volumes[0].rbd.image: Required value"),
    "iscsi without a portal": (volumes({"name": "lun", "iscsi": {"iqn": ISCSI["iqn"]}}),
                               "pod db/web-0: spec.volumes[0].iscsi.targetPortal: Required "
                               "value"),
    "iscsi iqn of no format": (
        volumes({"name": "lun", "iscsi": {**ISCSI, "iqn": "foo"}}),
        'pod db/web-0: spec.volumes[0].iscsi.iqn: Invalid value: "foo": must be valid format '
        "starting with iqn, eui, or naa"),
    "iscsi bad iqn": (volumes({"name": "lun", "iscsi": {**ISCSI, "iqn": "iqn.bad"}}),
                      'pod db/web-0: spec.volumes[0].iscsi.iqn: Invalid value: "iqn.bad": must '
                      "be valid format"),
    "iscsi lun out of range": (volumes({"name": "lun", "iscsi": {**ISCSI, "lun": 256}}),
                               "pod db/web-0: spec.volumes[0].iscsi.lun: Invalid value: 256: "
                               "must be between 0 and 255, inclusive"),
    "iscsi CHAP without a secret": (
        volumes({"name": "lun", "iscsi": {**ISCSI, "chapAuthSession": True}}),
        "pod db/web-0: spec.volumes[0].iscsi.secretRef: Required value"),
    "iscsi initiator with a long name": (
        volumes({"name": "v" * 55, "iscsi": {**ISCSI, "initiatorName": "iqn.2001-04.com.x:y",
                                             "targetPortal": "10.0.0.1:3260"}}),
        "pod db/web-0: spec.volumes[0].name: Invalid value: \"" + "v" * 55 + "\": Total length "
        "of <volume name>:<iscsi.targetPortal> must be under 64 characters if "
        "iscsi.initiatorName is specified."),
    "inline csi without a driver": (volumes({"name": "inline", "csi": {}}),
                                    "pod db/web-0: spec.volumes[0].csi.driver: Required value"),
    "inline csi bad driver": (volumes({"name": "inline", "csi": {"driver": "Bad_Driver"}}),
                              'pod db/web-0: spec.volumes[0].csi.driver: Invalid value: '
                              f'"Bad_Driver": {DNS_SUBDOMAIN}'),
    "azure disk without a URI": (volumes({"name": "az", "azureDisk": {"diskName": "d"}}),
                                 "pod db/web-0: spec.volumes[0].azureDisk.diskURI: Required "
                                 "value"),
    "ephemeral without a template": (volumes({"name": "cache", "ephemeral": {}}),
                                     "pod db/web-0: spec.volumes[0].ephemeral.volumeClaimTemplate:"
                                     " Required value"),
    "ephemeral template without access modes": (
        volumes({"name": "cache", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}),
        "pod db/web-0: spec.volumes[0].ephemeral.volumeClaimTemplate.spec.accessModes: Required "
        "value: at least 1 access mode is required"),
    "ephemeral template naming its claim": (
        volumes({"name": "cache", "ephemeral": {"volumeClaimTemplate": {
            "metadata": {"name": "x"}, **TEMPLATE}}}),
        "pod db/web-0: spec.volumes[0].ephemeral.volumeClaimTemplate.metadata.name: Forbidden: "
        "cannot be set"),
    "ephemeral claim name too long": (
        volumes({"name": "cache", "ephemeral": {"volumeClaimTemplate": TEMPLATE}},
                name="a" * 250),
        'spec.volumes[0].name: Invalid value: "cache": PVC name "' + "a" * 250
        + '-cache": must be no more than 253 characters'),
    "claim of an ephemeral volume": (
        volumes({"name": "cache", "ephemeral": {"volumeClaimTemplate": TEMPLATE}},
                {"name": "data", "persistentVolumeClaim": {"claimName": "web-0-cache"}}),
        'pod db/web-0: spec.volumes[1].persistentVolumeClaim.claimName: Invalid value: '
        '"web-0-cache": must not reference a PVC that gets created for an ephemeral volume'),
    "volumes a string": (volumes() | {"spec": {"containers": [{"name": "c"}],
                                               "volumes": "data"}},
                         "pod db/web-0: spec.volumes: expected a list, got a string"),
}


@pytest.mark.parametrize("case", CASES)
def test_a_bad_storage_object_is_refused_in_the_api_servers_words(case: str) -> None:
    obj, message = CASES[case]
    error = refused(ksched.read_objects, obj, match=message, error=InvalidObjectError)
    kind = obj["kind"]
    record = {"Pod": ksched.Pod, "PersistentVolume": PersistentVolume,
              "PersistentVolumeClaim": PersistentVolumeClaim, "StorageClass": ksched.StorageClass,
              "CSINode": ksched.CSINode, "CSIDriver": ksched.CSIDriver,
              "CSIStorageCapacity": ksched.CSIStorageCapacity}[kind]
    assert str(refused(record.from_manifest, obj, match=message)) == str(error)
    refused(ksched.load_cluster, [obj], match=message)


def test_two_storage_objects_of_one_name_are_refused() -> None:
    refused(ksched.load_cluster, [PV, PV], match='persistentvolume pv-a: metadata.name: '
                                                  'Duplicate value: "pv-a"')
    refused(lambda: ksched.read_objects([PVC, PVC]).storage,
            match='persistentvolumeclaim db/data-0: metadata.name: Duplicate value: "data-0"')
    refused(StorageObjects, csi_nodes=[ksched.CSINode("n1"), ksched.CSINode("n1")],
            match='csinode n1: metadata.name: Duplicate value: "n1"')


@pytest.mark.parametrize(("make", "message"), [
    (lambda: PersistentVolume("pv", capacity="1Gi"),
     "persistentvolume pv: capacity: expected an integer, got a string"),
    (lambda: PersistentVolume("pv", phase="Gone"),
     'persistentvolume pv: phase: Unsupported value: "Gone": supported values: "Available"'),
    (lambda: PersistentVolume("pv", claim_ref=("db", "c")),
     "persistentvolume pv: claim_ref: expected a ClaimRef or null, got a list"),
    (lambda: PersistentVolumeClaim("c", volume_mode="block"),
     'persistentvolumeclaim default/c: volume_mode: Unsupported value: "block"'),
    (lambda: ksched.StorageClass("sc", volume_binding_mode="Later"),
     'storageclass sc: volume_binding_mode: Unsupported value: "Later"'),
    (lambda: ksched.CSINode("n1", drivers=["ebs"]),
     "csinode n1: drivers[0]: expected a CSINodeDriver, got a string"),
    (lambda: ClaimRef("db", 5), "claimref: name: expected a string, got an integer"),
    (lambda: ksched.Volume("v", "csi", lun=2**40),
     "volume v: lun: Invalid value: 1099511627776: must be a 32-bit integer"),
])
def test_records_check_their_fields(make: Any, message: str) -> None:
    refused(make, match=message, error=InvalidObjectError)


_KINDS = {"PersistentVolume": PV, "PersistentVolumeClaim": PVC, "StorageClass": SC,
          "CSINode": CSI_NODE, "CSIDriver": CSI_DRIVER, "CSIStorageCapacity": CAPACITY}
_VALUES = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.text(max_size=8),
                    st.lists(st.text(max_size=3), max_size=2),
                    st.dictionaries(st.text(max_size=3), st.text(max_size=3), max_size=2))


def _paths(obj: Any, prefix: str = "") -> list[str]:
    out = []
    if isinstance(obj, dict):
        for key, value in obj.items():
            path = f"{prefix}.{key}" if prefix else key
            out += [path, *_paths(value, path)]
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            path = f"{prefix}.{i}"
            out += [path, *_paths(value, path)]
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(_KINDS)), st.data())
def test_random_values_in_random_fields_are_read_or_refused_cleanly(kind: str, data) -> None:
    """Any value in any field of a storage object: a record or a ``KschedError``, never a raw
    Python error."""
    base = _KINDS[kind]
    path = data.draw(st.sampled_from([p for p in _paths(base) if p not in ("kind",)]))
    obj = changed(base, path, data.draw(_VALUES))
    try:
        ksched.read_objects(obj)
    except KschedError:
        pass
