"""``ksched.config``: KubeSchedulerConfiguration loading against kube-scheduler v1.35.4.

The trace tests replay every ``tests/conformance/config-*.json.gz``: accepted configurations
must expand to the recorded plugin lists and weights, rejected ones must fail at the recorded
stage with the recorded message. The hand-written cases carry messages derived from the
upstream Go (``apis/config/validation``, ``framework/runtime/framework.go``, apimachinery's
``field.Error`` / strict JSON decoding).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from ksched.plugins.default_preemption import DefaultPreemptionArgs

from ksched.api import ManifestReader
from ksched.api.affinity import read_node_affinity, read_spread_constraints
from ksched.config import (
    API_VERSION,
    KIND,
    ConfigLoadError,
    SchedulerConfig,
    go_duration,
    load_config,
    parse_go_duration,
    plugin_extension_points,
)
from ksched.errors import ConfigError, UnsupportedFeatureError
from ksched.framework.runtime import Framework
from ksched.plugins.balanced_allocation import BalancedAllocationArgs
from ksched.plugins.inter_pod_affinity import InterPodAffinityArgs
from ksched.plugins.node_affinity import NodeAffinityArgs
from ksched.plugins.node_resources_fit import NodeResourcesFitArgs
from ksched.plugins.pod_topology_spread import PodTopologySpreadArgs
from ksched.profile import EXTENSION_POINTS, default_profile

TRACES = sorted((Path(__file__).parent / "conformance").glob("config-*.json.gz"))
ACCEPTED = [p for p in TRACES if "invalid" not in p.name]
REJECTED = [p for p in TRACES if "invalid" in p.name]
P = "profiles[0].pluginConfig[0].args"
FW = "creating profile for scheduler name default-scheduler: "


def _trace(path: Path) -> dict[str, Any]:
    with gzip.open(path, "rt") as f:
        return json.load(f)


def config(*profiles: dict[str, Any], **top: Any) -> dict[str, Any]:
    """A v1 KubeSchedulerConfiguration with the given profiles and top-level fields."""
    out: dict[str, Any] = {"apiVersion": API_VERSION, "kind": KIND, **top}
    if profiles:
        out["profiles"] = list(profiles)
    return out


def args_profile(name: str, args: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"schedulerName": "default-scheduler",
            "pluginConfig": [{"name": name, "args": args}], **extra}


def rejected(cfg: Any) -> tuple[str, str]:
    with pytest.raises(ConfigLoadError) as info:
        load_config(cfg)
    return info.value.stage, str(info.value)


# =========================================================================== traces


def test_trace_files_are_present():
    assert len(ACCEPTED) >= 20 and len(REJECTED) >= 6


@pytest.mark.parametrize("path", ACCEPTED, ids=lambda p: p.name)
def test_trace_expansion_matches_upstream(path):
    """The acceptance bar: preFilter/filter/preScore/score lists and score weights."""
    trace = _trace(path)
    cfg = load_config(trace["input"]["scheduler_config"])
    want_profiles = trace["output"]["profiles"]
    assert [p.scheduler_name for p in cfg.profiles] == [w["schedulerName"] for w in want_profiles]
    for profile, want in zip(cfg.profiles, want_profiles):
        for point in EXTENSION_POINTS:
            entries = want["plugins"].get(point) or []
            assert list(profile.plugins[point]) == [e["name"] for e in entries], point
        assert [(n, profile.weights[n]) for n in profile.plugins["score"]] == [
            (e["name"], e["weight"]) for e in want["plugins"]["score"]]


@pytest.mark.parametrize("path", ACCEPTED, ids=lambda p: p.name)
def test_trace_every_extension_point_and_percentages(path):
    trace = _trace(path)
    output = trace["output"]
    cfg = load_config(trace["input"]["scheduler_config"])
    for points, want in zip(cfg.extension_points, output["profiles"]):
        assert {k: list(v) for k, v in points.items()} == {
            k: [e["name"] for e in v] for k, v in want["plugins"].items()}
    for profile, want in zip(cfg.profiles, output["profiles"]):
        if want["percentageOfNodesToScoreSource"] == "profile":
            assert profile.percentage_of_nodes_to_score == want["percentageOfNodesToScore"]
        else:
            assert profile.percentage_of_nodes_to_score is None
            assert cfg.percentage_of_nodes_to_score == want["percentageOfNodesToScore"]
    effective = output["scheduler_config_effective"]
    assert cfg.percentage_of_nodes_to_score == output["global_percentage_of_nodes_to_score"]
    assert cfg.percentage_of_nodes_to_score == effective["percentageOfNodesToScore"]
    assert cfg.parallelism == effective["parallelism"]
    assert cfg.pod_initial_backoff_seconds == effective["podInitialBackoffSeconds"]
    assert cfg.pod_max_backoff_seconds == effective["podMaxBackoffSeconds"]


def _internal_args(name: str, a: dict[str, Any]) -> Any:
    """The recorder's internal (Go field-named) args as ksched args records."""
    reader = ManifestReader("trace")
    if name == "NodeResourcesFit":
        strategy = a["ScoringStrategy"]
        shape = (strategy["RequestedToCapacityRatio"] or {}).get("Shape") or ()
        return NodeResourcesFitArgs(
            strategy["Type"], tuple((r["Name"], r["Weight"]) for r in strategy["Resources"]),
            tuple((p["Utilization"], p["Score"]) for p in shape),
            frozenset(a["IgnoredResources"] or ()), frozenset(a["IgnoredResourceGroups"] or ()))
    if name == "NodeResourcesBalancedAllocation":
        return BalancedAllocationArgs(tuple((r["Name"], r["Weight"]) for r in a["Resources"]))
    if name == "NodeAffinity":
        return NodeAffinityArgs(read_node_affinity(reader, a["AddedAffinity"], "addedAffinity"))
    if name == "InterPodAffinity":
        return InterPodAffinityArgs(a["HardPodAffinityWeight"],
                                    a["IgnorePreferredTermsOfExistingPods"])
    if name == "PodTopologySpread":
        return PodTopologySpreadArgs(
            read_spread_constraints(reader, a["DefaultConstraints"], "defaultConstraints"),
            a["DefaultingType"])
    if name == "DefaultPreemption":
        return DefaultPreemptionArgs(a["MinCandidateNodesPercentage"],
                                     a["MinCandidateNodesAbsolute"])
    return None


