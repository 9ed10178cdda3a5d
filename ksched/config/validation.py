"""``ValidateKubeSchedulerConfiguration`` (``pkg/scheduler/apis/config/validation/
validation.go``): the scheduler-wide fields, each profile (its plugins and, through
:mod:`ksched.config.validation_pluginargs`, their args), the queue sort shared by all
profiles, and the extenders; errors in upstream's order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ksched.api.resource_validation import is_extended_resource_name
from ksched.config.conversion import InternalProfile
from ksched.config.decode import UnknownArgs
from ksched.config.types import ALL_POINTS, API_VERSION
from ksched.config.validation_pluginargs import ARGS_VALIDATORS
from ksched.validation import AsJSON as _AsJSON
from ksched.validation import FieldError, go_duration, go_quote, label_key_messages
from ksched.validation import duplicate as _duplicate
from ksched.validation import invalid as _invalid
from ksched.validation import required as _required

__all__ = ["validate_config"]

_INVALID_PLUGINS = ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")
_INVALID_DETAIL = (f"was invalid in version {go_quote(API_VERSION)} (KubeSchedulerConfiguration "
                   f"is version {go_quote(API_VERSION)})")



def validate_config(cfg: Mapping[str, Any], profiles: Sequence[InternalProfile]
                    ) -> list[FieldError]:
    """``ValidateKubeSchedulerConfiguration``, errors in upstream's order."""
    errs = _validate_client_connection(cfg["clientConnection"])
    election = cfg["leaderElection"]
    errs += _validate_leader_election(election)
    if election["leaderElect"] and election["resourceLock"] != "leases":
        errs.append(_invalid("leaderElection.resourceLock", election["resourceLock"],
                             'resourceLock value must be "leases"'))
    if cfg["parallelism"] <= 0:
        errs.append(_invalid("parallelism", cfg["parallelism"],
                             "should be an integer value greater than zero"))
    seen: dict[str, int] = {}
    for i, prof in enumerate(profiles):
        errs += _validate_profile(f"profiles[{i}]", prof)
        if prof.scheduler_name in seen:
            # The bad value is a *field.Path, whose unexported fields marshal as {}.
            errs.append(_duplicate(f"profiles[{i}].schedulerName", _AsJSON({})))
        seen[prof.scheduler_name] = i
    errs += _validate_common_queue_sort(profiles)
    errs += _validate_percentage("percentageOfNodesToScore", cfg["percentageOfNodesToScore"])
    if cfg["podInitialBackoffSeconds"] <= 0:
        errs.append(_invalid("podInitialBackoffSeconds", cfg["podInitialBackoffSeconds"],
                             "must be greater than 0"))
    if cfg["podMaxBackoffSeconds"] < cfg["podInitialBackoffSeconds"]:
        errs.append(_invalid("podMaxBackoffSeconds", cfg["podMaxBackoffSeconds"],
                             "must be greater than or equal to PodInitialBackoffSeconds"))
    return errs + _validate_extenders(cfg.get("extenders") or [])


def _validate_client_connection(client: Mapping[str, Any]) -> list[FieldError]:
    """``componentbasevalidation.ValidateClientConnectionConfiguration``."""
    burst = client.get("burst", 0)
    return [_invalid("clientConnection.burst", burst, "must be non-negative")] if burst < 0 else []


def _validate_leader_election(le: Mapping[str, Any]) -> list[FieldError]:
    """``componentbasevalidation.ValidateLeaderElectionConfiguration``."""
    if not le["leaderElect"]:
        return []
    errs = []
    for key in ("leaseDuration", "renewDeadline", "retryPeriod"):
        if le[key] <= 0:
            errs.append(_invalid(f"leaderElection.{key}", _AsJSON(go_duration(le[key])),
                                 "must be greater than zero"))
    if le["leaseDuration"] <= le["renewDeadline"]:
        errs.append(_invalid("leaderElection.leaseDuration",
                             _AsJSON(go_duration(le["renewDeadline"])),
                             "must be greater than `RenewDeadline`"))
    for key in ("resourceLock", "resourceNamespace", "resourceName"):
        if not le.get(key):
            errs.append(_required(f"leaderElection.{key}"))
    return errs


