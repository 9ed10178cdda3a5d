"""The objects scheduler_perf's ops create, as manifests (dicts) and records.

Templates are read once per file, rendered with :mod:`ksched.perf.gotemplate` when they hold
actions (``Index`` is the object's index within its op, ``Count`` the op's count), parsed as
YAML and their field names decoded as ``encoding/json`` decodes them
(:mod:`ksched.perf.decode`). Names follow upstream, with deterministic suffixes in place of
the API server's random ones: ``generateName`` plus five characters from the API server's
alphabet, counting per prefix. Nodes get the ``kubernetes.io/hostname`` label upstream's node
preparer sets, pods the namespace of their op (``namespace-<op index>`` unless the op names
one). A pod op with PV and PVC templates creates, per pod, ``<namespace>-vol-<i>`` bound to
claim ``pvc-<i>``, mounted as volume ``vol`` (upstream's ``CreatePodWithPersistentVolume``).
"""

from __future__ import annotations

import copy
import functools
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from ksched.errors import InvalidObjectError
from ksched.perf.decode import canonical_fields
from ksched.perf.gotemplate import has_actions, render

__all__ = ["Templates", "Namer", "DEFAULT_NODE", "HOSTNAME", "node_manifests",
           "csi_node_manifest", "volume_manifests", "plain_copy"]

HOSTNAME = "kubernetes.io/hostname"
MIGRATED_PLUGINS = "storage.alpha.kubernetes.io/migrated-plugins"
#: Upstream's node when a createNodes op names no template (``IntegrationTestNodePreparer``).
DEFAULT_NODE: Mapping[str, Any] = {
    "apiVersion": "v1", "kind": "Node", "metadata": {"generateName": "scheduler-perf-"},
    "status": {"capacity": {"pods": "110", "cpu": "4", "memory": "32Gi"}, "phase": "Running",
               "conditions": [{"type": "Ready", "status": "True"}]}}
#: The API server's ``generateName`` alphabet (``k8s.io/apimachinery/pkg/util/rand``).
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


class Namer:
    """Deterministic ``generateName`` suffixes: five characters of the API server's
    alphabet, counting up per prefix (``pod-bbbbb``, ``pod-bbbbc``, ...)."""

    def __init__(self) -> None:
        self._next: dict[str, int] = defaultdict(int)

    def name(self, prefix: str) -> str:
        number = self._next[prefix]
        self._next[prefix] = number + 1
        chars = []
        for _ in range(5):
            number, digit = divmod(number, len(_ALPHABET))
            chars.append(_ALPHABET[digit])
        return prefix + "".join(reversed(chars))


