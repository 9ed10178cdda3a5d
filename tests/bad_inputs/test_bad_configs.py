"""Bad ``KubeSchedulerConfiguration`` inputs: every one refused by ``ksched.load_config`` with a
``KschedError`` in kube-scheduler's words where it has some, within seconds, never a raw Python
exception, a hang or a silent change. Files (YAML, JSON, gzip, binary, truncated, bombs) and
Python objects (wrong types, NaN, huge numbers, cycles, deep nesting, bad registries), a few
through ``ksched schedule CLUSTER --config FILE``, and fuzzing of every field of a valid one."""

from __future__ import annotations

import copy
import gzip
import math
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ksched import load_config
from ksched.config import API_VERSION, KIND, ConfigLoadError, SchedulerConfig
from ksched.errors import ConfigError, KschedError, UnsupportedFeatureError
from ksched.plugins import IN_TREE_REGISTRY
from ksched.profile import Profile
from tests.refusals import TINY_CLUSTER as CLUSTER
from tests.refusals import cli_refused, refused

HEAD = f"apiVersion: {API_VERSION}\nkind: {KIND}\n"
JSON_HEAD = f'{{"apiVersion": "{API_VERSION}", "kind": "{KIND}"'
FW = "creating profile for scheduler name default-scheduler: "
P = "profiles[0].pluginConfig[0].args"


def config(**top: Any) -> dict[str, Any]:
    return {"apiVersion": API_VERSION, "kind": KIND, **top}


def profile(**fields: Any) -> dict[str, Any]:
    return config(profiles=[{"schedulerName": "default-scheduler", **fields}])


def args(name: str, value: Any) -> dict[str, Any]:
    return profile(pluginConfig=[{"name": name, "args": value}])


def score(*plugins: dict[str, Any]) -> dict[str, Any]:
    return profile(plugins={"score": {"enabled": list(plugins)}})


def _deep(depth: int, leaf: Any = 1) -> Any:
    for _ in range(depth):
        leaf = {"x": leaf}
    return leaf


def _deep_list(depth: int) -> Any:
    leaf: Any = []
    for _ in range(depth):
        leaf = [leaf]
    return leaf


def _cycle() -> dict[str, Any]:
    inner: dict[str, Any] = {}
    inner["again"] = inner
    return inner


def _shared_bomb() -> list:
    value: list = ["lol"]
    for _ in range(9):  # 9**9 strings once expanded, 10 lists in memory
        value = [value] * 9
    return value


def _laughs(levels: int = 9) -> str:
    text = "      a: &a [" + ",".join(["lol"] * 9) + "]\n"
    for i in range(1, levels):
        name, prev = chr(ord("a") + i), chr(ord("a") + i - 1)
        text += f"      {name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]\n"
    return text


# =========================================================================== Python objects

