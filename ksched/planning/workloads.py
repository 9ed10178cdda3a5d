"""Workloads expanded into the pods their controllers would create.

Deployments, ReplicaSets, StatefulSets, Jobs, ReplicationControllers and DaemonSets, from
any source :func:`ksched.io.iter_manifests` reads (files, directories, a ``kubectl get -o
json`` List, multi-document YAML as Helm renders it, dicts), become :class:`~ksched.api.Pod`
records named, labelled and owned as their controllers make them, so that the scheduler sees
what it would see in a cluster:

========================  ==============================================================
Deployment                ``spec.replicas`` pods ``<deploy>-<hash>-<xxxxx>``, labelled
                          ``pod-template-hash: <hash>``, controlled by the implied
                          ReplicaSet ``<deploy>-<hash>`` (``apps/v1``)
ReplicaSet                ``spec.replicas`` pods ``<rs>-<xxxxx>`` (``apps/v1`` owner)
ReplicationController     ``spec.replicas`` pods ``<rc>-<xxxxx>`` (``v1`` owner)
StatefulSet               ``<sts>-<ordinal>`` for ``spec.ordinals.start`` onwards, labelled
                          ``statefulset.kubernetes.io/pod-name``,
                          ``apps.kubernetes.io/pod-index`` and ``controller-revision-hash``
Job                       ``min(parallelism, completions)`` pods ``<job>-<xxxxx>`` (Indexed:
                          ``<job>-<index>-<xxxxx>``), labelled as the API server labels a
                          Job's template (``batch.kubernetes.io/controller-uid``, ...);
                          none while ``spec.suspend``
DaemonSet                 one pod ``<ds>-<xxxxx>`` per eligible node of ``cluster`` (those
                          without one of its pods yet), pinned there by the required node
                          affinity ``metadata.name In [node]`` the daemon controller sets
========================  ==============================================================

Names are deterministic, not random: ``<hash>`` is the FNV-1a 32-bit hash of the pod
template serialised as JSON with sorted keys, its decimal digits encoded as upstream's
``rand.SafeEncodeString`` encodes them (upstream hashes Go's printout of the template, so
the strings differ from a real cluster's; their shape and stability do not). The five
character suffixes are distinct within one owner (an affine bijection of the replica index
over the 27⁵ strings of upstream's alphabet, offset by a hash of the owner), and generated
names keep upstream's limit (the prefix cut to 58 characters). Objects without
``metadata.uid`` get a stable UUID (version 5 of kind, namespace and name).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from ksched import validation as _v
from ksched.api import LabelSelector, ManifestReader, PersistentVolumeClaim, Pod, Workload
from ksched.errors import ArgumentError, InvalidObjectError
from ksched.inputs import as_cluster
from ksched.io import iter_manifests
from ksched.limits import MAX_PODS
from ksched.kernels import taint_toleration as taint_kernels
from ksched.planning.workload_names import generated_names, stable_uid, template_hash
from ksched.plugins.node_affinity import required_node_affinity_mask
from ksched.plugins.taint_toleration import encode_tolerations
from ksched.state import ClusterState

__all__ = ["CONTROLLER_KINDS", "Expansion", "expand", "expand_workloads", "read_workloads",
           "template_hash"]

#: The kinds expanded, with the apiVersion their pods' owner references carry.
CONTROLLER_KINDS = {"Deployment": "apps/v1", "ReplicaSet": "apps/v1", "StatefulSet": "apps/v1",
                    "Job": "batch/v1", "ReplicationController": "v1", "DaemonSet": "apps/v1"}

#: ``AddOrUpdateDaemonPodTolerations`` (pkg/controller/daemon/util): (key, effect).
_DAEMON_TOLERATIONS = (("node.kubernetes.io/not-ready", "NoExecute"),
                       ("node.kubernetes.io/unreachable", "NoExecute"),
                       ("node.kubernetes.io/disk-pressure", "NoSchedule"),
                       ("node.kubernetes.io/memory-pressure", "NoSchedule"),
                       ("node.kubernetes.io/pid-pressure", "NoSchedule"),
                       ("node.kubernetes.io/unschedulable", "NoSchedule"))
_HOST_NETWORK_TOLERATION = ("node.kubernetes.io/network-unavailable", "NoSchedule")


@attrs.frozen
class Expansion:
    """The pods of some workloads and the objects default spreading needs for them.

    Attributes
    ----------
    pods : tuple of Pod
        The pods, workload by workload in input order, each workload's in creation order.
    workloads : tuple of Workload
        The ReplicaSets (those given and those implied by Deployments), StatefulSets and
        ReplicationControllers, reduced to their selectors: put them in the cluster's
        ``objects={"workloads": ...}`` so that PodTopologySpread's default constraints find
        the controller of each pod.
    claims : tuple of PersistentVolumeClaim
        The claims of StatefulSets' ``volumeClaimTemplates``, named as the StatefulSet
        controller names them (``<template>-<statefulset>-<ordinal>``): add them to the
        cluster's storage objects beside the pods.
    """

    pods: tuple[Pod, ...] = ()
    workloads: tuple[Workload, ...] = ()
    claims: tuple[PersistentVolumeClaim, ...] = ()


def read_workloads(source: Any) -> tuple[Mapping[str, Any], ...]:
    """The manifests of ``source`` whose kind is one of :data:`CONTROLLER_KINDS`, in input
    order (other kinds are skipped); nothing is checked yet.

    Parameters
    ----------
    source : Any
        Anything :func:`ksched.io.iter_manifests` reads.

    Returns
    -------
    tuple of Mapping
        The wire-format dicts, as read (not copied).
    """
    return tuple(obj for obj in iter_manifests(source) if obj.get("kind") in CONTROLLER_KINDS)


def expand(source: Any, *, cluster: Any = None) -> tuple[Pod, ...]:
    """The pods the controllers of ``source``'s workloads would create.

    Parameters
    ----------
    source : Any
        Anything :func:`ksched.io.iter_manifests` reads; kinds other than
        :data:`CONTROLLER_KINDS` are ignored.
    cluster : ClusterState or Any, optional
        The cluster DaemonSets run on (anything :func:`ksched.load_cluster` reads); required
        when ``source`` has a DaemonSet.

    Returns
    -------
    tuple of Pod
        Pending pods, in the order of :attr:`Expansion.pods`.

    Raises
    ------
    InvalidObjectError
        A workload is malformed, given twice, or makes more than
        :data:`ksched.limits.MAX_PODS` pods; or two workloads make a pod of one name. The
        message names the object (``deployment default/web``) and the field
        (``spec.replicas``).
    ArgumentError
        A DaemonSet without ``cluster``.

    Examples
    --------
    >>> pods = expand({"apiVersion": "apps/v1", "kind": "StatefulSet",
    ...                "metadata": {"name": "db"},
    ...                "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "db"}},
    ...                         "template": {"metadata": {"labels": {"app": "db"}},
    ...                                      "spec": {"containers": [{"name": "c"}]}}}})
    >>> [p.name for p in pods], pods[0].controller
    (['db-0', 'db-1'], ('apps/v1', 'StatefulSet', 'db'))
    """
    return expand_workloads(source, cluster=cluster).pods


def expand_workloads(source: Any, *, cluster: Any = None) -> Expansion:
    """:func:`expand`'s pods with the selecting objects of their controllers.

    Parameters
    ----------
    source, cluster
        As for :func:`expand`.

    Returns
    -------
    Expansion
    """
    manifests = read_workloads(source)
    state = _daemon_cluster(manifests, cluster)
    pods: list[Pod] = []
    workloads: list[Workload] = []
    owners: set[tuple[str, str, str]] = set()
    makers: dict[tuple[str, str], str] = {}
    claims: list[PersistentVolumeClaim] = []
    for obj in manifests:
        owner, got_pods, got_workload = _expand_one(obj, state)
        _check_once(owner, owners)
        _check_pod_names(owner, got_pods, makers)
        pods.extend(got_pods)
        if got_workload is not None:
            workloads.append(got_workload)
        if owner.kind == "StatefulSet":
            claims.extend(_stateful_claims(owner, obj, got_pods))
    return Expansion(tuple(pods), tuple(workloads), tuple(claims))


# --------------------------------------------------------------------------- per kind


@attrs.frozen
class _Owner:
    """A workload being expanded: what its pods' metadata is made of."""

    kind: str
    name: str
    namespace: str
    uid: str
    where: str  # "deployment default/web": how errors name it

    @property
    def salt(self) -> str:
        """What makes the names of its pods differ from those of any other owner."""
        return f"{self.kind}/{self.namespace}/{self.name}"

    def reference(self, kind: str | None = None, name: str | None = None,
                  uid: str | None = None) -> dict[str, Any]:
        kind = kind or self.kind
        return {"apiVersion": CONTROLLER_KINDS[kind], "kind": kind, "name": name or self.name,
                "uid": uid or self.uid, "controller": True, "blockOwnerDeletion": True}


