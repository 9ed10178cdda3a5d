"""scheduler_perf's ``performance-config.yaml``: test cases, workloads, parameters, labels.

A config file is a YAML list of test cases. A test case has a ``name``, a
``workloadTemplate`` (the ops), ``workloads`` (each a ``name``, ``params`` and optional
``labels``, ``featureGates``, ``threshold``, ``thresholdMetricSelector``) and optionally
``labels``, ``featureGates``, ``schedulerConfigPath``, ``defaultPodTemplatePath``,
``thresholdMetricSelector``. In an op, a key ending in ``Param`` whose value is ``$name``
takes the workload's parameter ``name`` under the key without the suffix (``countParam:
$initNodes`` gives ``count``). Paths are relative to the config file. Errors name the file,
the test case, the workload and the field.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import yaml

from ksched.errors import InvalidObjectError

__all__ = ["Workload", "load_workloads", "select"]

_DEFAULT_METRIC = {"name": "SchedulingThroughput", "labels": None}


@attrs.frozen
class Workload:
    """One workload of a test case, its parameters substituted into the ops.

    Attributes
    ----------
    source : the config file it comes from.
    test_case, name : upstream's names (``SchedulingBasic``, ``5000Nodes_10000Pods``).
    labels : the test case's labels and the workload's.
    feature_gates : the test case's gates, overridden by the workload's.
    ops : the ops of the test case's ``workloadTemplate``, parameters substituted.
    threshold : upstream's expected minimum (printed for context only), or ``None``.
    threshold_metric : the metric the threshold applies to (``name``, ``labels``).
    scheduler_config : the ``schedulerConfigPath``, resolved, or ``None``.
    default_pod_template : the ``defaultPodTemplatePath``, resolved, or ``None``.
    """

    source: Path
    test_case: str
    name: str
    labels: frozenset[str]
    feature_gates: Mapping[str, bool]
    ops: tuple[Mapping[str, Any], ...]
    threshold: float | None = None
    threshold_metric: Mapping[str, Any] = attrs.field(factory=lambda: dict(_DEFAULT_METRIC))
    scheduler_config: Path | None = None
    default_pod_template: Path | None = None

    @property
    def full_name(self) -> str:
        """``<test case>/<workload>``, as in upstream's benchmark names."""
        return f"{self.test_case}/{self.name}"

    def where(self, field: str = "") -> str:
        """The location for error messages: ``FILE: TestCase/workload``."""
        return f"{self.source}: {self.full_name}" + (f": {field}" if field else "")


def load_workloads(path: str | Path) -> list[Workload]:
    """Every workload of the config file at ``path``, in file order.

    Raises
    ------
    InvalidObjectError
        The file is unreadable or not a list of test cases, or a field has the wrong type,
        or an op names a parameter the workload does not give.
    """
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise InvalidObjectError(str(path), "", f"cannot read the config: {exc}") from None
    if not isinstance(data, list):
        raise InvalidObjectError(str(path), "", "must be a YAML list of test cases")
    out: list[Workload] = []
    for index, case in enumerate(data):
        out.extend(_test_case(path, index, case))
    return out