def _validate_percentage(path: str, value: int | None) -> list[FieldError]:
    """``validatePercentageOfNodesToScore``."""
    if value is not None and not 0 <= value <= 100:
        return [_invalid(path, value, "not in valid range [0-100]")]
    return []


def _validate_profile(path: str, prof: InternalProfile) -> list[FieldError]:
    """``validateKubeSchedulerProfile`` and ``validatePluginConfig``."""
    errs = []
    if not prof.scheduler_name:
        errs.append(_required(f"{path}.schedulerName"))
    errs += _validate_percentage(f"{path}.percentageOfNodesToScore",
                                 prof.percentage_of_nodes_to_score)
    for point in ALL_POINTS:  # upstream walks a map here, so its order is random
        for i, (name, _) in enumerate(prof.plugins[point].enabled):
            if name in _INVALID_PLUGINS:
                errs.append(_invalid(f"{path}.plugins.{point}.enabled[{i}]", name,
                                     _INVALID_DETAIL))
    seen = set()
    for i, (name, args) in enumerate(prof.plugin_config):
        pc_path = f"{path}.pluginConfig[{i}]"
        if name in seen:
            errs.append(_duplicate(pc_path, name))
        seen.add(name)
        if name in _INVALID_PLUGINS:
            errs.append(_invalid(pc_path, name, _INVALID_DETAIL))
        elif name in ARGS_VALIDATORS and isinstance(args, dict):
            errs += ARGS_VALIDATORS[name](f"{pc_path}.args", args)
    return errs


def _validate_common_queue_sort(profiles: Sequence[InternalProfile]) -> list[FieldError]:
    """``validateCommonQueueSort``: the same queueSort set (and its args) in every profile."""
    errs = []
    canon = profiles[0].plugins["queueSort"]
    name = canon.enabled[0][0] if canon.enabled else ""
    if len(canon.enabled) > 1:
        errs.append(_invalid("profiles[0].plugins.queueSort.Enabled", len(canon.enabled),
                             "only one queue sort plugin can be enabled"))
    canon_args = None
    for pc_name, args in profiles[0].plugin_config:
        if name and pc_name == name:
            canon_args = args
    for i, prof in enumerate(profiles[1:], start=1):
        current = prof.plugins["queueSort"]
        if current != canon:
            errs.append(_invalid(f"profiles[{i}].plugins.queueSort", _AsJSON(current.to_json()),
                                 "must be the same for all profiles"))
        for pc_name, args in prof.plugin_config:
            if pc_name == name and args != canon_args:
                errs.append(_invalid(f"profiles[{i}].pluginConfig.args", _AsJSON(_args_json(args)),
                                     "queueSort must be the same for all profiles"))
    return errs


def _args_json(args: Any) -> Any:
    return args.raw if isinstance(args, UnknownArgs) else args


def _validate_extenders(extenders: Sequence[Mapping[str, Any]]) -> list[FieldError]:
    """``validateExtenders``."""
    errs, binders, managed = [], 0, set()
    for i, ext in enumerate(extenders):
        path = f"extenders[{i}]"
        if ext.get("prioritizeVerb") and ext.get("weight", 0) <= 0:
            errs.append(_invalid(f"{path}.weight", ext.get("weight", 0),
                                 "must have a positive weight applied to it"))
        binders += bool(ext.get("bindVerb"))
        for j, res in enumerate(ext.get("managedResources") or ()):
            name, rpath = res.get("name", ""), f"{path}.managedResources[{j}].name"
            errs += _extended_resource_name_errors(rpath, name)
            if name in managed:
                errs.append(_invalid(rpath, name, "duplicate extender managed resource name"))
            managed.add(name)
    if binders > 1:
        errs.append(_invalid("extenders", f"found {binders} extenders implementing bind",
                             "only one extender can implement bind"))
    return errs


def _extended_resource_name_errors(path: str, name: str) -> list[FieldError]:
    """``validateExtendedResourceName`` (``v1helper.IsExtendedResourceName``)."""
    errs = [_invalid(path, _AsJSON(name), msg) for msg in label_key_messages(name)]
    if errs:
        return errs
    if not is_extended_resource_name(name):
        return [_invalid(path, name, "is an invalid extended resource name")]
    return []