def _expand_one(obj: Mapping[str, Any], state: ClusterState | None
                ) -> tuple[_Owner, list[Pod], Workload | None]:
    """The workload ``obj`` as an owner, its pods and its selecting object (if any)."""
    kind = obj["kind"]
    record = Workload.from_manifest(obj)  # metadata, labels, selector, spec.replicas checked
    where = f"{kind.lower()} {record.namespace}/{record.name}"
    uid = ManifestReader(where).string((obj.get("metadata") or {}).get("uid"), "metadata.uid")
    owner = _Owner(kind, record.name, record.namespace,
                   uid or stable_uid(kind, record.namespace, record.name), where)
    spec = ManifestReader(owner.where).mapping(obj.get("spec"), "spec")
    template = _template(owner, spec)
    if kind not in ("Job", "DaemonSet"):
        _check_pod_count(owner, record.replicas, "spec.replicas")
    expander = _EXPANDERS[kind]
    if kind == "DaemonSet":
        return (owner, *expander(owner, spec, template, record, state))
    return (owner, *expander(owner, spec, template, record))


def _deployment(owner: _Owner, spec: Mapping, template: Mapping,
                record: Workload) -> tuple[list[Pod], Workload]:
    _check_selector(owner, record, template)
    pod_hash = template_hash(template)
    rs_name = f"{owner.name}-{pod_hash}"
    rs_uid = stable_uid("ReplicaSet", owner.namespace, rs_name)
    labels = {**_labels(template), "pod-template-hash": pod_hash}
    selector = record.selector
    implied = Workload("ReplicaSet", rs_name, owner.namespace, LabelSelector(
        {**selector.match_labels, "pod-template-hash": pod_hash},
        selector.match_expressions), record.replicas)
    names = generated_names(f"{rs_name}-", record.replicas,
                            f"ReplicaSet/{owner.namespace}/{rs_name}")
    ref = owner.reference("ReplicaSet", rs_name, rs_uid)
    return _copies(owner, template, names, labels, ref), implied


