"""Reading a live cluster through the kubernetes client, and saving what was read.

:func:`read_live_items` lists, page by page, every kind the scheduler reads: Nodes, Pods,
Namespaces, PodDisruptionBudgets, PriorityClasses, the Services, ReplicaSets, StatefulSets and
ReplicationControllers that default spreading selects by, and the PersistentVolumes,
PersistentVolumeClaims, StorageClasses, CSINodes, CSIDrivers and CSIStorageCapacities that
the volume plugins read. Responses are not
turned into client models: each page's JSON body is parsed with orjson into the wire dicts
that :func:`ksched.io.read_objects` reads from files, so a live load and a load of the same
objects from ``kubectl get -o json`` give the same cluster. :func:`save_snapshot` writes the
items as a ``v1 List`` so the analysis can be repeated offline.

The kubernetes package is an optional extra (``pip install ksched[cluster]``). The kubeconfig
is loaded into a fresh client configuration; the process-wide default is left alone.
"""

from __future__ import annotations

import gzip
import os
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from ksched.errors import ArgumentError, ClusterAccessError
from ksched.files import written_whole
from ksched.io import Objects, read_objects

#: (connect, read) timeouts in seconds of one list request.
REQUEST_TIMEOUT = (15.0, 300.0)


class _Kind(NamedTuple):
    kind: str
    api_version: str
    api: str  # the kubernetes.client API class
    method: str  # its list method over all namespaces
    optional: bool  # a 404 (the server does not serve the kind) skips it with a warning

    @property
    def plural(self) -> str:
        """How messages name the kind's objects (``Pods``, ``StorageClasses``)."""
        if self.kind.endswith("ss"):
            return self.kind + "es"
        return self.kind[:-1] + "ies" if self.kind.endswith("y") else self.kind + "s"


#: What is listed, in order. Nodes and pods are required; the rest are skipped with a warning
#: when the server does not serve them.
KINDS: tuple[_Kind, ...] = (
    _Kind("Node", "v1", "CoreV1Api", "list_node", False),
    _Kind("Pod", "v1", "CoreV1Api", "list_pod_for_all_namespaces", False),
    _Kind("Namespace", "v1", "CoreV1Api", "list_namespace", True),
    _Kind("PodDisruptionBudget", "policy/v1", "PolicyV1Api",
          "list_pod_disruption_budget_for_all_namespaces", True),
    _Kind("PriorityClass", "scheduling.k8s.io/v1", "SchedulingV1Api", "list_priority_class",
          True),
    _Kind("Service", "v1", "CoreV1Api", "list_service_for_all_namespaces", True),
    _Kind("ReplicaSet", "apps/v1", "AppsV1Api", "list_replica_set_for_all_namespaces", True),
    _Kind("StatefulSet", "apps/v1", "AppsV1Api", "list_stateful_set_for_all_namespaces", True),
    _Kind("ReplicationController", "v1", "CoreV1Api",
          "list_replication_controller_for_all_namespaces", True),
    _Kind("PersistentVolume", "v1", "CoreV1Api", "list_persistent_volume", True),
    _Kind("PersistentVolumeClaim", "v1", "CoreV1Api",
          "list_persistent_volume_claim_for_all_namespaces", True),
    _Kind("StorageClass", "storage.k8s.io/v1", "StorageV1Api", "list_storage_class", True),
    _Kind("CSINode", "storage.k8s.io/v1", "StorageV1Api", "list_csi_node", True),
    _Kind("CSIDriver", "storage.k8s.io/v1", "StorageV1Api", "list_csi_driver", True),
    _Kind("CSIStorageCapacity", "storage.k8s.io/v1", "StorageV1Api",
          "list_csi_storage_capacity_for_all_namespaces", True),
)


def load_live(kubeconfig: str | os.PathLike | None = None, context: str | None = None, *,
              page_size: int = 500) -> Objects:
    """The objects of a live cluster, as :func:`ksched.io.read_objects` reads them.

    Parameters
    ----------
    kubeconfig : path, optional
        The kubeconfig file; ``None`` reads ``$KUBECONFIG`` or ``~/.kube/config``.
    context : str, optional
        The kubeconfig context; ``None`` uses its ``current-context``.
    page_size : int
        Items per list request (the ``limit`` query parameter).

    Returns
    -------
    Objects

    Raises
    ------
    ClusterAccessError
        The kubeconfig or context is unusable, the server cannot be reached, or it answered
        a list with an error (see :func:`read_live_items`).
    """
    return read_objects(read_live_items(kubeconfig, context, page_size=page_size))