#: (source, fragment of the message)
OBJECTS = [
    # ------------------------------------------------------------------ not a configuration
    pytest.param([], "expected a KubeSchedulerConfiguration mapping or a file path, got list",
                 id="a-list"),
    pytest.param(3, "expected a KubeSchedulerConfiguration mapping or a file path, got int",
                 id="an-int"),
    pytest.param(None, "or a file path, got NoneType", id="none"),
    pytest.param(HEAD.encode(), "or a file path, got bytes", id="bytes"),
    pytest.param(3.5, "or a file path, got float", id="a-float"),
    # ------------------------------------------------------------------ not JSON data
    pytest.param({**config(), 1: 2}, "KubeSchedulerConfiguration: map key 1 (int) is not a "
                                     "string", id="int-key"),
    pytest.param(config(profiles=[{("a", "b"): 1}]),
                 "profiles[0]: map key ('a', 'b') (tuple) is not a string", id="tuple-key"),
    pytest.param(config(parallelism=float("nan")), "parallelism: json: unsupported value: NaN",
                 id="nan"),
    pytest.param(config(parallelism=np.float64("nan")), "parallelism: json: unsupported value: "
                                                        "NaN", id="numpy-nan"),
    pytest.param(config(clientConnection={"qps": float("inf")}),
                 "clientConnection.qps: json: unsupported value: +Inf", id="inf"),
    pytest.param(config(clientConnection={"qps": -math.inf}), "json: unsupported value: -Inf",
                 id="minus-inf"),
    pytest.param(config(profiles={"default-scheduler"}), "profiles: json: unsupported type: set",
                 id="a-set"),
    pytest.param(config(parallelism=Decimal(4)), "parallelism: json: unsupported type: Decimal",
                 id="decimal"),
    pytest.param(config(parallelism=object()), "json: unsupported type: object", id="object"),
    pytest.param(args("Custom", _cycle()), "args.again: value contains itself", id="cycle"),
    pytest.param(args("Custom", _deep(5000)), "exceeded max depth of 100", id="deep-dict"),
    pytest.param(config(leaderElection=_deep_list(5000)), "exceeded max depth of 100",
                 id="deep-list"),
    pytest.param(args("Custom", _shared_bomb()), "value contains excessive aliasing",
                 id="shared-reference-bomb"),
    # ------------------------------------------------------------------ wrong Go types
    pytest.param(config(parallelism=2.5), "json: cannot unmarshal number 2.5 into Go struct field "
                                          "KubeSchedulerConfiguration.parallelism of type int32",
                 id="float-for-int"),
    pytest.param(config(parallelism=True), "json: cannot unmarshal bool into Go struct field "
                                           "KubeSchedulerConfiguration.parallelism of type int32",
                 id="bool-for-int"),
    pytest.param(config(parallelism=2**31), "json: cannot unmarshal number 2147483648 into Go "
                                            "struct field KubeSchedulerConfiguration.parallelism "
                                            "of type int32", id="int32-overflow"),
    pytest.param(config(podMaxBackoffSeconds=2**64), "cannot unmarshal number "
                                                     "18446744073709551616 into Go struct field "
                                                     "KubeSchedulerConfiguration."
                                                     "podMaxBackoffSeconds of type int64",
                 id="beyond-int64"),
    pytest.param(config(clientConnection={"qps": "fast"}), "cannot unmarshal string into Go "
                                                           "struct field ClientConnection"
                                                           "Configuration.clientConnection.qps "
                                                           "of type float32", id="string-qps"),
    pytest.param(config(profiles={"a": 1}), "cannot unmarshal object into Go struct field "
                                            "KubeSchedulerConfiguration.profiles of type "
                                            "[]v1.KubeSchedulerProfile", id="profiles-map"),
    pytest.param(config(profiles=[{"schedulerName": 5}]), "cannot unmarshal number into Go "
                                                          "struct field KubeSchedulerProfile."
                                                          "profiles.schedulerName of type string",
                 id="int-scheduler-name"),
    pytest.param(config(leaderElection={"leaseDuration": 5}), "cannot unmarshal number into Go "
                                                              "struct field LeaderElection",
                 id="int-duration"),
    pytest.param(config(leaderElection={"leaseDuration": "soon"}),
                 'time: invalid duration "soon"', id="bad-duration"),
    pytest.param({"apiVersion": 1, "kind": KIND}, "couldn't get version/kind; json parse error: "
                                                  "json: cannot unmarshal number into Go struct "
                                                  "field .apiVersion of type string",
                 id="int-api-version"),
    pytest.param({"apiVersion": API_VERSION}, "Object 'Kind' is missing in", id="no-kind"),
    pytest.param({"apiVersion": "v1", "kind": "Pod"}, 'no kind "Pod" is registered for version '
                                                      '"v1"', id="a-pod"),
    pytest.param(config(bogus=1), 'strict decoding error: unknown field "bogus"',
                 id="unknown-field"),
    # ------------------------------------------------------------------ plugin args
    pytest.param(args("NodeResourcesFit", [1]), "decoding args for plugin NodeResourcesFit: "
                                                "couldn't get version/kind; json parse error: "
                                                "json: cannot unmarshal array", id="args-list"),
    pytest.param(args("NodeResourcesFit", "x"), "json: cannot unmarshal string into Go value",
                 id="args-string"),
    pytest.param(args("InterPodAffinity", {"hardPodAffinityWeight": "x"}),
                 "cannot unmarshal string into Go struct field InterPodAffinityArgs."
                 "hardPodAffinityWeight of type int32", id="args-field-type"),
    pytest.param(args("InterPodAffinity", {"hardPodAffinityWeight": 101}),
                 f"{P}.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]",
                 id="args-range"),
    pytest.param(args("NodeResourcesFit", {"kind": "InterPodAffinityArgs"}),
                 "args for plugin NodeResourcesFit were not of type NodeResourcesFitArgs",
                 id="args-kind"),
    pytest.param(args("NodeResourcesFit", {"scoringStrategy": {"type": "MostAllocated",
                                                               "resources": [{"name": "cpu",
                                                                              "weight": 101}]}}),
                 'initializing plugin "NodeResourcesFit": scoringStrategy.resources[0].weight: '
                 "Invalid value: 101: resource weight of cpu not in valid range (0, 100]",
                 id="fit-weight"),
    pytest.param(args("DynamicResources", {"filterTimeout": "-1s"}),
                 f'{P}.filterTimeout: Invalid value: "-1s": must be zero or positive',
                 id="negative-timeout"),
    # ------------------------------------------------------------------ values out of range
    pytest.param(config(percentageOfNodesToScore=101), "percentageOfNodesToScore: Invalid "
                                                       "value: 101: not in valid range [0-100]",
                 id="percentage-101"),
    pytest.param(config(percentageOfNodesToScore=-1), "Invalid value: -1: not in valid range "
                                                      "[0-100]", id="percentage-negative"),
    pytest.param(profile(percentageOfNodesToScore=150), "profiles[0].percentageOfNodesToScore: "
                                                        "Invalid value: 150", id="profile-150"),
    pytest.param(config(parallelism=0), "parallelism: Invalid value: 0: should be an integer "
                                        "value greater than zero", id="parallelism-0"),
    pytest.param(score({"name": "ImageLocality", "weight": -1}),
                 FW + "total score of Score plugins could overflow", id="negative-weight"),
    pytest.param(score({"name": "ImageLocality", "weight": 2**31}),
                 "cannot unmarshal number 2147483648 into Go struct field Plugin.profiles.plugins"
                 ".score.enabled.weight of type int32", id="weight-int32"),
    pytest.param(score({"name": "Nope"}), FW + 'ScorePlugin "Nope" does not exist',
                 id="unknown-plugin"),
    pytest.param(config(profiles=[{"schedulerName": "a"}, {"schedulerName": "a"}]),
                 "profiles[1].schedulerName: Duplicate value", id="duplicate-profile"),
]