def _replica_set(owner: _Owner, spec: Mapping, template: Mapping,
                 record: Workload) -> tuple[list[Pod], Workload]:
    if owner.kind != "ReplicationController":
        _check_selector(owner, record, template)
    elif record.selector is not None and not record.selector.matches(_labels(template)):
        _fail_selector(owner, template)
    names = generated_names(f"{owner.name}-", record.replicas, owner.salt)
    return _copies(owner, template, names, _labels(template), owner.reference()), record


def _stateful_set(owner: _Owner, spec: Mapping, template: Mapping,
                  record: Workload) -> tuple[list[Pod], Workload]:
    _check_selector(owner, record, template)
    fields = ManifestReader(owner.where)
    ordinals = fields.mapping(spec.get("ordinals"), "spec.ordinals")
    start = fields.count(ordinals.get("start"), "spec.ordinals.start", 0)
    service = fields.string(spec.get("serviceName"), "spec.serviceName")
    claims = _claim_templates(fields, spec.get("volumeClaimTemplates"))
    revision = f"{owner.name}-{template_hash(template)}"
    ref = owner.reference()
    pods = []
    for ordinal in range(start, start + record.replicas):
        name = f"{owner.name}-{ordinal}"
        labels = {**_labels(template), "controller-revision-hash": revision,
                  "statefulset.kubernetes.io/pod-name": name,
                  "apps.kubernetes.io/pod-index": str(ordinal)}
        pod_spec = {**_pod_spec(template), "hostname": name}
        if service:
            pod_spec["subdomain"] = service
        if claims:
            pod_spec["volumes"] = _with_claims(pod_spec.get("volumes"), claims, name)
        pods.append(_parse(owner, _manifest(owner, name, labels, template, ref, pod_spec)))
    return pods, record