def read_live_items(kubeconfig: str | os.PathLike | None = None, context: str | None = None,
                    *, page_size: int = 500) -> list[dict[str, Any]]:
    """Every object of :data:`KINDS` in a live cluster, as wire-format dicts.

    Each kind is listed in pages of ``page_size`` (``limit`` / ``continue``); items get the
    ``kind`` and ``apiVersion`` that list responses leave out. A continue token the server has
    expired (HTTP 410) restarts that kind's list once. A kind the server does not serve
    (HTTP 404) is skipped with a :class:`RuntimeWarning` when it is optional.

    Parameters
    ----------
    kubeconfig, context, page_size
        As for :func:`load_live`.

    Returns
    -------
    list of dict
        Nodes first, then pods, then the other kinds, each in the server's order.

    Raises
    ------
    ClusterAccessError
        As for :func:`load_live`; the message names the kind, the server and the status.
    """
    if isinstance(page_size, bool) or not isinstance(page_size, int) or page_size < 1:
        raise ArgumentError(f"page_size: must be a positive int, not {page_size!r}")
    if kubeconfig is not None and not isinstance(kubeconfig, str | os.PathLike):
        raise ArgumentError(f"kubeconfig: must be a path or None, not {type(kubeconfig).__name__}"
                            f" {kubeconfig!r}"[:200])
    if context is not None and not isinstance(context, str):
        raise ArgumentError(f"context: must be a str or None, not {type(context).__name__} "
                            f"{context!r}"[:200])
    client = _client(kubeconfig, context)
    try:
        items: list[dict[str, Any]] = []
        for kind in KINDS:
            items.extend(_list_kind(client, kind, page_size))
        return items
    finally:
        client.close()


def save_snapshot(objects_or_items: Any, path: str | os.PathLike) -> Path:
    """Write raw items as a ``v1 List`` (the shape of ``kubectl get ... -o json``).

    Parameters
    ----------
    objects_or_items : list of dict or dict
        The wire-format items (as :func:`read_live_items` returns them), or a ``v1 List``.
        Parsed :class:`~ksched.io.Objects` keep no wire form and are refused.
    path : path
        Where to write; gzip-compressed when the name ends in ``.gz``. The file is written
        beside the target under a temporary name and then renamed, so a failed write leaves
        no half-written snapshot.

    Returns
    -------
    Path
        ``path``.
    """
    items = _snapshot_items(objects_or_items)
    data = orjson.dumps({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""},
                         "items": items})
    target = Path(path)
    if target.name.endswith(".gz"):
        data = gzip.compress(data, compresslevel=6, mtime=0)
    with written_whole(target, binary=True) as out:
        out.write(data)
    return target


def _snapshot_items(value: Any) -> list[Any]:
    if isinstance(value, Objects):
        raise ArgumentError("objects_or_items: parsed Objects keep no wire form; "
                            "pass the items of read_live_items()")
    if isinstance(value, Mapping):
        items = value.get("items") if value.get("kind") == "List" else [value]
    elif isinstance(value, Iterable) and not isinstance(value, str | bytes):
        items = list(value)
    else:
        raise ArgumentError(f"objects_or_items: expected a list of objects, "
                            f"not {type(value).__name__}")
    for i, item in enumerate(items or ()):
        if not isinstance(item, Mapping):
            raise ArgumentError(f"objects_or_items[{i}]: expected an object (a dict), "
                                f"not {type(item).__name__}")
    return list(items or ())


def _kubernetes() -> Any:
    try:
        import kubernetes
    except ImportError:
        raise ClusterAccessError("reading a live cluster needs the kubernetes package: "
                                 "pip install ksched[cluster]") from None
    return kubernetes