@pytest.mark.parametrize("source, match", OBJECTS)
def test_bad_objects(source, match):
    before = _snapshot(source)
    error = refused(load_config, source, match=match)
    assert isinstance(error, ConfigLoadError)
    assert error.stage in ("decode", "validation", "framework")
    assert _snapshot(source) == before  # never mutated


def _snapshot(value: Any) -> str | None:
    """``repr(value)``, or None for the bombs whose repr would never end."""
    stack, seen = [value], 0
    while stack and seen < 10_000:
        item = stack.pop()
        seen += 1
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    try:
        return repr(value) if seen < 10_000 else None
    except RecursionError:  # the 5000-deep ones
        return None


def test_extenders_are_refused_as_unsupported():
    refused(load_config, config(extenders=[{"urlPrefix": "http://x"}]),
            match="scheduler extenders are not supported", error=UnsupportedFeatureError)


# =========================================================================== registries


def _raising_factory(args: Any) -> Any:
    raise RuntimeError("no GPU here")


REGISTRIES = [
    pytest.param("in-tree", "registry: expected a ksched Registry", id="string"),
    pytest.param(dict(IN_TREE_REGISTRY), "expected a ksched Registry (e.g. IN_TREE_REGISTRY."
                                         "merged({...})), got dict", id="dict"),
    pytest.param(lambda: IN_TREE_REGISTRY.merged({"Boom": _raising_factory}),
                 FW + 'initializing plugin "Boom": RuntimeError: no GPU here',
                 id="factory-raises"),
    pytest.param(lambda: IN_TREE_REGISTRY.merged({"Inert": lambda args: object()}),
                 FW + 'plugin "Inert" does not extend FilterPlugin plugin', id="no-methods"),
    pytest.param(lambda: IN_TREE_REGISTRY.merged({"Bad": 3}),
                 "plugin Bad: the factory must be callable, got int", id="not-callable"),
    pytest.param(lambda: IN_TREE_REGISTRY.merged({"": print}),
                 "a plugin name must be a non-empty string, got ''", id="empty-name"),
    pytest.param(lambda: IN_TREE_REGISTRY.merged(["Boom"]),
                 "plugins must be given as a mapping of names to factories, got list",
                 id="list-of-plugins"),
]