def _job(owner: _Owner, spec: Mapping, template: Mapping,
         record: Workload) -> tuple[list[Pod], None]:
    fields = ManifestReader(owner.where)
    parallelism = fields.count(spec.get("parallelism"), "spec.parallelism", 1)
    completions = fields.count(spec.get("completions"), "spec.completions", None)
    mode = fields.string(spec.get("completionMode"), "spec.completionMode", "NonIndexed")
    if mode not in ("NonIndexed", "Indexed"):
        fields.fail("spec.completionMode", f"Unsupported value: {json.dumps(mode)}: supported "
                                           'values: "NonIndexed", "Indexed"')
    indexed = mode == "Indexed"
    if indexed and completions is None:
        fields.fail("spec.completions", "Required value: when completion mode is Indexed")
    _check_job_restart_policy(fields, template)
    active = 0 if fields.boolean(spec.get("suspend"), "spec.suspend") else (
        parallelism if completions is None else min(parallelism, completions))
    _check_pod_count(owner, active, "spec.parallelism")
    labels = _labels(template)
    if not fields.boolean(spec.get("manualSelector"), "spec.manualSelector"):
        labels = {**labels, "batch.kubernetes.io/controller-uid": owner.uid,
                  "batch.kubernetes.io/job-name": owner.name, "controller-uid": owner.uid,
                  "job-name": owner.name}
    ref = owner.reference()
    if not indexed:
        names = generated_names(f"{owner.name}-", active, owner.salt)
        return _copies(owner, template, names, labels, ref), None
    return [_indexed_job_pod(owner, template, labels, ref, index)
            for index in range(active)], None


def _indexed_job_pod(owner: _Owner, template: Mapping, labels: Mapping, ref: Mapping,
                     index: int) -> Pod:
    """An Indexed Job's pod: ``<job>-<index>-<xxxxx>``, its index as label and annotation,
    its hostname ``<job>-<index>``."""
    prefix = f"{owner.name}-{index}-"
    name = generated_names(prefix, 1, f"{owner.salt}/{index}")[0]
    labels = {**labels, "batch.kubernetes.io/job-completion-index": str(index)}
    manifest = _manifest(owner, name, labels, template, ref,
                         {**_pod_spec(template), "hostname": f"{owner.name}-{index}"})
    manifest["metadata"]["annotations"] = {
        **manifest["metadata"].get("annotations", {}),
        "batch.kubernetes.io/job-completion-index": str(index)}
    return _parse(owner, manifest)


def _daemon_set(owner: _Owner, spec: Mapping, template: Mapping, record: Workload,
                state: ClusterState | None) -> tuple[list[Pod], None]:
    _check_selector(owner, record, template)
    assert state is not None  # _daemon_cluster asked for it
    pod_spec = dict(_pod_spec(template))
    pod_spec["tolerations"] = _daemon_tolerations(owner, pod_spec)
    labels = {**_labels(template), "controller-revision-hash": template_hash(template),
              "pod-template-generation": "1"}
    ref = owner.reference()
    probe = _parse(owner, _manifest(owner, owner.name, labels, template, ref, pod_spec))
    nodes = _daemon_nodes(owner, probe, state)
    names = generated_names(f"{owner.name}-", len(nodes), owner.salt)
    return [_parse(owner, _manifest(owner, name, labels, template, ref,
                                    {**pod_spec, "affinity": _pinned(pod_spec, node)}))
            for name, node in zip(names, nodes)], None


