"""Write ``ksched/api/schema.json``, the field names of every Kubernetes API type that ksched
reads, from the kubernetes Python client's models (their ``attribute_map`` and
``openapi_types``, generated from the API server's OpenAPI document).

Run it with the client of the Kubernetes minor ksched follows (v1.35 -> client 35.x), in any
environment (ksched needs the kubernetes package only here, never at run time)::

    pip install --target /tmp/k35 kubernetes==35.0.0 six
    PYTHONPATH=/tmp/k35 python -m ksched.api.schema_gen

The file holds ``{"client": <version>, "kinds": {kind: type}, "types": {type: {field:
child}}}``, ``child`` being ``""`` for a value that is not an API object (a string, a number,
a free-form map such as labels, ``resources.requests``, a ``RawExtension`` or ``fieldsV1``),
``"T"`` for an object of type ``T``, ``"[T"`` for a list of them and ``"{T"`` for a map of
them; only the types reachable from the kinds are kept.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

#: The kinds ksched reads (:mod:`ksched.io`, :mod:`ksched.planning.workloads`) and their
#: lists; each is served at one version in Kubernetes v1.35, that of the client's ``V1`` model.
KINDS = ("Pod", "Node", "Namespace", "Service", "ReplicationController", "ReplicaSet",
         "StatefulSet", "Deployment", "DaemonSet", "Job", "PriorityClass",
         "PodDisruptionBudget", "PersistentVolume", "PersistentVolumeClaim", "StorageClass",
         "CSINode", "CSIDriver", "CSIStorageCapacity")

#: The generic ``v1 List`` (``metav1.List``) has no client model: its fields by hand.
LIST_FIELDS = {"apiVersion": "", "kind": "", "metadata": "V1ListMeta", "items": ""}

_LIST = re.compile(r"list\[(?P<item>.+)\]\Z")
_MAP = re.compile(r"dict\(str, (?P<item>.+)\)\Z")
OUT = Path(__file__).with_name("schema.json")


def _child(type_name: str, models: Any) -> str:
    """How a field's client type is walked: ``""``, ``T``, ``[T`` or ``{T``."""
    for pattern, mark in ((_LIST, "["), (_MAP, "{")):
        match = pattern.match(type_name)
        if match:
            inner = _child(match["item"], models)
            return mark + inner if inner and inner[0] not in "[{" else ""
    return type_name if hasattr(getattr(models, type_name, None), "openapi_types") else ""


def schema(models: Any, version: str) -> dict[str, Any]:
    """The schema of :data:`KINDS` (and their lists) from the client's ``models`` module."""
    kinds = {kind: f"V1{kind}" for kind in KINDS}
    kinds.update({f"{kind}List": f"V1{kind}List" for kind in KINDS})
    types: dict[str, dict[str, str]] = {}
    todo = list(kinds.values()) + ["V1ListMeta"]
    while todo:
        name = todo.pop()
        if name in types:
            continue
        cls = getattr(models, name)
        fields = {cls.attribute_map[attr]: _child(t, models)
                  for attr, t in sorted(cls.openapi_types.items())}
        types[name] = fields
        todo += [child.lstrip("[{") for child in fields.values() if child]
    kinds["List"] = "List"
    types["List"] = LIST_FIELDS
    return {"client": version, "kinds": kinds,
            "types": {name: types[name] for name in sorted(types)}}


def main() -> None:
    import kubernetes
    from kubernetes.client import models

    OUT.write_text(json.dumps(schema(models, kubernetes.__version__), indent=0,
                              sort_keys=False) + "\n")
    print(f"wrote {OUT} from kubernetes {kubernetes.__version__}", file=sys.stderr)


if __name__ == "__main__":
    main()