@pytest.mark.parametrize("registry, match", REGISTRIES)
def test_bad_registries(registry, match):
    def load() -> Any:
        made = registry() if callable(registry) else registry
        names = [n for n in ("Boom", "Inert") if n in made] or ["Boom"]
        cfg = profile(plugins={"filter": {"enabled": [{"name": n} for n in names]}})
        return load_config(cfg, registry=made)

    refused(load, match=match)


# =========================================================================== Profile records

PROFILES = [
    pytest.param({"plugins": "NodeResourcesFit"}, "profile: plugins: expected a mapping of "
                                                  "extension points to plugin names, got str",
                 id="plugins-string"),
    pytest.param({"plugins": {"score": "ImageLocality"}}, "profile: plugins.score: expected a "
                                                          "sequence of plugin names, got str",
                 id="point-string"),
    pytest.param({"plugins": {"scroe": ()}}, "unknown extension point 'scroe'", id="bad-point"),
    pytest.param({"plugins": {"filter": [None]}}, "plugins.filter: plugin names must be "
                                                  "non-empty strings, got None", id="none-name"),
    pytest.param({"weights": {"ImageLocality": 1.5}}, "weights['ImageLocality']: expected an "
                                                      "int64 weight, got 1.5", id="float-weight"),
    pytest.param({"weights": {"ImageLocality": 2**63}}, "expected an int64 weight",
                 id="huge-weight"),
    pytest.param({"weights": [("ImageLocality", 1)]}, "profile: weights: expected a mapping",
                 id="weights-list"),
    pytest.param({"args": {1: None}}, "profile: args: plugin names must be strings, got 1",
                 id="args-key"),
    pytest.param({"scheduler_name": ""}, "profile: schedulerName: expected a non-empty string",
                 id="empty-name"),
    pytest.param({"percentage_of_nodes_to_score": 101},
                 "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]",
                 id="percentage"),
    pytest.param({"percentage_of_nodes_to_score": 50.0},
                 "percentageOfNodesToScore: expected an integer, got 50.0",
                 id="float-percentage"),
]


@pytest.mark.parametrize("fields, match", PROFILES)
def test_bad_profile_records(fields, match):
    refused(Profile, match=match, error=ConfigError, **fields)


# =========================================================================== files

