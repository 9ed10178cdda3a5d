"""Bad command lines: each refused with exit status 2 and one ``ksched: ...`` line naming the
problem, never a traceback, a hang or a silent run. Plus fuzzing of option values."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.refusals import TINY_CLUSTER as CLUSTER
from tests.refusals import cli_refused, run_cli

TRACES = Path(__file__).parent.parent / "conformance"

NODES = CLUSTER.split("---")[0]
#: Seven levels of nine aliases each: 9**7 nodes from 300 bytes (go-yaml refuses it).
ALIAS_BOMB = "".join(f"{a}: &{a} [" + ",".join(9 * ([f"*{b}"] if b else ["1"])) + "]\n"
                     for a, b in zip("abcdefg", ["", *"abcdef"]))
CONFIG_HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"},
       "spec": {"containers": [{"name": "c"}]}}
NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "status": {"allocatable": {"cpu": "2"}}}


def _lines(*records: object) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


#: The files the cases name (``{name}`` in an argument is the file's path).
FILES = {
    "cluster.yaml": CLUSTER,
    "nodes.yaml": NODES,
    "configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
    "malformed.yaml": "a: [\n",
    "bad-quantity.yaml": NODES + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
                         "spec: {containers: [{name: c, resources: {requests: {cpu: 1.5.0}}}]}\n",
    "binary.yaml": b"\xff\xfe\x00\x01",
    "binary.json": b"\xff\xfe\x00\x01",
    "not-gzip.yaml.gz": b"plain text",
    "not-gzip.json.gz": b"plain text",
    "not-a-trace.json": '{"apiVersion": "v1", "kind": "Node"}',
    "list.json": "[1, 2]",
    "format-only.json": '{"format": "kube-scheduler-oracle/v1"}',
    "empty.jsonl": "",
    "config-percentage.yaml": CONFIG_HEAD + "percentageOfNodesToScore: 101\n",
    "config-plugin.yaml": CONFIG_HEAD + "profiles:\n- schedulerName: default-scheduler\n"
                          "  plugins: {filter: {enabled: [{name: NoSuchPlugin}]}}\n",
    "config-kindless.json": '{"percentageOfNodesToScore": 5}',
    "ev-bad-json.jsonl": _lines({"time": 0, "kind": "cordon", "node": "n1"}) + "{oops\n",
    "ev-unknown-field.jsonl": _lines({"time": 0, "kind": "create", "pod": POD, "durations": 5}),
    "ev-negative.jsonl": _lines({"time": -5, "kind": "cordon", "node": "n1"}),
    "ev-nan.json": '[{"time": NaN, "kind": "cordon", "node": "n1"}]',
    "ev-kind.jsonl": _lines({"time": 0, "kind": "explode"}),
    "ev-no-pod.jsonl": _lines({"time": 0, "kind": "create"}),
    "ev-pod-string.jsonl": _lines({"time": 0, "kind": "create", "pod": "default/web"}),
    "ev-ghost.jsonl": _lines({"time": 3, "kind": "delete", "pod": "ghost"}),
    "ev-twice.jsonl": _lines({"time": 0, "kind": "create", "pod": POD},
                             {"time": 5, "kind": "create", "pod": POD}),
    "ev-node-twice.jsonl": _lines({"time": 0, "kind": "node-add", "node": NODE}),
    "ev-no-node.jsonl": _lines({"time": 0, "kind": "uncordon", "node": "n7"}),
    "ev-duration.jsonl": _lines({"time": 0, "kind": "create", "pod": POD, "duration": -1}),
    "ev-dict.yaml": "time: 0\nkind: cordon\nnode: n1\n",
    "ev-bad-pod.yaml": "- time: 0\n  kind: create\n  pod: {metadata: {name: p}, spec: "
                       "{containers: [{name: c, resources: {requests: {cpu: lots}}}]}}\n",
}

CASES = [
    # ------------------------------------------------------------------ usage
    ([], "the following arguments are required: command"),
    (["frob"], "argument command: invalid choice: 'frob'"),
    (["schedule"], "the following arguments are required: cluster"),
    (["schedule", "{cluster.yaml}", "--bogus"], "unrecognized arguments: --bogus"),
    (["schedule", "{cluster.yaml}", "a", "b"], "unrecognized arguments: b"),
    (["schedule", "{cluster.yaml}", "-o", "yaml"], "argument -o/--output: invalid choice: 'yaml'"),
    (["schedule", "{cluster.yaml}", "-o"], "argument -o/--output: expected one argument"),
    (["schedule", "{cluster.yaml}", "--tie-break", "coin"],
     "argument --tie-break: invalid choice: 'coin' (choose from 'round-robin', 'random', 'heap')"),
    # ------------------------------------------------------------------ schedule: numbers
    (["schedule", "{cluster.yaml}", "--percentage-of-nodes-to-score", "101"],
     "argument --percentage-of-nodes-to-score: must be an integer from 0 to 100, got '101'"),
    (["schedule", "{cluster.yaml}", "--percentage-of-nodes-to-score", "-1"],
     "must be an integer from 0 to 100, got '-1'"),
    (["schedule", "{cluster.yaml}", "--percentage-of-nodes-to-score", "half"],
     "must be an integer from 0 to 100, got 'half'"),
    (["schedule", "{cluster.yaml}", "--percentage-of-nodes-to-score", "50.5"],
     "must be an integer from 0 to 100, got '50.5'"),
    (["schedule", "{cluster.yaml}", "--seed", "-1"],
     "argument --seed: must be an integer >= 0, got '-1'"),
    (["schedule", "{cluster.yaml}", "--seed", "1.5"], "argument --seed: must be an integer >= 0"),
    (["schedule", "{cluster.yaml}", "--seed", "0x10"], "argument --seed: must be an integer"),
    # ------------------------------------------------------------------ schedule: inputs
    (["schedule", "{missing.yaml}"], "missing.yaml: no such file or directory"),
    (["schedule", "{empty}"], "directory {empty}: "),  # ksched.io's words after the path
    (["schedule", "{configmap.yaml}"], "configmap.yaml: no Nodes, Pods"),
    (["schedule", "{malformed.yaml}"], "file {malformed.yaml}: yaml: line 1: did not find"),
    (["schedule", "{binary.yaml}"], "file {binary.yaml}: "),
    (["schedule", "{not-gzip.yaml.gz}"], "file {not-gzip.yaml.gz}: "),
    (["schedule", "{bad-quantity.yaml}"],
     'pod default/p: spec.containers[0].resources.requests.cpu: invalid quantity "1.5.0"'),
    (["schedule", "{cluster.yaml}", "{nodes.yaml}"],
     "nodes.yaml: no pending pods (pods without spec.nodeName)"),
    (["schedule", "{cluster.yaml}/inside"], "{cluster.yaml}/inside: "),
    (["schedule", "-"], "standard input: no Nodes, Pods", ""),
    (["schedule", "-"], "standard input: yaml: line 1: did not find expected node content",
     "a: [\n"),
    (["schedule", "-"], "standard input: expected a Kubernetes object, got a string",
     "cluster.yaml\n"),
    (["schedule", "-"], "standard input: [0]: expected a Kubernetes object, got an integer",
     "[1, 2]"),
    (["schedule", "-"], "standard input: yaml: document contains excessive aliasing",
     ALIAS_BOMB),
    (["schedule", "{cluster.yaml}", "--config", "{missing.yaml}"],
     "missing.yaml: no such file or directory"),
    (["schedule", "{cluster.yaml}", "--config", "{empty}"], "--config {empty}: "),
    (["schedule", "{cluster.yaml}", "--config", "{binary.yaml}"], "--config {binary.yaml}: "),
    (["schedule", "{cluster.yaml}", "--config", "{config-kindless.json}"],
     "config-kindless.json: Object 'Kind' is missing"),
    (["schedule", "{cluster.yaml}", "--config", "{config-percentage.yaml}"],
     "config-percentage.yaml: percentageOfNodesToScore: Invalid value: 101: "
     "not in valid range [0-100]"),
    (["schedule", "{cluster.yaml}", "--config", "{config-plugin.yaml}"],
     'FilterPlugin "NoSuchPlugin" does not exist'),
    (["schedule", "{cluster.yaml}", "--config", "{cluster.yaml}"], "--config {cluster.yaml}: "),
    # ------------------------------------------------------------------ explain
    (["explain", "{cluster.yaml}"], "the following arguments are required: pod"),
    (["explain", "{cluster.yaml}", "{cluster.yaml}", "--name", "nobody"],
     'no pending pod named "nobody" in {cluster.yaml}'),
    (["explain", "{cluster.yaml}", "{nodes.yaml}"], "no pending pod in {nodes.yaml}"),
    (["explain", "{missing.yaml}", "{cluster.yaml}"], "missing.yaml: no such file or directory"),
    (["explain", "-", "-"], "standard input: no Nodes", ""),
    # ------------------------------------------------------------------ bench
    (["bench", "--rounds", "0"], "argument --rounds: must be an integer from 1 to 1,000, got '0'"),
    (["bench", "--rounds", "-3"], "argument --rounds: must be an integer from 1 to 1,000"),
    (["bench", "--rounds", "many"], "argument --rounds: must be an integer from 1 to 1,000"),
    (["bench", "--scale", "0"],
     "argument --scale: must be a finite number > 0 and <= 100, got '0'"),
    (["bench", "--scale", "-0.5"], "argument --scale: must be a finite number > 0"),
    (["bench", "--scale", "nan"], "argument --scale: must be a finite number > 0"),
    (["bench", "--scale", "inf"], "argument --scale: must be a finite number > 0"),
    (["bench", "--scale", "1e309"], "argument --scale: must be a finite number > 0"),
    (["bench", "--scale", "1000"], "argument --scale: must be a finite number > 0 and <= 100"),
    (["bench", "--workload", "nope"],
     "workload: no workload's name contains 'nope'; known: SchedulingBasic/500Nodes, "),
    (["bench", "--workload", "SchedulingBasic", "--workload", "Nope"],
     "no workload's name contains 'Nope'"),
    (["bench", "--workload", "SchedulingBasic/500Nodes", "--scale", "0.001", "--config",
      "{config-percentage.yaml}"], "percentageOfNodesToScore: Invalid value: 101"),
    # ------------------------------------------------------------------ conformance
    (["conformance"], "the following arguments are required: paths"),
    (["conformance", "{empty}"], "folder {empty}: no traces (*.json.gz, *.json)"),
    (["conformance", "{missing.json.gz}"], "missing.json.gz: no such file or directory"),
    (["conformance", "{cluster.yaml}"], "trace {cluster.yaml}: not a kube-scheduler trace: "
                                        "cannot parse: Expecting value"),
    (["conformance", "{not-a-trace.json}"],
     "trace {not-a-trace.json}: format: not a kube-scheduler trace: want "
     "kube-scheduler-oracle/v1 or kube-scheduler-oracle/v1+preemption"),
    (["conformance", "{list.json}"], "format: not a kube-scheduler trace: want "),
    (["conformance", "{format-only.json}"], "trace {format-only.json}: input: required"),
    (["conformance", "{not-gzip.json.gz}"], "not a kube-scheduler trace: cannot parse: Not a "
                                            "gzipped file"),
    (["conformance", "{binary.json}"], "not a kube-scheduler trace: cannot parse: 'utf-8'"),
    (["conformance", "{trace}", "{empty}"], "folder {empty}: no traces"),
    # ------------------------------------------------------------------ simulate: numbers
    (["simulate", "{cluster.yaml}", "--sample-every", "0"],
     "argument --sample-every: must be a finite number > 0, got '0'"),
    (["simulate", "{cluster.yaml}", "--sample-every", "-60"], "argument --sample-every: must be"),
    (["simulate", "{cluster.yaml}", "--sample-every", "nan"], "argument --sample-every: must be"),
    (["simulate", "{cluster.yaml}", "--until", "-1"],
     "argument --until: must be a finite number >= 0, got '-1'"),
    (["simulate", "{cluster.yaml}", "--until", "inf"], "argument --until: must be a finite"),
    (["simulate", "{cluster.yaml}", "--until", "noon"], "argument --until: must be a finite"),
    (["simulate", "{cluster.yaml}", "--seed", "-7"], "argument --seed: must be an integer >= 0"),
    (["simulate", "{cluster.yaml}", "--tie-break", "first"], "argument --tie-break: invalid"),
    (["simulate", "day-of-churn", "--nodes", "0"],
     "argument --nodes: must be an integer from 1 to 1,000,000, got '0'"),
    (["simulate", "day-of-churn", "--nodes", "2000000"], "argument --nodes: must be an integer"),
    (["simulate", "day-of-churn", "--arrivals", "0"],
     "argument --arrivals: must be an integer from 1 to 10,000,000, got '0'"),
    (["simulate", "day-of-churn", "--arrivals", "1e5"], "argument --arrivals: must be an integer"),
    (["simulate", "{cluster.yaml}", "--nodes", "5"],
     "--nodes and --arrivals apply only to day-of-churn"),
    (["simulate", "day-of-churn", "--events", "{ev-kind.jsonl}"],
     "--events: day-of-churn generates its own timeline"),
    # ------------------------------------------------------------------ simulate: outputs
    (["simulate", "{cluster.yaml}", "--log", "{empty}"], "--log {empty}: is a directory"),
    (["simulate", "{cluster.yaml}", "--summary", "{missing}/summary.json"],
     "--summary {missing}/summary.json: no such directory: {missing}"),
    (["simulate", "{cluster.yaml}", "--samples", "{empty}"], "--samples {empty}: is a directory"),
    # ------------------------------------------------------------------ simulate: timelines
    (["simulate", "{empty}"], "directory {empty}: "),
    (["simulate", "{cluster.yaml}", "--events", "{missing.jsonl}"],
     "missing.jsonl: no such file or directory"),
    (["simulate", "{cluster.yaml}", "--events", "{empty}"], "empty: is a directory"),
    (["simulate", "{cluster.yaml}", "--events", "{binary.yaml}"],
     "timeline {binary.yaml}: cannot read: 'utf-8' codec"),
    (["simulate", "{cluster.yaml}", "--events", "{empty.jsonl}"],
     "timeline {empty.jsonl}: no events"),
    (["simulate", "{cluster.yaml}", "--events", "{ev-bad-json.jsonl}"],
     "timeline {ev-bad-json.jsonl}: line 2: cannot parse: Expecting property name"),
    (["simulate", "{cluster.yaml}", "--events", "{ev-unknown-field.jsonl}"],
     'line 1: unknown field "durations" (an event has time, kind, pod, node, duration)'),
    (["simulate", "{cluster.yaml}", "--events", "{ev-negative.jsonl}"],
     "line 1: time: must be a finite number of seconds >= 0, got -5"),
    (["simulate", "{cluster.yaml}", "--events", "{ev-nan.json}"],
     "timeline {ev-nan.json}: event 0: time: must be a finite number of seconds >= 0, got nan"),
    (["simulate", "{cluster.yaml}", "--events", "{ev-kind.jsonl}"],
     "line 1: kind: must be one of create, update, delete, finish, node-add, node-remove, "
     "cordon, uncordon, got 'explode'"),
    (["simulate", "{cluster.yaml}", "--events", "{ev-no-pod.jsonl}"],
     "line 1: pod: required: a Pod, a v1 Pod manifest or a kubernetes-client V1Pod"),
    (["simulate", "{cluster.yaml}", "--events", "{ev-pod-string.jsonl}"],
     "timeline {ev-pod-string.jsonl}: line 1: pod: expected a Pod"),
    (["simulate", "{cluster.yaml}", "--events", "{ev-ghost.jsonl}"],
     'event 0: name: pods "ghost" not found (pod default/ghost)'),
    (["simulate", "{cluster.yaml}", "--events", "{ev-twice.jsonl}"],
     'event 1: pod: pods "web" already exists (pod default/web)'),
    (["simulate", "{cluster.yaml}", "--events", "{ev-node-twice.jsonl}"],
     'event 0: node: nodes "n1" already exists'),
    (["simulate", "{cluster.yaml}", "--events", "{ev-no-node.jsonl}"],
     'event 0: name: nodes "n7" not found'),
    (["simulate", "{cluster.yaml}", "--events", "{ev-duration.jsonl}"],
     "line 1: duration: must be a finite number of seconds >= 0, got -1"),
    (["simulate", "{cluster.yaml}", "--events", "{ev-dict.yaml}"],
     "timeline {ev-dict.yaml}: expected a list of events, got dict"),
    (["simulate", "{cluster.yaml}", "--events", "{ev-bad-pod.yaml}"],
     "event 0: pod default/p: spec.containers[0].resources.requests.cpu: invalid quantity"),
    (["simulate", "-", "--events", "-"], "standard input (-) can be read only once", CLUSTER),
    (["simulate", "{cluster.yaml}", "--events", "-"],
     "timeline on standard input: line 1: kind: must be one of", '{"time": 0}\n'),
    (["simulate", "{cluster.yaml}", "--config", "{config-plugin.yaml}"],
     'FilterPlugin "NoSuchPlugin" does not exist'),
    # ------------------------------------------------------------------ demo
    (["demo", "--nodes", "0"], "argument --nodes: must be an integer from 1 to 1,000,000"),
    (["demo", "--running", "-1"], "argument --running: must be an integer from 0 to 10,000,000"),
    (["demo", "--pending", "0"], "argument --pending: must be an integer from 1 to 10,000,000"),
    (["demo", "--pending", "ten"], "argument --pending: must be an integer"),
    (["demo", "--config", "{missing.yaml}"], "missing.yaml: no such file or directory"),
    # ------------------------------------------------------------------ comma lists
    (["headroom", "{cluster.yaml}", "--without", ""],
     "argument --without: expected comma-separated names, got ''"),
    (["headroom", "{cluster.yaml}", "--without", "n1,,n2"],
     "argument --without: expected comma-separated names, got 'n1,,n2' (an empty item)"),
    (["headroom", "{cluster.yaml}", "--without", "n1,"],
     "argument --without: expected comma-separated names, got 'n1,' (an empty item)"),
    (["capacity", "{cluster.yaml}", "{cluster.yaml}", "--remove-nodes", ""],
     "argument --remove-nodes: expected comma-separated names, got ''"),
    (["capacity", "{cluster.yaml}", "{cluster.yaml}", "--remove-nodes", ",n1"],
     "argument --remove-nodes: expected comma-separated names, got ',n1' (an empty item)"),
    (["capacity", "{cluster.yaml}", "{cluster.yaml}", "--remove-nodes", "zone in (a,,b)"],
     "argument --remove-nodes: expected comma-separated label values in 'zone in (a,,b)', "
     "got 'a,,b' (an empty item)"),
    (["headroom", "{cluster.yaml}", "--without", "zone in ()"],
     "argument --without: expected comma-separated label values in 'zone in ()', got ''"),
    (["capacity", "{cluster.yaml}", "{cluster.yaml}", "--exclude-nodes", "n1, ,n2"],
     "argument --exclude-nodes: expected comma-separated names, got 'n1, ,n2' (an empty item)"),
    # ------------------------------------------------------------------ empty names
    (["schedule", ""], "argument cluster: expected a file or folder name, got ''"),
    (["schedule", "{cluster.yaml}", ""], "argument pods: expected a file or folder name"),
    (["schedule", "{cluster.yaml}", "--config", ""],
     "argument --config: expected a file or folder name, got ''"),
    (["schedule", "--kubeconfig", ""], "argument --kubeconfig: expected a file or folder name"),
    (["schedule", "--context", ""], "argument --context: expected a context name, got ''"),
    (["explain", "{cluster.yaml}", "{cluster.yaml}", "--name", ""],
     "argument --name: expected a pod name, got ''"),
    (["bench", "--workload", ""], "argument --workload: expected part of a workload name"),
    (["simulate", "{cluster.yaml}", "--events", ""],
     "argument --events: expected a file or folder name, got ''"),
    (["simulate", "{cluster.yaml}", "--log", ""], "argument --log: expected a file or folder"),
    (["conformance", ""], "argument paths: expected a file or folder name, got ''"),
    (["snapshot", "-o", ""], "argument -o/--output: expected a file or folder name"),
    (["example", ""], "argument directory: expected a file or folder name, got ''"),
    (["capacity", "{cluster.yaml}", ""], "argument TEMPLATE: expected a file or folder name"),
    (["capacity", "{cluster.yaml}", "{cluster.yaml}", "--plot", ""],
     "argument --plot: expected a file or folder name, got ''"),
    (["headroom", "{cluster.yaml}", "--reference", ""],
     "argument --reference: expected a file or folder name, got ''"),
    (["plan", "{cluster.yaml}", "", "--node-type", "{nodes.yaml}"],
     "argument WORKLOADS: expected a file or folder name, got ''"),
    # ------------------------------------------------------------------ FILE=NUMBER
    (["plan", "{cluster.yaml}", "{cluster.yaml}", "--node-type", "=0.5"],
     "argument --node-type: expected FILE[=PRICE], got '=0.5'"),
    (["plan", "{cluster.yaml}", "{cluster.yaml}", "--node-type", "{nodes.yaml}="],
     "argument --node-type: {nodes.yaml}=: price must be a finite number >= 0, got ''"),
    (["plan", "{cluster.yaml}", "{cluster.yaml}", "--node-type", "{missing.yaml}=-1"],
     "argument --node-type: {missing.yaml}=-1: price must be a finite number >= 0, got '-1'"),
    (["capacity", "{cluster.yaml}", "{cluster.yaml}", "--add-nodes", "=3"],
     "argument --add-nodes: expected FILE=COUNT, got '=3'"),
    (["capacity", "{cluster.yaml}", "{cluster.yaml}", "--add-nodes", "{nodes.yaml}"],
     "argument --add-nodes: expected FILE=COUNT, got '{nodes.yaml}'"),
    (["capacity", "{cluster.yaml}", "{cluster.yaml}", "--add-nodes", "{missing.yaml}=x"],
     "argument --add-nodes: {missing.yaml}=x: count must be an integer from 0 to 1,000,000"),
    # ------------------------------------------------------------------ options checked first
    (["capacity", "{cluster.yaml}", "{cluster.yaml}", "--nodes"],
     "--nodes: applies only to -o csv, not -o table"),
    (["capacity", "{missing.yaml}", "{cluster.yaml}", "--nodes", "-o", "json"],
     "--nodes: applies only to -o csv, not -o json"),
    (["simulate", "{cluster.yaml}", "--log", "{missing.jsonl}", "--summary", "{missing.jsonl}"],
     "--summary {missing.jsonl}: --log writes that file too"),
    (["capacity", "{missing.yaml}", "{cluster.yaml}", "--config", "{config-plugin.yaml}"],
     'FilterPlugin "NoSuchPlugin" does not exist'),
    (["headroom", "{missing.yaml}", "--config", "{config-plugin.yaml}"],
     'FilterPlugin "NoSuchPlugin" does not exist'),
]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Every file of :data:`FILES` written, plus an empty folder, a missing path and a trace."""
    root = tmp_path_factory.mktemp("bad-cli")
    paths = {}
    for name, content in FILES.items():
        path = root / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
        paths[name] = str(path)
    (root / "empty").mkdir()
    shutil.copy(TRACES / "taints-1.json.gz", root / "trace.json.gz")
    paths.update(empty=str(root / "empty"), missing=str(root / "missing"),
                 trace=str(root / "trace.json.gz"))
    for name in ("missing.yaml", "missing.json.gz", "missing.jsonl"):
        paths[name] = str(root / name)
    return paths