class Templates:
    """Template files, read once; each object made fresh from its file."""

    def __init__(self) -> None:
        self._texts: dict[Path, str] = {}

    def text(self, path: Path) -> str:
        path = Path(path)
        if path not in self._texts:
            try:
                self._texts[path] = path.read_text()
            except OSError as exc:
                raise InvalidObjectError(str(path), "", f"cannot read the template: "
                                                        f"{exc.strerror or exc}") from None
        return self._texts[path]

    def is_static(self, path: Path) -> bool:
        """Whether the template renders the same object for every index."""
        return not has_actions(self.text(path))

    def make(self, path: Path, index: int = 0, count: int = 1,
             params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The object of ``path`` for ``index`` of ``count``: rendered, parsed, decoded."""
        text = self.text(path)
        if has_actions(text):
            text = render(text, {"Index": index, "Count": count, **(params or {})}, str(path))
            return _decode(text, str(path))
        return plain_copy(_parsed(text, str(path)))


def plain_copy(obj: Any) -> Any:
    """A deep copy of parsed YAML (dicts, lists, immutable scalars), several times faster
    than :func:`copy.deepcopy`, which tracks shared references that parsed YAML lacks."""
    if isinstance(obj, dict):
        return {k: plain_copy(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [plain_copy(v) for v in obj]
    return obj


#: libyaml's safe loader where PyYAML was built with it (templates are small, flat YAML).
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@functools.lru_cache(maxsize=256)
def _parsed(text: str, source: str) -> dict[str, Any]:
    return _decode(text, source)


def _decode(text: str, source: str) -> dict[str, Any]:
    try:
        obj = yaml.load(text, Loader=_LOADER)
    except yaml.YAMLError as exc:
        raise InvalidObjectError(source, "", f"not valid YAML: {exc}") from None
    if not isinstance(obj, dict) or not isinstance(obj.get("kind"), str):
        raise InvalidObjectError(source, "kind", "required: the template must be one object")
    return canonical_fields(obj, obj["kind"])


def named(obj: dict[str, Any], namer: Namer, source: str) -> dict[str, Any]:
    """``obj`` with ``metadata.name`` set from ``generateName`` when it has none."""
    meta = obj.setdefault("metadata", {})
    if not meta.get("name"):
        prefix = meta.pop("generateName", None)
        if not prefix:
            raise InvalidObjectError(source, "metadata.name", "required: name or generateName")
        meta["name"] = namer.name(prefix)
    return obj


def node_manifests(op: Mapping[str, Any], templates: Templates, namer: Namer,
                   base: Path, first: int = 0) -> tuple[list[dict], list[dict]]:
    """The nodes of a ``createNodes`` op and the CSINodes its ``nodeAllocatableStrategy``
    creates. ``first``: how many nodes the workload created before (the label strategies
    count on from it)."""
    count = int(op.get("count", 0))
    path = op.get("nodeTemplatePath")
    nodes = []
    for i in range(count):
        if path is None:
            node = named(copy.deepcopy(dict(DEFAULT_NODE)), namer, "createNodes")
        else:
            node = named(templates.make(base / path, i, count), namer, str(base / path))
        meta = node["metadata"]
        meta["labels"] = {**(meta.get("labels") or {}), HOSTNAME: meta["name"]}
        _prepare(node, op, first + i)
        nodes.append(node)
    strategy = op.get("nodeAllocatableStrategy")
    csi = [csi_node_manifest(n["metadata"]["name"], strategy) for n in nodes] if strategy else []
    return nodes, csi


def _prepare(node: dict[str, Any], op: Mapping[str, Any], index: int) -> None:
    """Apply the op's node strategies, as ``DoPrepareNode`` does after the create (the API
    server has defaulted ``allocatable`` from ``capacity`` by then). A label strategy with
    several values takes them in turn (upstream picks at random)."""
    status = node.setdefault("status", {})
    if "allocatable" not in status and "capacity" in status:
        status["allocatable"] = dict(status["capacity"])
    labels = node["metadata"]["labels"]
    prepare = op.get("labelNodePrepareStrategy")
    if prepare:
        values = prepare.get("labelValues") or [""]
        labels[prepare["labelKey"]] = values[index % len(values)]
    unique = op.get("uniqueNodeLabelStrategy")
    if unique:
        labels[unique["labelKey"]] = f"{unique['labelKey'].rsplit('/', 1)[-1]}-{index}"
    strategy = op.get("nodeAllocatableStrategy")
    if strategy:
        status.setdefault("allocatable", {}).update(strategy.get("nodeAllocatable") or {})


def csi_node_manifest(node: str, strategy: Mapping[str, Any]) -> dict[str, Any]:
    """The CSINode ``NodeAllocatableStrategy.createCSINode`` makes for ``node``."""
    drivers = [{"name": driver, "nodeID": node, "allocatable": dict(allocatable or {})}
               for driver, allocatable in (strategy.get("csiNodeAllocatable") or {}).items()]
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
            "metadata": {"name": node, "annotations": {
                MIGRATED_PLUGINS: ",".join(strategy.get("migratedPlugins") or [])}},
            "spec": {"drivers": drivers}}


def volume_manifests(pv_template: dict[str, Any], pvc_template: dict[str, Any],
                     namespace: str, index: int) -> tuple[dict, dict]:
    """The bound PV and PVC of pod ``index`` (upstream's ``getCustomVolumeFactory`` and
    ``CreatePodWithPersistentVolume`` with ``bindVolume``)."""
    pv, pvc = plain_copy(pv_template), plain_copy(pvc_template)
    volume = f"vol-{index}"
    spec = pv.setdefault("spec", {})
    if isinstance(spec.get("csi"), dict):
        spec["csi"]["volumeHandle"] = volume
    elif isinstance(spec.get("awsElasticBlockStore"), dict):
        spec["awsElasticBlockStore"]["volumeID"] = volume
    claim = f"pvc-{index}"
    pv["metadata"] = {**(pv.get("metadata") or {}), "name": f"{namespace}-{volume}"}
    spec["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": namespace,
                        "name": claim, "apiVersion": "v1"}
    pv["status"] = {"phase": "Bound"}
    pvc["metadata"] = {**(pvc.get("metadata") or {}), "name": claim, "namespace": namespace}
    pvc.setdefault("spec", {})["volumeName"] = pv["metadata"]["name"]
    pvc["status"] = {"phase": "Bound"}
    return pv, pvc


def with_claim(pod: dict[str, Any], claim: str) -> dict[str, Any]:
    """``pod`` with its volumes replaced by the claim ``claim`` as volume ``vol``."""
    pod.setdefault("spec", {})["volumes"] = [
        {"name": "vol", "persistentVolumeClaim": {"claimName": claim}}]
    return pod


def pod_namespace(op: Mapping[str, Any], op_index: int) -> str:
    """The op's ``namespace``, or upstream's ``namespace-<op index>``."""
    return op.get("namespace") or f"namespace-{op_index}"


def manifests_of(objs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """A v1 List of ``objs`` (what :func:`ksched.io.read_objects` reads)."""
    return {"apiVersion": "v1", "kind": "List", "items": list(objs)}