_EXPANDERS = {"Deployment": _deployment, "ReplicaSet": _replica_set,
              "ReplicationController": _replica_set, "StatefulSet": _stateful_set,
              "Job": _job, "DaemonSet": _daemon_set}


# --------------------------------------------------------------------------- DaemonSets


def _daemon_cluster(manifests: Sequence[Mapping[str, Any]], cluster: Any) -> ClusterState | None:
    """The cluster as a ``ClusterState`` when a DaemonSet needs it; an error without one."""
    daemon = next((obj for obj in manifests if obj.get("kind") == "DaemonSet"), None)
    if daemon is None:
        return None
    if cluster is None:
        meta = daemon.get("metadata") or {}
        raise ArgumentError(f"cluster: daemonset {meta.get('namespace') or 'default'}/"
                            f"{meta.get('name')} places one pod per eligible node: pass the "
                            "cluster it runs on")
    return as_cluster(cluster)


def _daemon_tolerations(owner: _Owner, pod_spec: Mapping) -> list[Any]:
    """``AddOrUpdateDaemonPodTolerations``: the template's tolerations, then each default
    one (``Exists``) that no toleration of the same key, operator, value and effect has;
    an equal one differing in ``tolerationSeconds`` is replaced."""
    fields = ManifestReader(owner.where)
    tolerations = list(fields.seq(pod_spec.get("tolerations"), "spec.template.spec.tolerations"))
    defaults = _DAEMON_TOLERATIONS + (
        (_HOST_NETWORK_TOLERATION,) if pod_spec.get("hostNetwork") is True else ())
    for key, effect in defaults:
        wanted = {"key": key, "operator": "Exists", "effect": effect}
        same = [i for i, t in enumerate(tolerations) if isinstance(t, Mapping) and all(
            t.get(k) == v for k, v in wanted.items()) and not t.get("value")]
        if not same:
            tolerations.append(wanted)
        elif "tolerationSeconds" in tolerations[same[0]]:
            tolerations[same[0]] = wanted
    return tolerations


def _daemon_nodes(owner: _Owner, probe: Pod, state: ClusterState) -> list[str]:
    """``NodeShouldRunDaemonPod``'s ``shouldRun`` over every node, vectorised: the template's
    ``nodeName`` (if any), its required node affinity (``nodeSelector`` and required terms)
    and its tolerations (with the daemon ones) against NoSchedule/NoExecute taints; less the
    nodes that run one of its pods already. In the cluster's node order."""
    nodes = np.arange(state.num_nodes, dtype=np.int64)
    mask = required_node_affinity_mask(probe, state, nodes)
    mask &= ~taint_kernels.untolerated_mask(
        state.taint_indptr, state.taint_keys, state.taint_values, state.taint_effects, nodes,
        *encode_tolerations(probe.tolerations, state.vocab))
    names = state.node_names
    if probe.node_name:
        mask &= np.array([n == probe.node_name for n in names], dtype=np.bool_)
    running = _running_daemon_nodes(owner, state)
    return [names[i] for i in np.flatnonzero(mask) if i not in running]


def _running_daemon_nodes(owner: _Owner, state: ClusterState) -> set[int]:
    """Rows of the nodes that run a pod this DaemonSet controls."""
    controller = ("apps/v1", "DaemonSet", owner.name)
    return {int(state.pod_node[i]) for i, pod in enumerate(state.pods)
            if pod.controller == controller and pod.namespace == owner.namespace}


def _pinned(pod_spec: Mapping, node: str) -> dict[str, Any]:
    """``ReplaceDaemonSetPodNodeNameNodeAffinity``: the required node selector becomes the
    one term ``metadata.name In [node]``; preferred terms and pod (anti-)affinity stay."""
    affinity = dict(pod_spec.get("affinity") or {})
    node_affinity = dict(affinity.get("nodeAffinity") or {})
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}
    affinity["nodeAffinity"] = node_affinity
    return affinity