@pytest.mark.parametrize("path", ACCEPTED, ids=lambda p: p.name)
def test_trace_plugin_args_after_defaulting(path):
    trace = _trace(path)
    cfg = load_config(trace["input"]["scheduler_config"])
    for profile, want in zip(cfg.profiles, trace["output"]["profiles"]):
        recorded = {pc["name"]: _internal_args(pc["name"], pc["args"])
                    for pc in want["pluginConfig"]}
        used = set(profile.plugin_names())
        expected = {n: a for n, a in recorded.items() if a is not None and n in used}
        assert dict(profile.args) == expected


@pytest.mark.parametrize("path", ACCEPTED, ids=lambda p: p.name)
def test_trace_profiles_build_ksched_frameworks(path):
    cfg = load_config(_trace(path)["input"]["scheduler_config"])
    for profile in cfg.profiles:
        framework = Framework(profile)
        assert framework.weights == dict(profile.weights)


@pytest.mark.parametrize("path", REJECTED, ids=lambda p: p.name)
def test_trace_rejections_match_upstream(path):
    trace = _trace(path)
    want = trace["output"]["config_error"]
    assert rejected(trace["input"]["scheduler_config"]) == (want["stage"], want["message"])


# =========================================================================== defaults


def test_default_config_is_the_default_profile():
    cfg = load_config(config())
    assert isinstance(cfg, SchedulerConfig)
    (profile,) = cfg.profiles
    default = default_profile()
    assert profile.scheduler_name == default.scheduler_name == "default-scheduler"
    for point in EXTENSION_POINTS:
        assert profile.plugins[point] == default.plugins[point], point
    assert dict(profile.weights) == dict(default.weights)
    assert profile.percentage_of_nodes_to_score is None
    assert (cfg.percentage_of_nodes_to_score, cfg.parallelism) == (0, 16)
    assert (cfg.pod_initial_backoff_seconds, cfg.pod_max_backoff_seconds) == (1, 10)
    assert cfg.profile_for("default-scheduler") is profile
    assert cfg.profile_for("other") is None


def test_default_args_are_filled_as_upstream():
    profile = load_config(config()).profiles[0]
    assert profile.args["NodeResourcesFit"] == NodeResourcesFitArgs()
    assert profile.args["NodeResourcesBalancedAllocation"] == BalancedAllocationArgs()
    assert profile.args["InterPodAffinity"] == InterPodAffinityArgs(1, False)
    assert profile.args["PodTopologySpread"] == PodTopologySpreadArgs((), "System")
    assert profile.args["NodeAffinity"] == NodeAffinityArgs(None)
    assert profile.args["DefaultPreemption"] == DefaultPreemptionArgs(10, 100)
    assert set(profile.args) == {"NodeResourcesFit", "NodeResourcesBalancedAllocation",
                                 "InterPodAffinity", "PodTopologySpread", "NodeAffinity",
                                 "DefaultPreemption"}


def test_default_extension_points_beyond_the_cycle():
    points = load_config(config()).extension_points[0]
    assert points["queueSort"] == ("PrioritySort",)
    assert points["preEnqueue"] == ("SchedulingGates", "DynamicResources", "DefaultPreemption")
    assert points["postFilter"] == ("DynamicResources", "DefaultPreemption")
    assert points["reserve"] == points["preBind"] == ("VolumeBinding", "DynamicResources")
    assert points["bind"] == ("DefaultBinder",)
    assert points["permit"] == points["postBind"] == ()