def _client(kubeconfig: str | os.PathLike | None, context: str | None) -> Any:
    """A fresh ``ApiClient`` for the kubeconfig and context (the global config untouched)."""
    kubernetes = _kubernetes()
    import yaml  # a dependency of kubernetes

    where = f"kubeconfig {os.fspath(kubeconfig)}" if kubeconfig is not None else "kubeconfig"
    if kubeconfig is not None and not Path(kubeconfig).is_file():
        raise ClusterAccessError(f"{where}: no such file")
    configuration = kubernetes.client.Configuration()
    try:
        kubernetes.config.load_kube_config(
            config_file=None if kubeconfig is None else os.fspath(kubeconfig), context=context,
            client_configuration=configuration, persist_config=False)
    except kubernetes.config.ConfigException as exc:
        raise ClusterAccessError(f"{where}: {_one_line(exc)}") from None
    except (OSError, ValueError, TypeError, KeyError, AttributeError,
            yaml.YAMLError) as exc:  # unreadable file, bad YAML, a malformed entry
        raise ClusterAccessError(f"{where}: cannot be loaded: {_one_line(exc)}") from None
    return kubernetes.client.ApiClient(configuration)


class _Expired(Exception):
    """HTTP 410 on a continue token."""


class _NotServed(Exception):
    """HTTP 404 for a list."""


def _list_kind(client: Any, kind: _Kind, page_size: int) -> list[dict[str, Any]]:
    """Every item of one kind; a 410 on a continue token restarts the list once."""
    for attempt in range(2):
        try:
            return _pages(client, kind, page_size)
        except _Expired:
            if attempt:
                raise ClusterAccessError(
                    f"listing {kind.plural} from {client.configuration.host}: continue token "
                    f"expired twice (HTTP 410); try a larger page size", 410) from None
        except _NotServed:
            if not kind.optional:
                raise ClusterAccessError(f"listing {kind.plural} from "
                                         f"{client.configuration.host}: HTTP 404", 404) from None
            warnings.warn(f"{client.configuration.host} serves no {kind.plural} ({kind.api_version}"
                          f" not found); left out", RuntimeWarning, stacklevel=4)
            return []
    raise AssertionError("unreachable")


def _pages(client: Any, kind: _Kind, page_size: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    token = ""
    while True:
        body = _page(client, kind, page_size, token)
        for item in body.get("items") or ():
            if isinstance(item, dict):
                item["kind"] = kind.kind
                item["apiVersion"] = kind.api_version
                items.append(item)
        token = (body.get("metadata") or {}).get("continue") or ""
        if not token:
            return items


def _page(client: Any, kind: _Kind, page_size: int, token: str) -> dict[str, Any]:
    """One list response's body, parsed."""
    kubernetes = _kubernetes()
    import urllib3  # a dependency of kubernetes

    method = getattr(getattr(kubernetes.client, kind.api)(client), kind.method)
    where = f"listing {kind.plural} from {client.configuration.host}"
    options: dict[str, Any] = {"limit": page_size, "_preload_content": False,
                               "_request_timeout": REQUEST_TIMEOUT}
    if token:
        options["_continue"] = token
    try:
        response = method(**options)
        try:
            data = response.data
        finally:
            response.release_conn()
    except kubernetes.client.exceptions.ApiException as exc:
        raise _api_error(exc, where, bool(token)) from None
    except (urllib3.exceptions.HTTPError, OSError) as exc:  # unreachable, timed out
        raise ClusterAccessError(f"{where}: cannot reach the server: {_reason(exc)}") from None
    try:
        body = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise ClusterAccessError(f"{where}: the response is not JSON: {exc}") from None
    if not isinstance(body, dict):
        raise ClusterAccessError(f"{where}: the response is not a list object")
    return body


def _api_error(exc: Any, where: str, continued: bool) -> Exception:
    status = exc.status
    if status == 410 and continued:
        return _Expired()
    if status == 404:
        return _NotServed()
    message = _status_message(exc.body)
    text = f"{where}: HTTP {status} {exc.reason or ''}".rstrip()
    return ClusterAccessError(f"{text}: {message}" if message else text, status)


def _status_message(body: Any) -> str:
    """The ``message`` of a ``Status`` body, if the body is one."""
    try:
        status = orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        return ""
    message = status.get("message") if isinstance(status, dict) else None
    return message if isinstance(message, str) else ""


def _reason(exc: Exception) -> str:
    return _one_line(getattr(exc, "reason", None) or exc)  # MaxRetryError wraps the cause


def _one_line(value: object) -> str:
    return " ".join(str(value).split())