# --------------------------------------------------------------------------- pods


def _template(owner: _Owner, spec: Mapping) -> Mapping[str, Any]:
    """``spec.template``, checked: an object with a ``spec``, its metadata's labels a valid
    label map and its annotations a string map (``ValidatePodTemplateSpec``)."""
    fields = ManifestReader(owner.where)
    template = fields.mapping(spec.get("template"), "spec.template")
    if not template:
        fields.fail("spec.template", "Required value")
    meta = fields.mapping(template.get("metadata"), "spec.template.metadata")
    fields.labels(meta.get("labels"), "spec.template.metadata.labels")
    fields.string_map(meta.get("annotations"), "spec.template.metadata.annotations")
    if not fields.mapping(template.get("spec"), "spec.template.spec"):
        fields.fail("spec.template.spec", "Required value")
    return template


def _labels(template: Mapping) -> dict[str, Any]:
    return dict((template.get("metadata") or {}).get("labels") or {})


def _pod_spec(template: Mapping) -> Mapping[str, Any]:
    return template.get("spec") or {}


def _manifest(owner: _Owner, name: str, labels: Mapping, template: Mapping, ref: Mapping,
              pod_spec: Mapping | None = None) -> dict[str, Any]:
    """A Pod manifest from the template (``GetPodFromTemplate``): its labels, annotations
    and spec, in the owner's namespace, controlled by ``ref``."""
    meta: dict[str, Any] = {"name": name, "namespace": owner.namespace, "labels": dict(labels),
                            "ownerReferences": [dict(ref)]}
    annotations = (template.get("metadata") or {}).get("annotations")
    if annotations:
        meta["annotations"] = dict(annotations)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": _pod_spec(template) if pod_spec is None else pod_spec}


def _parse(owner: _Owner, manifest: Mapping[str, Any]) -> Pod:
    """``Pod.from_manifest``; its errors name the workload and the template's field."""
    try:
        return Pod.from_manifest(manifest)
    except InvalidObjectError as exc:
        raise InvalidObjectError(owner.where, f"spec.template.{exc.path}" if exc.path
                                 else "spec.template", exc.problem) from None


def _copies(owner: _Owner, template: Mapping, names: Sequence[str], labels: Mapping,
            ref: Mapping) -> list[Pod]:
    """Pods that differ only in name: the first parsed from its manifest, the rest copies
    of it renamed (their names have the first one's length and alphabet)."""
    if not names:
        return []
    first = _parse(owner, _manifest(owner, names[0], labels, template, ref))
    return [first] + [attrs.evolve(first, name=name) for name in names[1:]]



def _claim_templates(fields: ManifestReader, value: Any) -> list[str]:
    names = []
    for i, claim in enumerate(fields.seq(value, "spec.volumeClaimTemplates")):
        meta = fields.mapping(fields.mapping(claim, f"spec.volumeClaimTemplates[{i}]")
                              .get("metadata"), f"spec.volumeClaimTemplates[{i}].metadata")
        names.append(fields.string(meta.get("name"),
                                   f"spec.volumeClaimTemplates[{i}].metadata.name"))
    return names


def _stateful_claims(owner: _Owner, obj: Mapping[str, Any], pods: Sequence[Pod]
                     ) -> list[PersistentVolumeClaim]:
    """``getPersistentVolumeClaims``: per pod and claim template, the claim
    ``<template>-<pod>`` in the pod's namespace, labelled with the StatefulSet's
    ``matchLabels``, its spec the template's (a template the API server would refuse
    makes no claim)."""
    spec = obj.get("spec") or {}
    labels = dict(((spec.get("selector") or {}).get("matchLabels")) or {})
    claims = []
    for i, template in enumerate(spec.get("volumeClaimTemplates") or ()):
        meta = template.get("metadata") or {}
        for pod in pods:
            manifest = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                        "metadata": {"name": f"{meta['name']}-{pod.name}",
                                     "namespace": owner.namespace,
                                     "labels": {**(meta.get("labels") or {}), **labels}},
                        "spec": template.get("spec") or {}}
            try:
                claims.append(PersistentVolumeClaim.from_manifest(manifest))
            except InvalidObjectError:
                # the API server would refuse the claim (and the controller make no pod):
                # left out, its pods then fail on the missing claim with the scheduler's reason
                continue
    return claims