def test_partial_args_are_defaulted_field_by_field():
    cfg = load_config(config(args_profile("NodeResourcesFit", {
        "scoringStrategy": {"type": "MostAllocated",
                            "resources": [{"name": "cpu"}, {"name": "nvidia.com/gpu",
                                                            "weight": 3}]}})))
    fit = cfg.profiles[0].args["NodeResourcesFit"]
    assert fit.strategy == "MostAllocated"
    assert fit.resources == (("cpu", 1), ("nvidia.com/gpu", 3))
    ba = load_config(config(args_profile("NodeResourcesBalancedAllocation", {"resources": []})))
    assert ba.profiles[0].args["NodeResourcesBalancedAllocation"] == BalancedAllocationArgs()


def test_profile_percentage_and_single_unnamed_profile():
    cfg = load_config(config({"percentageOfNodesToScore": 30}, percentageOfNodesToScore=0))
    assert cfg.profiles[0].scheduler_name == "default-scheduler"
    assert cfg.profiles[0].percentage_of_nodes_to_score == 30
    assert cfg.percentage_of_nodes_to_score == 0


# =========================================================================== merging


def test_score_enabled_weight_overrides_multi_point_and_comes_first():
    profile = load_config(config({"plugins": {"score": {"enabled": [
        {"name": "ImageLocality", "weight": 4}]}}})).profiles[0]
    assert profile.plugins["score"][0] == "ImageLocality"
    assert profile.weights["ImageLocality"] == 4
    assert profile.weights["TaintToleration"] == 3


def test_multi_point_star_drops_default_weights():
    profile = load_config(config({"plugins": {"multiPoint": {
        "disabled": [{"name": "*"}],
        "enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"},
                    {"name": "NodeAffinity"}, {"name": "TaintToleration", "weight": 5}]}}})
    ).profiles[0]
    assert profile.plugins["score"] == ("NodeAffinity", "TaintToleration")
    assert dict(profile.weights) == {"NodeAffinity": 1, "TaintToleration": 5}
    assert profile.plugins["filter"] == ("NodeAffinity", "TaintToleration")
    assert profile.plugins["preFilter"] == ("NodeAffinity",)


def test_point_disable_keeps_other_points():
    profile = load_config(config({"plugins": {
        "filter": {"disabled": [{"name": "TaintToleration"}]},
        "score": {"disabled": [{"name": "*"}]}}})).profiles[0]
    assert "TaintToleration" not in profile.plugins["filter"]
    assert "TaintToleration" in profile.plugins["preScore"]
    assert profile.plugins["score"] == ()
    assert dict(profile.weights) == {}


def test_multi_point_weight_replaces_default_in_place():
    profile = load_config(config({"plugins": {"multiPoint": {"enabled": [
        {"name": "NodeAffinity", "weight": 7}, {"name": "ImageLocality"}]}}})).profiles[0]
    assert profile.plugins["score"] == default_profile().plugins["score"]
    # A re-configured default without a weight loses the default one (0 -> 1).
    assert (profile.weights["NodeAffinity"], profile.weights["ImageLocality"]) == (7, 1)


def test_plugin_extension_points_match_upstream():
    upstream = {
        "SchedulingGates": {"preEnqueue"}, "PrioritySort": {"queueSort"},
        "NodeUnschedulable": {"filter"}, "NodeName": {"filter"},
        "TaintToleration": {"filter", "preScore", "score"},
        "NodeAffinity": {"preFilter", "filter", "preScore", "score"},
        "NodePorts": {"preFilter", "filter"},
        "NodeResourcesFit": {"preFilter", "filter", "preScore", "score"},
        "VolumeRestrictions": {"preFilter", "filter"}, "NodeVolumeLimits": {"preFilter", "filter"},
        "VolumeBinding": {"preFilter", "filter", "preScore", "score", "reserve", "preBind"},
        "VolumeZone": {"preFilter", "filter"},
        "PodTopologySpread": {"preFilter", "filter", "preScore", "score"},
        "InterPodAffinity": {"preFilter", "filter", "preScore", "score"},
        "DynamicResources": {"preEnqueue", "preFilter", "filter", "postFilter", "reserve",
                             "preBind", "score"},
        "DefaultPreemption": {"preEnqueue", "postFilter"},
        "NodeResourcesBalancedAllocation": {"preScore", "score"},
        "ImageLocality": {"score"}, "DefaultBinder": {"bind"},
        "GangScheduling": {"preEnqueue", "reserve", "permit"},
        "NodeDeclaredFeatures": {"preFilter", "filter"},
    }
    for name, points in upstream.items():
        assert plugin_extension_points(name) == points, name
    assert plugin_extension_points("NoSuchPlugin") is None


# =========================================================================== rejections