#: (file name, content, fragment of the message); "{path}" stands for the file's path.
FILES = [
    pytest.param("empty.yaml", "", "Object 'Kind' is missing in ''", id="empty"),
    pytest.param("list.yaml", "- a\n- b\n", "json: cannot unmarshal array into Go value of type "
                                            "struct", id="yaml-list"),
    pytest.param("nonutf8.yaml", HEAD.encode() + b"parallelism: \xff\n",
                 "yaml: line 3: invalid leading UTF-8 octet", id="non-utf8"),
    pytest.param("cut-utf8.yaml", HEAD.encode() + b"profiles: \xe2\x82",
                 "yaml: line 3: incomplete UTF-8 octet sequence", id="truncated-utf8"),
    pytest.param("binary.yaml", bytes(range(256)), "yaml: line 1: control characters are not "
                                                   "allowed", id="binary"),
    pytest.param("zipped.yaml", gzip.compress(HEAD.encode(), mtime=0),
                 "(gzip-compressed? name the file *.gz)", id="gzip-without-gz"),
    pytest.param("bad.yaml.gz", b"not gzip at all", "read {path}: gzip: invalid header",
                 id="gz-not-gzip"),
    pytest.param("cut.yaml.gz", gzip.compress((HEAD * 40).encode(), mtime=0)[:-20],
                 "read {path}: unexpected EOF", id="gz-truncated"),
    pytest.param("crc.yaml.gz", gzip.compress(HEAD.encode(), mtime=0)[:-8] + b"\0" * 4
                 + gzip.compress(HEAD.encode(), mtime=0)[-4:], "gzip: invalid checksum",
                 id="gz-crc"),
    pytest.param("empty.yaml.gz", b"", "read {path}: gzip: empty file", id="gz-empty"),
    pytest.param("cut.yaml", HEAD + 'profiles:\n- schedulerName: "abc',
                 "yaml: line 4: found unexpected end of stream", id="truncated-yaml"),
    pytest.param("cut.json", JSON_HEAD + ', "parallelism": 1',
                 "couldn't get version/kind; json parse error: unexpected end of JSON input",
                 id="truncated-json"),
    pytest.param("nan.json", JSON_HEAD + ', "parallelism": NaN}',
                 "json parse error: invalid character 'N' looking for "
                                        "beginning of value", id="json-nan"),
    pytest.param("pair.json", '{"apiVersion": "x" "kind": "y"}', "invalid character '\"' after "
                                                                 "object key:value pair",
                 id="json-syntax"),
    pytest.param("dup.json", JSON_HEAD + ', "parallelism": 1, "parallelism": 2}',
                 'strict decoding error: duplicate field "parallelism"', id="json-duplicate"),
    pytest.param("deep.json", JSON_HEAD + ', "x": ' + "[" * 5000 + "]" * 5000 + "}",
                 "json parse error: exceeded max depth of 100 at line 1", id="json-deep"),
    pytest.param("bomb.yaml", HEAD + "profiles:\n- pluginConfig:\n  - name: Custom\n    args:\n"
                 + _laughs(), "yaml: document contains excessive aliasing", id="billion-laughs"),
    pytest.param("self.yaml", HEAD + "profiles: &p [*p]\n", "yaml: anchor 'p' value contains "
                                                            "itself", id="self-alias"),
    pytest.param("anchor.yaml", HEAD + "profiles: *p\n", "yaml: unknown anchor 'p' referenced",
                 id="unknown-anchor"),
    pytest.param("deepflow.yaml", HEAD + "profiles: " + "[" * 5000 + "]" * 5000 + "\n",
                 "yaml: line 3: exceeded max depth of 100", id="deep-flow"),
    pytest.param("deepblock.yaml", HEAD + "".join("  " * i + f"k{i}:\n" for i in range(150)),
                 "yaml: line 103: exceeded max depth of 100", id="deep-block"),
    pytest.param("chain.yaml", HEAD + "x0: &x0 [1]\n" + "".join(
        f"x{i + 1}: &x{i + 1} [*x{i}]\n" for i in range(150)), "exceeded max depth of 100",
        id="deep-alias-chain"),
    pytest.param("nan.yaml", HEAD + "clientConnection:\n  qps: .nan\n",
                 "json: unsupported value: NaN", id="yaml-nan"),
    pytest.param("nullkey.yaml", HEAD + "~: 1\n", "unsupported map key of type: <nil>, key: "
                                                  "<nil>, value: 1", id="null-key"),
    pytest.param("listkey.yaml", HEAD + "? [a]\n: 1\n", "yaml: invalid map key: []interface "
                                                        '{}{"a"}', id="list-key"),
    pytest.param("tab.yaml", HEAD + "\tparallelism: 1\n", "found a tab character that "
                                                          "violates indentation", id="tab"),
    pytest.param("indent.yaml", HEAD + "leaderElection:\n  leaderElect: true\n resourceLock: x\n",
                 "yaml: line 4: did not find expected key", id="bad-indent"),
    pytest.param("tag.yaml", HEAD + "parallelism: !!int many\n",
                 "yaml: cannot decode !!str `many` as a !!int", id="bad-tag"),
    pytest.param("binary-tag.yaml", HEAD + "profiles: !!binary '***'\n",
                 "yaml: !!binary value contains invalid base64 data", id="bad-binary"),
    pytest.param("merge.yaml", HEAD + "leaderElection:\n  <<: 5\n",
                 "yaml: map merge requires map or sequence of maps as the value",
                 id="merge-scalar"),
    pytest.param("dupkey.yaml", HEAD + "parallelism: 1\nparallelism: 2\n",
                 'strict decoding error: yaml: unmarshal errors:\n  line 4: key "parallelism" '
                 "already set in map", id="duplicate-key"),
    pytest.param("override.yaml", HEAD + "leaderElection:\n  <<: {leaderElect: true}\n"
                                         "  leaderElect: false\n",
                 'line 5: key "leaderElect" already set in map', id="merge-override"),
    pytest.param("yes.yaml", HEAD + "profiles:\n- schedulerName: y\n",
                 "cannot unmarshal bool into Go struct field KubeSchedulerProfile.profiles."
                 "schedulerName of type string", id="y-is-a-bool"),
    pytest.param("big.yaml", HEAD + "parallelism: 99999999999999999999999\n",
                 "cannot unmarshal number 1e+23 into Go struct field KubeSchedulerConfiguration."
                 "parallelism of type int32", id="beyond-uint64"),
    pytest.param("configmap.yaml", "apiVersion: v1\nkind: ConfigMap\n---\n" + HEAD,
                 'no kind "ConfigMap" is registered for version "v1"', id="first-document"),
    pytest.param("percentage.yaml", HEAD + "percentageOfNodesToScore: 101\n",
                 "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]",
                 id="yaml-percentage"),
]