def _test_case(path: Path, index: int, case: Any) -> Iterable[Workload]:
    where = f"{path}: [{index}]"
    case = _mapping(case, where, "")
    name = _string(case.get("name"), where, "name")
    where = f"{path}: {name}"
    template = _list(case.get("workloadTemplate"), where, "workloadTemplate")
    gates = _gates(case.get("featureGates"), where, "featureGates")
    labels = _labels(case.get("labels"), where, "labels")
    metric = case.get("thresholdMetricSelector") or _DEFAULT_METRIC
    base = path.parent
    config = _path(case.get("schedulerConfigPath"), base, where, "schedulerConfigPath")
    pod = _path(case.get("defaultPodTemplatePath"), base, where, "defaultPodTemplatePath")
    for i, raw in enumerate(_list(case.get("workloads"), where, "workloads")):
        raw = _mapping(raw, where, f"workloads[{i}]")
        wname = _string(raw.get("name"), where, f"workloads[{i}].name")
        wwhere = f"{where}/{wname}"
        params = _mapping(raw.get("params") or {}, wwhere, "params")
        ops = tuple(_substitute(_mapping(op, wwhere, f"workloadTemplate[{j}]"), params, wwhere,
                                f"workloadTemplate[{j}]") for j, op in enumerate(template))
        threshold = raw.get("threshold")
        if threshold is not None and (isinstance(threshold, bool)
                                      or not isinstance(threshold, int | float)):
            raise InvalidObjectError(wwhere, "threshold", f"must be a number, got {threshold!r}")
        yield Workload(
            source=path, test_case=name, name=wname,
            labels=labels | _labels(raw.get("labels"), wwhere, "labels"),
            feature_gates={**gates, **_gates(raw.get("featureGates"), wwhere, "featureGates")},
            ops=ops, threshold=None if threshold is None else float(threshold),
            threshold_metric=raw.get("thresholdMetricSelector") or metric,
            scheduler_config=config, default_pod_template=pod)


_PARAM = re.compile(r"^\$([A-Za-z_][A-Za-z0-9_]*)$")


def _substitute(op: Mapping[str, Any], params: Mapping[str, Any], where: str,
                field: str) -> dict[str, Any]:
    """``op`` with each ``<key>Param: $name`` resolved to ``<key>: params[name]``, nested
    ops (``createPodsOp``) included."""
    out: dict[str, Any] = {}
    for key, value in op.items():
        if isinstance(value, Mapping) and "opcode" in value:
            out[key] = _substitute(value, params, where, f"{field}.{key}")
            continue
        match = _PARAM.match(value) if isinstance(value, str) else None
        if key.endswith("Param") and match:
            if match.group(1) not in params:
                raise InvalidObjectError(where, f"{field}.{key}",
                                         f"parameter {match.group(1)!r} is not in params")
            out[key[: -len("Param")]] = params[match.group(1)]
        else:
            out[key] = value
    if not isinstance(out.get("opcode"), str):
        raise InvalidObjectError(where, f"{field}.opcode", "required: a string")
    return out


def select(workloads: Sequence[Workload], labels: Sequence[str] = (),
           pattern: str | None = None) -> list[Workload]:
    """The workloads carrying every label of ``labels`` and none of those given as
    ``-label``, whose ``<test case>/<workload>`` name matches the regular expression
    ``pattern`` (searched, as ``go test -bench`` does)."""
    want = {label for label in labels if not label.startswith("-")}
    avoid = {label[1:] for label in labels if label.startswith("-")}
    regex = re.compile(pattern) if pattern else None
    return [w for w in workloads if want <= w.labels and not avoid & w.labels
            and (regex is None or regex.search(w.full_name))]


def _mapping(value: Any, where: str, field: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise InvalidObjectError(where, field, f"must be a mapping, got {type(value).__name__}")
    return value


def _list(value: Any, where: str, field: str) -> list[Any]:
    if not isinstance(value, list):
        raise InvalidObjectError(where, field, "required: a list")
    return value


def _string(value: Any, where: str, field: str) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidObjectError(where, field, "required: a non-empty string")
    return value


def _labels(value: Any, where: str, field: str) -> frozenset[str]:
    if value is None:
        return frozenset()
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise InvalidObjectError(where, field, "must be a list of strings")
    return frozenset(value)


def _gates(value: Any, where: str, field: str) -> dict[str, bool]:
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(v, bool) for v in value.values()):
        raise InvalidObjectError(where, field, "must map gate names to true or false")
    return dict(value)


def _path(value: Any, base: Path, where: str, field: str) -> Path | None:
    if value is None:
        return None
    return base / _string(value, where, field)