def _filled(text: str, files: dict[str, str]) -> str:
    for name, path in files.items():
        text = text.replace("{" + name + "}", path)
    return text


@pytest.mark.parametrize("case", CASES, ids=[" ".join(c[0]) or "(nothing)" for c in CASES])
def test_refused(case: tuple, files: dict[str, str]) -> None:
    argv, match, *stdin = case
    cli_refused([_filled(a, files) for a in argv], _filled(match, files),
                stdin=stdin[0] if stdin else None)


@pytest.mark.skipif(not Path("/proc/version").is_file(), reason="needs Linux's /proc")
@pytest.mark.parametrize("option", ["--log", "--summary", "--samples"])
def test_an_output_that_cannot_be_written_is_refused_before_the_run(
        option: str, files: dict[str, str]) -> None:
    cli_refused(["simulate", files["cluster.yaml"], option, "/proc/version"],
                f"{option} /proc/version: cannot write in /proc: ")


def test_a_bad_trace_is_refused_before_any_case_runs(files: dict[str, str]) -> None:
    status, out, _ = run_cli(["conformance", files["trace"], files["empty"]])
    assert (status, out) == (2, "")


# ---------------------------------------------------------------------------- fuzzing

_TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
                max_size=8)


def _number(valid: st.SearchStrategy) -> st.SearchStrategy[str]:
    """An option value: a valid one, a number out of range, or any text."""
    return st.one_of(valid.map(str), st.integers(-10**20, 10**20).map(str),
                     st.floats(allow_nan=True, allow_infinity=True).map(str), _TEXT)


