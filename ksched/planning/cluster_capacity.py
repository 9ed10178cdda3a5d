"""cluster-capacity's report, field for field: ``ClusterCapacityReview``
(``kubernetes-sigs/cluster-capacity``, ``pkg/framework/report.go``) as its ``-o json`` and
``-o yaml`` write it, and its plain and ``--verbose`` text, so that scripts written for it keep
working on ksched's answers.

What it writes, and so what this writes:

- no ``kind`` / ``apiVersion`` (the review's ``TypeMeta`` is embedded without a JSON tag, its
  fields empty and ``omitempty``);
- ``spec.templates``: the template pods as given, with the defaults its ``ParseAPISpec`` sets
  (namespace ``default``, ``schedulerName``, ``dnsPolicy``, ``restartPolicy``, each
  container's ``terminationMessagePolicy``) and the empty fields Go writes back
  (``metadata.creationTimestamp: null``, ``resources: {}``, ``status: {}``);
- ``spec.replicas``: the ``--max-limit`` (0: unlimited);
- ``spec.podRequirements``: per template its containers' requests (init containers and
  overhead are not counted there): ``cpu``, ``memory`` and ``nvdia.com/gpu`` (sic) as
  quantities, the scalar resources (extended, ``hugepages-*``, ``*kubernetes.io/*``) as
  integers or ``null``, the ``nodeSelector`` or ``null``;
- ``status.creationTimestamp`` (RFC 3339 with nanoseconds, local time), ``status.replicas``,
  ``status.failReason`` (the stop reason split at its first colon: ``Unschedulable`` and the
  scheduler's condition message, or ``LimitReached`` and ``Maximum number of pods simulated:
  N``), and per template ``replicasOnNodes`` and ``failSummary`` (always ``null``: its code
  never fills it).
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from ksched.quantity import canonical, parse_quantity
from ksched.resources import is_scalar_resource

__all__ = ["DEFAULT_SCHEDULER", "review", "review_json", "review_text", "review_yaml",
           "template_manifest"]

#: The scheduler name cluster-capacity gives a template that names none.
DEFAULT_SCHEDULER = "default-scheduler"
#: Its misspelt GPU resource name, kept in ``primaryResources``.
_GPU = "nvdia.com/gpu"


def template_manifest(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """A Pod manifest as cluster-capacity's ``ParseAPISpec`` leaves it, with the empty
    fields Go's encoder writes back (see the module)."""
    pod = copy.deepcopy(dict(manifest))
    meta = pod.setdefault("metadata", {})
    meta.setdefault("namespace", "default")
    meta.setdefault("creationTimestamp", None)
    spec = pod.setdefault("spec", {})
    spec.setdefault("schedulerName", DEFAULT_SCHEDULER)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("restartPolicy", "Always")
    spec.pop("nodeName", None)  # its pod generator clears it on every copy
    for container in spec.get("containers") or ():
        container.setdefault("resources", {})
        container.setdefault("terminationMessagePolicy", "FallbackToLogsOnError")
    pod.setdefault("status", {})
    return pod


def review(report: Any, manifests: Sequence[Mapping[str, Any]], max_limit: int = 0,
           now: datetime | None = None) -> dict[str, Any]:
    """The ``ClusterCapacityReview`` of a :class:`~ksched.planning.CapacityReport`.

    Parameters
    ----------
    report : the capacity report (one result per manifest, same order).
    manifests : the templates' Pod manifests (wire form, camelCase).
    max_limit : the copy limit asked for (0: none), written as ``spec.replicas``.
    now : the review's time (default: now, local time).

    Returns
    -------
    dict, JSON-ready, keys in the order Go writes them.
    """
    templates = [template_manifest(m) for m in manifests]
    last = report.results[-1]
    return {
        "spec": {"templates": templates, "replicas": int(max_limit),
                 "podRequirements": [_requirements(t) for t in templates]},
        "status": {
            "creationTimestamp": _rfc3339_nano(now or datetime.now().astimezone()),
            "replicas": report.replicas,
            "failReason": _fail_reason(last),
            "pods": [{"podName": t["metadata"].get("name", ""),
                      "replicasOnNodes": [{"nodeName": n, "replicas": c}
                                          for n, c in r.replicas_on_nodes.items()],
                      "failSummary": None}
                     for t, r in zip(templates, report.results)]}}


def _fail_reason(result: Any) -> dict[str, str]:
    """``getMainFailReason`` of cluster-capacity's stop reason for ``result``."""
    if result.limit_reached:
        stop = f"LimitReached: Maximum number of pods simulated: {result.limit}"
    else:
        stop = f"Unschedulable: {result.stop_reason}"
    first = stop.split("\n")[0]
    kind, _, message = first.partition(":")
    return {"failType": kind, "failMessage": message.strip(" ")}