def _write(folder: Path, name: str, content: str | bytes) -> Path:
    path = folder / name
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return path


@pytest.mark.parametrize("name, content, match", FILES)
def test_bad_files(tmp_path, name, content, match):
    path = _write(tmp_path, name, content)
    error = refused(load_config, path, match=match.replace("{path}", str(path)))
    assert isinstance(error, ConfigLoadError)
    want = "read" if name.endswith(".gz") else "validation" if "Invalid" in match else "decode"
    assert error.stage == want


def test_missing_file_and_directory(tmp_path):
    missing = tmp_path / "missing.yaml"
    refused(load_config, missing, match=f"open {missing}: no such file or directory")
    refused(load_config, str(tmp_path), match=f"read {tmp_path}: is a directory")


def test_a_300_byte_alias_bomb_is_refused_at_once(tmp_path):
    bomb = HEAD + "x:\n" + _laughs().replace("      ", "  ")
    assert len(bomb) < 450
    path = _write(tmp_path, "bomb.yaml", bomb)
    refused(load_config, path, match="yaml: document contains excessive aliasing")


# =========================================================================== command line


CLI = [
    pytest.param("bomb.yaml", HEAD + "x:\n" + _laughs(), "document contains excessive aliasing",
                 id="bomb"),
    pytest.param("nonutf8.yaml", HEAD.encode() + b"parallelism: \xff\n",
                 "yaml: line 3: invalid leading UTF-8 octet", id="non-utf8"),
    pytest.param("bad.yaml.gz", b"plain", "gzip: invalid header", id="bad-gzip"),
    pytest.param("deep.yaml", HEAD + "x: " + "[" * 3000 + "]" * 3000 + "\n",
                 "exceeded max depth of 100", id="deep"),
    pytest.param("cut.json", '{"apiVersion": "x"', "unexpected end of JSON input", id="cut-json"),
    pytest.param("missing.yaml", None, "missing.yaml: no such file or directory", id="missing"),
]


@pytest.mark.parametrize("name, content, match", CLI)
def test_bad_config_files_on_the_command_line(tmp_path, name, content, match):
    cluster = _write(tmp_path, "cluster.yaml", CLUSTER)
    path = tmp_path / name if content is None else _write(tmp_path, name, content)
    cli_refused(["schedule", str(cluster), "--config", str(path)], match)


# =========================================================================== fuzzing

#: A valid configuration touching every decoded type: the fuzzer replaces, removes and adds
#: values anywhere in it.
VALID = config(
    parallelism=8, percentageOfNodesToScore=40, podInitialBackoffSeconds=1,
    podMaxBackoffSeconds=10,
    leaderElection={"leaderElect": True, "leaseDuration": "15s", "renewDeadline": "10s",
                    "retryPeriod": "2s", "resourceLock": "leases"},
    clientConnection={"qps": 50, "burst": 100},
    profiles=[
        {"schedulerName": "default-scheduler", "percentageOfNodesToScore": 30,
         "plugins": {"score": {"enabled": [{"name": "NodeResourcesFit", "weight": 5}],
                               "disabled": [{"name": "ImageLocality"}]},
                     "multiPoint": {"enabled": [{"name": "PrioritySort"}]},
                     "filter": {"disabled": [{"name": "*"}],
                                "enabled": [{"name": "NodeResourcesFit"}]}},
         "pluginConfig": [
             {"name": "NodeResourcesFit", "args": {
                 "scoringStrategy": {"type": "RequestedToCapacityRatio",
                                     "resources": [{"name": "cpu", "weight": 2}],
                                     "requestedToCapacityRatio": {"shape": [
                                         {"utilization": 0, "score": 0},
                                         {"utilization": 100, "score": 10}]}},
                 "ignoredResources": ["a"], "ignoredResourceGroups": ["b"]}},
             {"name": "PodTopologySpread", "args": {
                 "defaultingType": "List",
                 "defaultConstraints": [{"maxSkew": 1, "topologyKey": "zone",
                                         "whenUnsatisfiable": "ScheduleAnyway"}]}},
             {"name": "NodeAffinity", "args": {"addedAffinity": {
                 "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                     {"matchExpressions": [{"key": "a", "operator": "In", "values": ["b"]}],
                      "matchFields": [{"key": "metadata.name", "operator": "In",
                                       "values": ["n"]}]}]},
                 "preferredDuringSchedulingIgnoredDuringExecution": [
                     {"weight": 3, "preference": {"matchExpressions": [
                         {"key": "a", "operator": "Gt", "values": ["3"]}]}}]}}},
             {"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 3,
                                                   "ignorePreferredTermsOfExistingPods": True}},
             {"name": "DefaultPreemption", "args": {"minCandidateNodesPercentage": 5,
                                                    "minCandidateNodesAbsolute": 50}},
             {"name": "NodeResourcesBalancedAllocation",
              "args": {"resources": [{"name": "cpu", "weight": 1}]}},
             {"name": "VolumeBinding", "args": {"bindTimeoutSeconds": 100}},
             {"name": "DynamicResources", "args": {"filterTimeout": "5s"}},
         ]},
        {"schedulerName": "second",
         "plugins": {"score": {"enabled": [{"name": "ImageLocality", "weight": 3}]}}},
    ],
)


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            out += _paths(item, prefix + (key,))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            out += _paths(item, prefix + (i,))
    return out