INVALID_CASES = [
    pytest.param(
        config(percentageOfNodesToScore=101),
        ("validation", "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]"),
        id="global-percentage-101"),
    pytest.param(
        config({"schedulerName": "default-scheduler", "percentageOfNodesToScore": -1}),
        ("validation", "profiles[0].percentageOfNodesToScore: Invalid value: -1: not in valid "
                       "range [0-100]"),
        id="profile-percentage-negative"),
    pytest.param(
        config({"schedulerName": "a"}, {"schedulerName": "a"}),
        ("validation", "profiles[1].schedulerName: Duplicate value: {}"),
        id="duplicate-profile-names"),
    pytest.param(
        config({"schedulerName": "a"}, {}),
        ("validation", "profiles[1].schedulerName: Required value"),
        id="empty-profile-name"),
    pytest.param(
        config({"schedulerName": "a"}, {"schedulerName": "b", "plugins": {"queueSort": {
            "enabled": [{"name": "PrioritySort"}], "disabled": [{"name": "*"}]}}}),
        ("validation", 'profiles[1].plugins.queueSort: Invalid value: {"Enabled":[{"Name":'
                       '"PrioritySort","Weight":0}],"Disabled":[{"Name":"*","Weight":0}]}: must '
                       'be the same for all profiles'),
        id="different-queue-sort"),
    pytest.param(
        config(parallelism=0),
        ("validation", "parallelism: Invalid value: 0: should be an integer value greater "
                       "than zero"),
        id="parallelism-zero"),
    pytest.param(
        config(podInitialBackoffSeconds=5, podMaxBackoffSeconds=2),
        ("validation", "podMaxBackoffSeconds: Invalid value: 2: must be greater than or equal "
                       "to PodInitialBackoffSeconds"),
        id="max-backoff-below-initial"),
    pytest.param(
        config(podInitialBackoffSeconds=0),
        ("validation", "podInitialBackoffSeconds: Invalid value: 0: must be greater than 0"),
        id="initial-backoff-zero"),
    pytest.param(
        config({"pluginConfig": [{"name": "InterPodAffinity", "args": {}},
                                 {"name": "InterPodAffinity", "args": {}}]}),
        ("validation", 'profiles[0].pluginConfig[1]: Duplicate value: "InterPodAffinity"'),
        id="duplicate-plugin-config"),
    pytest.param(
        config({"plugins": {"score": {"enabled": [{"name": "AzureDiskLimits"}]}}}),
        ("validation", 'profiles[0].plugins.score.enabled[0]: Invalid value: "AzureDiskLimits": '
                       'was invalid in version "kubescheduler.config.k8s.io/v1" '
                       '(KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")'),
        id="removed-plugin"),
    pytest.param(
        config(args_profile("NodeResourcesBalancedAllocation", {"resources": [
            {"name": "cpu"}, {"name": "cpu"}]})),
        ("validation", f'{P}.resources[1].name: Duplicate value: "cpu"'),
        id="balanced-allocation-duplicate-resource"),
    pytest.param(
        config(args_profile("InterPodAffinity", {"hardPodAffinityWeight": -1})),
        ("validation", f"{P}.hardPodAffinityWeight: Invalid value: -1: not in valid range "
                       "[0, 100]"),
        id="hard-pod-affinity-weight-negative"),
    pytest.param(
        config(args_profile("PodTopologySpread", {"defaultingType": "List", "defaultConstraints": [
            {"maxSkew": 0, "topologyKey": "", "whenUnsatisfiable": "Maybe"}]})),
        ("validation", f"[{P}.defaultConstraints[0].maxSkew: Invalid value: 0: not in valid "
                       f"range (0, inf), {P}.defaultConstraints[0].topologyKey: Required value: "
                       f"can not be empty, {P}.defaultConstraints[0].whenUnsatisfiable: "
                       'Unsupported value: "Maybe": supported values: "DoNotSchedule", '
                       '"ScheduleAnyway"]'),
        id="spread-constraint-fields"),
    pytest.param(
        config(args_profile("PodTopologySpread", {"defaultingType": "List", "defaultConstraints": [
            {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
            {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]})),
        ("validation", f'{P}.defaultConstraints[1]: Duplicate value: "{{zone, DoNotSchedule}}"'),
        id="spread-constraint-duplicate"),
    pytest.param(
        config(args_profile("PodTopologySpread", {"defaultConstraints": [
            {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]})),
        ("validation", f'{P}.defaultingType: Invalid value: "System": when .defaultConstraints '
                       'are not empty'),
        id="system-defaulting-with-constraints"),
    pytest.param(
        config(args_profile("PodTopologySpread", {"defaultingType": "Auto"})),
        ("validation", f'{P}.defaultingType: Unsupported value: "Auto": supported values: '
                       '"System", "List"'),
        id="unknown-defaulting-type"),
    pytest.param(
        config(args_profile("NodeAffinity", {"addedAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "zone", "operator": "Near", "values": ["a"]},
                                      {"key": "tier", "operator": "In"}]}]}}})),
        ("validation", f"[{P}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution."
                       "nodeSelectorTerms[0].matchExpressions[0].operator: Unsupported value: "
                       '"Near": supported values: "In", "NotIn", "Exists", "DoesNotExist", "Gt", '
                       f'"Lt", {P}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.'
                       "nodeSelectorTerms[0].matchExpressions[1].values: Invalid value: null: for "
                       "'in', 'notin' operators, values set can't be empty]"),
        id="node-affinity-requirements"),
    pytest.param(
        config(args_profile("NodeAffinity", {"addedAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 3, "preference": {
                "matchExpressions": [{"key": "tier", "operator": "Gt", "values": ["x"]}]}}]}})),
        ("validation", f"{P}.addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]."
                       'matchExpressions[0].values[0]: Invalid value: "x": for \'Gt\', \'Lt\' '
                       "operators, the value must be an integer"),
        id="node-affinity-preferred-gt"),
    pytest.param(
        config(args_profile("VolumeBinding", {"shape": [{"utilization": 0, "score": 10}]})),
        ("validation", f'{P}.shape: Invalid value: [{{"Utilization":0,"Score":10}}]: unexpected '
                       "field `shape`, remove it or turn on the feature gate "
                       "StorageCapacityScoring"),
        id="volume-binding-shape-gate-off"),
    pytest.param(
        config(args_profile("DynamicResources", {"bindingTimeout": "5s"})),
        ("validation", f"{P}.bindingTimeout: Forbidden: DRADeviceBindingConditions or "
                       "DRAResourceClaimDeviceStatus feature gate is disabled"),
        id="dra-binding-timeout-gate-off"),
    pytest.param(
        config(args_profile("DefaultPreemption", {"minCandidateNodesPercentage": 0,
                                                  "minCandidateNodesAbsolute": 0})),
        ("validation", f"[{P}.minCandidateNodesPercentage: Invalid value: 0: cannot be zero at "
                       f"the same time as minCandidateNodesAbsolute, {P}.minCandidateNodesAbsolute"
                       ": Invalid value: 0: cannot be zero at the same time as "
                       "minCandidateNodesPercentage]"),
        id="preemption-both-zero"),
    pytest.param(
        config(args_profile("NodeResourcesFit", {"scoringStrategy": {"type": "Balanced"}})),
        ("framework", f'{FW}initializing plugin "NodeResourcesFit": scoringStrategy.type: '
                      'Unsupported value: "Balanced": supported values: "LeastAllocated", '
                      '"MostAllocated", "RequestedToCapacityRatio"'),
        id="fit-strategy-type"),
    pytest.param(
        config(args_profile("NodeResourcesFit", {"scoringStrategy": {
            "type": "MostAllocated", "resources": [{"name": "cpu", "weight": 101}]}})),
        ("framework", f'{FW}initializing plugin "NodeResourcesFit": scoringStrategy.resources[0].'
                      "weight: Invalid value: 101: resource weight of cpu not in valid range "
                      "(0, 100]"),
        id="fit-resource-weight"),
    pytest.param(
        config(args_profile("NodeResourcesFit", {"scoringStrategy": {
            "type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {"shape": []}}})),
        ("framework", f'{FW}initializing plugin "NodeResourcesFit": scoringStrategy.shape: '
                      "Required value: at least one point must be specified"),
        id="rtcr-empty-shape"),
    pytest.param(
        config({"plugins": {"multiPoint": {"enabled": [{"name": "NoSuchPlugin"}]}}}),
        ("framework", f'{FW}PreFilterPlugin "NoSuchPlugin" does not exist'),
        id="unknown-plugin-multi-point"),
    pytest.param(
        config({"plugins": {"score": {"enabled": [{"name": "NoSuchPlugin", "weight": 1}]}}}),
        ("framework", f'{FW}ScorePlugin "NoSuchPlugin" does not exist'),
        id="unknown-plugin-score"),
    pytest.param(
        config({"plugins": {"filter": {"enabled": [{"name": "ImageLocality"}]}}}),
        ("framework", f'{FW}plugin "ImageLocality" does not extend FilterPlugin plugin'),
        id="plugin-without-the-point"),
    pytest.param(
        config({"plugins": {"score": {"enabled": [{"name": "ImageLocality", "weight": -1}]}}}),
        ("framework", f"{FW}total score of Score plugins could overflow"),
        id="negative-score-weight"),
    pytest.param(
        config({"plugins": {"multiPoint": {"disabled": [{"name": "*"}],
                                           "enabled": [{"name": "DefaultBinder"}]}}}),
        ("framework", f'{FW}only one queue sort plugin required for profile with scheduler name '
                      '"default-scheduler", but got 0'),
        id="no-queue-sort"),
    pytest.param(
        config(args_profile("InterPodAffinity", {"hardPodAffinityWeight": 1, "foo": True})),
        ("decode", "strict decoding error: decoding .profiles[0].pluginConfig[0]: strict "
                   "decoding error: decoding args for plugin InterPodAffinity: strict decoding "
                   'error: unknown field "foo"'),
        id="unknown-args-field"),
    pytest.param(
        config({"schedulerName": "x", "plugins": {"score": {"enabled": [
            {"name": "ImageLocality", "wieght": 2}]}}}, foo=1),
        ("decode", 'strict decoding error: unknown field "foo", unknown field '
                   '"profiles[0].plugins.score.enabled[0].wieght"'),
        id="unknown-config-fields"),
    pytest.param(
        config(parallelism="16"),
        ("decode", "json: cannot unmarshal string into Go struct field "
                   "KubeSchedulerConfiguration.parallelism of type int32"),
        id="wrong-type"),
    pytest.param(
        config({"plugins": {"score": {"enabled": [{"name": "ImageLocality",
                                                   "weight": 3000000000}]}}}),
        ("decode", "json: cannot unmarshal number 3000000000 into Go struct field "
                   "Plugin.profiles.plugins.score.enabled.weight of type int32"),
        id="weight-overflows-int32"),
    pytest.param(
        config(args_profile("NodeResourcesFit", {"scoringStrategy": {"type": 3}})),
        ("decode", "decoding .profiles[0].pluginConfig[0]: decoding args for plugin "
                   "NodeResourcesFit: json: cannot unmarshal number into Go struct field "
                   "ScoringStrategy.scoringStrategy.type of type v1.ScoringStrategyType"),
        id="args-wrong-type"),
    pytest.param(
        config({"plugins": {"multiPoint": {"enabled": [{"name": "NodeName"},
                                                       {"name": "NodeName"}]}}}),
        ("framework", f'{FW}plugin "NodeName" already registered as "FilterPlugin"'),
        id="multi-point-double-registration"),
    pytest.param(
        config(leaderElection={"leaseDuration": "5s", "renewDeadline": "10s"}),
        ("validation", 'leaderElection.leaseDuration: Invalid value: "10s": must be greater than '
                       "`RenewDeadline`"),
        id="lease-shorter-than-renew-deadline"),
    pytest.param(
        config(leaderElection={"resourceLock": "endpoints"}),
        ("validation", 'leaderElection.resourceLock: Invalid value: "endpoints": resourceLock '
                       'value must be "leases"'),
        id="resource-lock-not-leases"),
    pytest.param(
        config(args_profile("NodeAffinity", {"kind": "InterPodAffinityArgs"})),
        ("decode", "decoding .profiles[0].pluginConfig[0]: args for plugin NodeAffinity were not "
                   "of type NodeAffinityArgs.kubescheduler.config.k8s.io, got "
                   "InterPodAffinityArgs.kubescheduler.config.k8s.io"),
        id="args-of-another-kind"),
    pytest.param(
        {"apiVersion": API_VERSION},
        ("decode", 'Object \'Kind\' is missing in \'{"apiVersion":"kubescheduler.config.k8s.io/'
                   'v1"}\''),
        id="missing-kind"),
]


@pytest.mark.parametrize("cfg, expected", INVALID_CASES)
def test_invalid_configs_give_upstream_messages(cfg, expected):
    assert rejected(cfg) == expected


def test_rejections_are_config_errors():
    with pytest.raises(ConfigError) as info:
        load_config(config(percentageOfNodesToScore=101))
    assert info.value.stage == "validation"


def test_all_validation_errors_are_reported_together():
    stage, message = rejected(config({"schedulerName": "a", "percentageOfNodesToScore": 200},
                                     parallelism=-1, percentageOfNodesToScore=-5))
    assert stage == "validation"
    assert message == ("[parallelism: Invalid value: -1: should be an integer value greater than "
                       "zero, profiles[0].percentageOfNodesToScore: Invalid value: 200: not in "
                       "valid range [0-100], percentageOfNodesToScore: Invalid value: -5: not in "
                       "valid range [0-100]]")


def test_ignored_resource_must_be_a_label_name():
    stage, message = rejected(config(args_profile("NodeResourcesFit", {
        "ignoredResources": ["a/b/c"]})))
    assert stage == "framework"
    assert message == (
        f'{FW}initializing plugin "NodeResourcesFit": ignoredResources[0]: Invalid value: '
        "\"a/b/c\": a valid label key must consist of alphanumeric characters, '-', '_' or '.', "
        "and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  "
        "or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') "
        "with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")


def test_rtcr_without_shape_is_rejected_where_upstream_panics():
    stage, message = rejected(config(args_profile("NodeResourcesFit", {
        "scoringStrategy": {"type": "RequestedToCapacityRatio"}})))
    assert stage == "framework"
    assert message.startswith(f'{FW}initializing plugin "NodeResourcesFit": ')


def test_plugins_ksched_lacks_are_unsupported():
    with pytest.raises(UnsupportedFeatureError):
        load_config(config({"plugins": {"multiPoint": {"enabled": [
            {"name": "NodeDeclaredFeatures"}]}}}))
    # GangScheduling holds pods at PreEnqueue, Reserve and Permit, which ksched now runs.
    with pytest.raises(UnsupportedFeatureError,
                       match="plugin GangScheduling is not implemented by ksched"):
        load_config(config({"plugins": {"multiPoint": {"enabled": [
            {"name": "GangScheduling"}]}}}))


def test_args_of_unused_plugins_are_not_constructed():
    """NewFramework only builds plugins in use; Fit's args are only checked by NewFit."""
    cfg = load_config(config({
        "plugins": {"multiPoint": {"disabled": [{"name": "NodeResourcesFit"}]}},
        "pluginConfig": [{"name": "NodeResourcesFit",
                          "args": {"scoringStrategy": {"type": "Balanced"}}},
                         {"name": "TaintToleration", "args": {"anything": 1}}]}))
    assert "NodeResourcesFit" not in cfg.profiles[0].plugins["filter"]
    assert "NodeResourcesFit" not in cfg.profiles[0].args


def test_wrong_api_version_is_a_decode_error():
    stage, message = rejected({"apiVersion": "kubescheduler.config.k8s.io/v1beta3", "kind": KIND})
    assert stage == "decode"
    assert message.startswith('no kind "KubeSchedulerConfiguration" is registered for version '
                              '"kubescheduler.config.k8s.io/v1beta3" in scheme ')


def test_extenders_are_validated_then_unsupported():
    stage, message = rejected(config(extenders=[
        {"urlPrefix": "http://a", "prioritizeVerb": "p"},
        {"urlPrefix": "http://b", "bindVerb": "b"}, {"urlPrefix": "http://c", "bindVerb": "b"}]))
    assert stage == "validation"
    assert message == ('[extenders[0].weight: Invalid value: 0: must have a positive weight '
                       'applied to it, extenders: Invalid value: "found 2 extenders implementing '
                       'bind": only one extender can implement bind]')
    with pytest.raises(UnsupportedFeatureError):
        load_config(config(extenders=[{"urlPrefix": "http://a"}]))


# =========================================================================== files


YAML_CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
percentageOfNodesToScore: 50
profiles:
  - schedulerName: default-scheduler
  - schedulerName: bin-packing
    percentageOfNodesToScore: 20
    plugins:
      score:
        disabled:
          - name: NodeResourcesBalancedAllocation
        enabled:
          - name: NodeResourcesFit
            weight: 5
    pluginConfig:
      - name: NodeResourcesFit
        args:
          scoringStrategy:
            type: RequestedToCapacityRatio
            resources:
              - name: cpu
                weight: 2
            requestedToCapacityRatio:
              shape:
                - {utilization: 0, score: 0}
                - {utilization: 100, score: 10}
"""


def test_yaml_file(tmp_path):
    path = tmp_path / "scheduler.yaml"
    path.write_text(YAML_CONFIG)
    cfg = load_config(path)
    assert cfg.percentage_of_nodes_to_score == 50
    assert [p.scheduler_name for p in cfg.profiles] == ["default-scheduler", "bin-packing"]
    packing = cfg.profile_for("bin-packing")
    assert packing.percentage_of_nodes_to_score == 20
    assert packing.plugins["score"][0] == "NodeResourcesFit"
    assert packing.weights["NodeResourcesFit"] == 5
    assert "NodeResourcesBalancedAllocation" not in packing.plugins["score"]
    assert packing.args["NodeResourcesFit"] == NodeResourcesFitArgs(
        "RequestedToCapacityRatio", (("cpu", 2),), ((0, 0), (100, 10)))
    assert load_config(str(path)) == cfg


def test_json_file_and_duplicate_fields(tmp_path):
    path = tmp_path / "scheduler.json"
    path.write_text(json.dumps(config(parallelism=4)))
    assert load_config(path).parallelism == 4
    path.write_text('{"apiVersion": "%s", "kind": "%s", "parallelism": 1, "parallelism": 2}'
                    % (API_VERSION, KIND))
    assert rejected(path) == ("decode", 'strict decoding error: duplicate field "parallelism"')


def test_yaml_duplicate_keys(tmp_path):
    path = tmp_path / "scheduler.yaml"
    path.write_text(f"apiVersion: {API_VERSION}\nkind: {KIND}\nparallelism: 1\nparallelism: 2\n")
    assert rejected(path) == ("decode", 'strict decoding error: yaml: unmarshal errors:\n  '
                                        'line 4: key "parallelism" already set in map')


def test_yaml_unknown_fields_are_reported_in_sorted_key_order(tmp_path):
    path = tmp_path / "scheduler.yaml"
    path.write_text(f"zeta: 1\napiVersion: {API_VERSION}\nalpha: 2\nkind: {KIND}\n")
    assert rejected(path) == ("decode", 'strict decoding error: unknown field "alpha", '
                                        'unknown field "zeta"')


def test_yaml_is_read_as_go_yaml_v2_reads_it(tmp_path):
    """YAML 1.1 scalars, merge keys and anchors, as ``sigs.k8s.io/yaml`` decodes them."""
    path = tmp_path / "scheduler.yaml"
    path.write_text(f"apiVersion: {API_VERSION}\nkind: {KIND}\nparallelism: 1e1\n"
                    "enableProfiling: off\npodMaxBackoffSeconds: 0x10\n"
                    "leaderElection:\n  <<: &le {leaderElect: no}\n"
                    "profiles:\n- {schedulerName: a, percentageOfNodesToScore: &pct 0_50}\n"
                    "- {schedulerName: b, <<: {percentageOfNodesToScore: *pct}}\n")
    cfg = load_config(path)
    assert (cfg.parallelism, cfg.pod_max_backoff_seconds) == (10, 16)
    assert [(p.scheduler_name, p.percentage_of_nodes_to_score) for p in cfg.profiles] == [
        ("a", 40), ("b", 40)]  # 0_50 is octal 050, as strconv.ParseInt(s, 0, 64) reads it


@pytest.mark.parametrize("name, data", [
    ("scheduler.yaml.gz", gzip.compress(YAML_CONFIG.encode(), mtime=0)),
    ("scheduler.json.gz", gzip.compress(json.dumps(config(parallelism=4)).encode(), mtime=0)),
    ("utf16.yaml", YAML_CONFIG.encode("utf-16")),
    ("bom.yaml", b"\xef\xbb\xbf" + YAML_CONFIG.encode()),
    ("crlf.yaml", YAML_CONFIG.replace("\n", "\r\n").encode()),
    ("two-documents.yaml", (YAML_CONFIG + "---\nkind: Anything\n").encode()),
])
def test_config_file_forms(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data)
    cfg = load_config(path)
    assert cfg.parallelism == (4 if "json" in name else 16)
    if "json" not in name:  # yaml.Unmarshal reads the first document only
        assert [p.scheduler_name for p in cfg.profiles] == ["default-scheduler", "bin-packing"]


def test_python_objects_are_read_as_their_json(tmp_path):
    import numpy as np

    from ksched.api import FrozenDict

    source = FrozenDict({"apiVersion": API_VERSION, "kind": KIND, "parallelism": np.int32(4),
                         "profiles": ({"schedulerName": "a", "percentageOfNodesToScore": 5},)})
    before = repr(source)
    cfg = load_config(source)
    assert cfg.parallelism == 4 and cfg.profiles[0].percentage_of_nodes_to_score == 5
    assert repr(source) == before


def test_load_config_refuses_what_is_not_a_configuration(tmp_path):
    for source, shown in (([], "list"), (None, "NoneType"), (b"kind: x", "bytes")):
        with pytest.raises(ConfigLoadError, match=f"or a file path, got {shown}$"):
            load_config(source)
    with pytest.raises(ConfigLoadError) as info:
        load_config(tmp_path / "missing.yaml")
    assert (info.value.stage, str(info.value)) == (
        "read", f"open {tmp_path / 'missing.yaml'}: no such file or directory")


def test_out_of_tree_factory_errors_are_framework_errors():
    from ksched.plugins import IN_TREE_REGISTRY

    def factory(args):
        raise ValueError("needs a GPU")

    registry = IN_TREE_REGISTRY.merged({"Gpu": factory})
    cfg = config({"schedulerName": "default-scheduler",
                  "plugins": {"filter": {"enabled": [{"name": "Gpu"}]}}})
    assert rejected_with(cfg, registry) == (
        "framework", FW + 'initializing plugin "Gpu": ValueError: needs a GPU')
    with pytest.raises(ConfigLoadError, match="expected a ksched Registry"):
        load_config(cfg, registry=dict(registry))


def test_a_plugins_extension_points_are_its_methods():
    """What a plugin extends is asked of the plugin: an out-of-tree one's methods, so enabling
    it at a point it has no method for is upstream's error; only the in-tree plugins ksched
    does not implement at all are a table."""
    from ksched.config.framework import UNIMPLEMENTED_IN_TREE_PLUGINS, using_registry
    from ksched.plugins import IN_TREE_REGISTRY

    class Gate:
        NAME = "Gate"

        def pre_enqueue(self, pod: Any) -> None: ...

        def permit(self, cycle: Any, node: str) -> None: ...

    registry = IN_TREE_REGISTRY.merged({"Gate": Gate})
    with using_registry(registry):
        assert plugin_extension_points("Gate") == {"preEnqueue", "permit"}
    assert plugin_extension_points("Gate") is None
    assert not set(UNIMPLEMENTED_IN_TREE_PLUGINS) & set(IN_TREE_REGISTRY)
    cfg = config({"schedulerName": "default-scheduler",
                  "plugins": {"reserve": {"enabled": [{"name": "Gate"}]}}})
    assert rejected_with(cfg, registry) == (
        "framework", FW + 'plugin "Gate" does not extend ReservePlugin plugin')


def rejected_with(cfg: Any, registry: Any) -> tuple[str, str]:
    with pytest.raises(ConfigLoadError) as info:
        load_config(cfg, registry=registry)
    return info.value.stage, str(info.value)


# =========================================================================== Go formats


@pytest.mark.parametrize("text, ns, shown", [
    ("15s", 15 * 10**9, "15s"), ("1m30s", 90 * 10**9, "1m30s"), ("1.5h", 5400 * 10**9, "1h30m0s"),
    ("-2ms", -2 * 10**6, "-2ms"), ("0", 0, "0s"), ("1500us", 1500 * 10**3, "1.5ms"),
])
def test_go_durations(text, ns, shown):
    assert parse_go_duration(text) == ns
    assert go_duration(ns) == shown


def test_invalid_duration_is_a_decode_error():
    assert rejected(config(leaderElection={"leaseDuration": "soon"})) == (
        "decode", 'time: invalid duration "soon"')