def _requirements(pod: Mapping[str, Any]) -> dict[str, Any]:
    """``getResourceRequest`` and the node selector of one template."""
    spec = pod.get("spec") or {}
    totals: dict[str, list[str]] = {}
    for container in spec.get("containers") or ():
        for name, text in ((container.get("resources") or {}).get("requests") or {}).items():
            totals.setdefault(name, []).append(str(text))
    primary = {"cpu": _sum(totals.get("cpu"), milli=True),
               "memory": _sum(totals.get("memory"), milli=False), _GPU: "0"}
    scalar = {name: sum(math.ceil(parse_quantity(t)) for t in texts)
              for name, texts in sorted(totals.items()) if is_scalar_resource(name)}
    return {"podName": (pod.get("metadata") or {}).get("name", ""),
            "resources": {"primaryResources": primary, "scalarResources": scalar or None},
            "nodeSelectors": spec.get("nodeSelector")}


def _sum(texts: Sequence[str] | None, milli: bool) -> str:
    """Quantities added as ``Quantity.Add`` adds them, printed as ``String()`` does: one
    quantity keeps its own form; a sum is written in the first one's (decimal or binary)."""
    if not texts:
        return "0"
    if len(texts) == 1:
        return canonical(texts[0])
    total = sum(parse_quantity(t) for t in texts)
    if milli:
        return canonical(f"{math.ceil(total * 1000)}m")
    value = math.ceil(total)
    binary = texts[0].rstrip().endswith("i")
    if binary and value % 1024 == 0:
        return canonical(f"{value // 1024}Ki")
    return canonical(str(value))


def _rfc3339_nano(moment: datetime) -> str:
    """Go's ``time.RFC3339Nano``: fractional seconds without trailing zeros, ``Z`` for UTC."""
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    if moment.microsecond:
        text += f".{moment.microsecond:06d}".rstrip("0")
    offset = moment.utcoffset()
    if offset is None or not offset:
        return text + "Z"
    minutes = int(offset.total_seconds()) // 60
    sign, minutes = ("+", minutes) if minutes >= 0 else ("-", -minutes)
    return f"{text}{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def review_json(data: Mapping[str, Any]) -> str:
    """``json.Marshal`` and ``Println``: compact, ``<``, ``>`` and ``&`` escaped."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(char, escaped)
    return text + "\n"


def review_yaml(data: Mapping[str, Any]) -> str:
    """``sigs.k8s.io/yaml.Marshal``: the JSON form as YAML, keys sorted, block style."""
    import yaml

    return yaml.safe_dump(json.loads(review_json(data)), sort_keys=True,
                          default_flow_style=False, allow_unicode=True, width=2 ** 31 - 1)


def review_text(data: Mapping[str, Any], verbose: bool = False) -> str:
    """``clusterCapacityReviewPrettyPrint``: a count per template; with ``verbose`` the
    requirements, the termination reason and the pods per node too."""
    lines: list[str] = []
    if verbose:
        for req in data["spec"]["podRequirements"]:
            lines += _requirement_lines(req)
    for pod in data["status"]["pods"]:
        count = sum(r["replicas"] for r in pod["replicasOnNodes"])
        lines.append(f"The cluster can schedule {count} instance(s) of the pod "
                     f"{pod['podName']}." if verbose else str(count))
    if verbose:
        reason = data["status"]["failReason"]
        lines += ["", f"Termination reason: {reason['failType']}: {reason['failMessage']}"]
        if data["status"]["replicas"] > 0:
            lines += ["", "Pod distribution among nodes:"]
            for pod in data["status"]["pods"]:
                lines.append(pod["podName"])
                lines += [f"\t- {r['nodeName']}: {r['replicas']} instance(s)"
                          for r in pod["replicasOnNodes"]]
    return "\n".join(lines) + "\n"


def _requirement_lines(req: Mapping[str, Any]) -> list[str]:
    resources = req["resources"]
    lines = [f"{req['podName']} pod requirements:",
             f"\t- CPU: {resources['primaryResources']['cpu']}",
             f"\t- Memory: {resources['primaryResources']['memory']}"]
    if resources["scalarResources"] is not None:
        pairs = " ".join(f"{k}:{v}" for k, v in sorted(resources["scalarResources"].items()))
        lines.append(f"\t- ScalarResources: map[{pairs}]")
    if req["nodeSelectors"] is not None:
        selector = ",".join(f"{k}={v}" for k, v in sorted(req["nodeSelectors"].items()))
        lines.append(f"\t- NodeSelector: {selector}")
    return lines + [""]