PATHS = _paths(VALID)
WORDS = ["", "*", "In", "Gt", "Exists", "System", "List", "MostAllocated", "LeastAllocated",
         "RequestedToCapacityRatio", "NodeResourcesFit", "PrioritySort", "ImageLocality",
         "DefaultBinder", "InterPodAffinity", "default-scheduler", "second", "5s", "-1s", "1h",
         "soon", "a/b/c", "-a", "x" * 70, "memory", "leases", "DoNotSchedule", "EBSLimits",
         API_VERSION, KIND, "NodeResourcesFitArgs", "v1"]
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 120), st.integers(-2**70, 2**70),
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(WORDS), st.text(max_size=6))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3),
    st.dictionaries(st.sampled_from(["name", "weight", "enabled", "args", "type", "kind",
                                     "apiVersion", "key", "values"]) | st.text(max_size=4),
                    inner, max_size=3)), max_leaves=8)


def _same_kind(current: Any) -> st.SearchStrategy:
    """Values of the kind already there, so that validation and the framework are reached."""
    if isinstance(current, bool):
        return st.booleans()
    if isinstance(current, int):
        return st.integers(-5, 120) | st.integers(-2**64, 2**64)
    if isinstance(current, str):
        return st.sampled_from(WORDS) | st.text(max_size=5)
    if isinstance(current, list) and current:
        return st.lists(st.sampled_from(current), max_size=4)
    return st.just({})


@st.composite
def mutated(draw: Callable) -> dict[str, Any]:
    cfg = copy.deepcopy(VALID)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(PATHS))
        parent: Any = cfg
        try:
            for key in path[:-1]:
                parent = parent[key]
            current = parent[path[-1]]
        except (KeyError, IndexError, TypeError):
            continue
        action = draw(st.sampled_from(["replace", "same-kind", "same-kind", "remove", "add"]))
        if action == "remove" and isinstance(parent, dict):
            del parent[path[-1]]
        elif action == "add" and isinstance(parent, dict):
            parent[draw(st.text(max_size=6))] = draw(VALUES)
        elif action == "same-kind":
            parent[path[-1]] = draw(_same_kind(current))
        else:
            parent[path[-1]] = draw(VALUES)
    return cfg


def test_the_fuzzed_configuration_is_valid():
    assert isinstance(load_config(VALID), SchedulerConfig)
    assert len(PATHS) > 100


@settings(max_examples=500, deadline=None, suppress_health_check=list(HealthCheck))
@given(mutated())
def test_fuzzed_configurations_load_or_are_refused(cfg):
    before = repr(cfg)
    try:
        result = load_config(cfg)
    except KschedError as exc:
        assert str(exc)  # a message, not an empty error
    else:
        assert isinstance(result, SchedulerConfig)
        assert {p.scheduler_name for p in result.profiles}
    assert repr(cfg) == before  # the input is never changed