def _with_claims(volumes: Any, claims: Sequence[str], pod_name: str) -> list[Any]:
    """``updateStorage``: a volume per claim template, ``<claim>-<pod>``, replacing one of
    the same name."""
    kept = [v for v in volumes or () if not (isinstance(v, Mapping) and v.get("name") in claims)]
    return kept + [{"name": c, "persistentVolumeClaim": {"claimName": f"{c}-{pod_name}"}}
                   for c in claims]


# --------------------------------------------------------------------------- checks


def _check_once(owner: _Owner, owners: set[tuple[str, str, str]]) -> None:
    """Refuse a workload given twice (one kind, namespace and name; its pods would be too);
    add it to ``owners``."""
    key = (owner.kind, owner.namespace, owner.name)
    if key in owners:
        ManifestReader(owner.where).check([_v.FieldError(
            "Duplicate value", "metadata.name", owner.name,
            f"the {owner.kind.lower()} is given more than once")])
    owners.add(key)


def _check_pod_names(owner: _Owner, pods: Sequence[Pod],
                     makers: dict[tuple[str, str], str]) -> None:
    """Refuse a pod of ``owner`` named as one an earlier workload made (a Deployment's
    implied ReplicaSet given as well, say), naming both workloads; record the others in
    ``makers`` (namespace/name -> workload)."""
    for pod in pods:
        maker = makers.setdefault((pod.namespace, pod.name), owner.where)
        if maker != owner.where:
            raise InvalidObjectError(f"pod {pod.key}", "metadata.name", (
                f"Duplicate value: {_v.go_quote(pod.name)}: made by both {maker} and "
                f"{owner.where}"))


def _check_pod_count(owner: _Owner, count: int, path: str) -> None:
    """Refuse more pods of one workload than :data:`~ksched.limits.MAX_PODS`."""
    if count > MAX_PODS:
        ManifestReader(owner.where).fail(path, (
            f"Invalid value: {count}: ksched expands at most {MAX_PODS:,} pods of one "
            "workload"))


def _check_job_restart_policy(fields: ManifestReader, template: Mapping) -> None:
    """``validateJobSpec``: a Job's pods must not restart ``Always`` (the API server
    defaults an empty policy to ``Always``, so it is refused as missing)."""
    path = "spec.template.spec.restartPolicy"
    policy = fields.string(_pod_spec(template).get("restartPolicy"), path)
    if policy in ("", "Always"):
        fields.check([_v.required(path, 'valid values: "OnFailure", "Never"')])
    if policy not in ("OnFailure", "Never"):
        fields.check([_v.not_supported(path, policy, ("OnFailure", "Never"))])


def _check_selector(owner: _Owner, record: Workload, template: Mapping) -> None:
    """apps/v1 validation: a selector is required, non-empty, and selects the template."""
    fields = ManifestReader(owner.where)
    if record.selector is None:
        fields.fail("spec.selector", "Required value")
    selector = record.selector
    if not selector.match_labels and not selector.match_expressions:
        fields.fail("spec.selector", f"Invalid value: {{}}: empty selector is invalid for "
                                     f"{owner.kind.lower()}")
    if not selector.matches(_labels(template)):
        _fail_selector(owner, template)


def _fail_selector(owner: _Owner, template: Mapping) -> None:
    shown = ", ".join(f"{json.dumps(k)}:{json.dumps(v)}"
                      for k, v in sorted(_labels(template).items()))
    ManifestReader(owner.where).fail("spec.template.metadata.labels",
                              f"Invalid value: map[string]string{{{shown}}}: `selector` does "
                              "not match template `labels`")