def _assert_clean(argv: list[str], stdin: str | None = None) -> None:
    status, _, err = run_cli(argv, stdin)
    assert status in (0, 2), (argv, status, err)
    if status == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("ksched: "), (argv, err)
    assert "Traceback" not in err


def _options(draw: st.DrawFn, table: dict[str, st.SearchStrategy]) -> list[str]:
    argv: list[str] = []
    for option in draw(st.lists(st.sampled_from(sorted(table)), max_size=4, unique=True)):
        argv += [option, draw(table[option])]
    return argv


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_fuzz_schedule_options(data: st.DataObject, files: dict[str, str]) -> None:
    argv = ["schedule", files["cluster.yaml"]] + _options(data.draw, {
        "--percentage-of-nodes-to-score": _number(st.integers(0, 100)),
        "--seed": _number(st.integers(0, 2**64)),
        "--tie-break": st.one_of(st.sampled_from(["round-robin", "random"]), _TEXT),
        "-o": st.one_of(st.sampled_from(["table", "json"]), _TEXT),
    })
    _assert_clean(argv)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(data=st.data(), churn=st.booleans())
def test_fuzz_simulate_options(data: st.DataObject, churn: bool,
                               files: dict[str, str]) -> None:
    table = {
        "--until": _number(st.floats(0, 200_000)),
        "--sample-every": _number(st.floats(1e-3, 10_000)),
        "--seed": _number(st.integers(0, 2**40)),
        "--tie-break": st.one_of(st.sampled_from(["round-robin", "random"]), _TEXT),
    }
    sizes = []
    if churn:  # a tiny day: both sizes always given, small even when valid
        for option, most in (("--nodes", 5), ("--arrivals", 30)):
            sizes += [option, data.draw(_number(st.integers(1, most)).filter(
                lambda s, most=most: not _big(s, most)))]
    cluster = "day-of-churn" if churn else files["cluster.yaml"]
    _assert_clean(["simulate", cluster, "--log", "-", "--summary", "-"] + sizes
                  + _options(data.draw, table))


def _big(text: str, most: int) -> bool:
    """A size the fuzzing run should not build (valid, but slow)."""
    try:
        return int(text) > most
    except ValueError:
        return False


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scale=st.one_of(st.floats(1e-4, 2e-3).map(str),
                       st.floats(allow_nan=True, allow_infinity=True)
                       .filter(lambda x: not 0 < x <= 100).map(str), _TEXT),
       rounds=st.one_of(st.just("1"), st.integers(-3, 0).map(str), _TEXT))
def test_fuzz_bench_scale(scale: str, rounds: str) -> None:
    _assert_clean(["bench", "--workload", "SchedulingBasic/500Nodes", "--scale", scale,
                   "--rounds", rounds, "--json"])
