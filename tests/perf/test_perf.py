"""``ksched perf`` on small configs in scheduler_perf's format (tests/perf/configs)."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import numpy as np
import pytest

from ksched.errors import InvalidObjectError
from ksched.perf import load_workloads, run_workloads, select
from ksched.perf.decode import canonical_fields
from ksched.perf.gotemplate import render
from ksched.perf.objects import Namer
from ksched.perf.report import document
from ksched.perf.results import file_name, histogram_quantile, throughput_samples

CONFIG = Path(__file__).parent / "configs" / "performance-config.yaml"


@pytest.fixture(scope="module")
def outcomes():
    return {o.workload.full_name: o for o in run_workloads(load_workloads(CONFIG))}


def test_template_functions_in_both_spellings():
    text = "{{ mod .Index 12 }} {{Mod .Index 12}} {{ div 30000 .Count }} {{DivideInt .Index 5}}"
    assert render(text, {"Index": 29, "Count": 7}, "t.yaml") == "5 5 4285 5"
    assert render("{{ div -7 2 }} {{ mod -7 2 }}", {}, "t.yaml") == "-3 -1"


def test_template_outside_the_subset_is_refused_naming_the_file():
    with pytest.raises(InvalidObjectError, match=r"t\.yaml: \{\{printf \.Index\}\}: not supported"):
        render("{{ printf .Index }}", {"Index": 1}, "t.yaml")
    with pytest.raises(InvalidObjectError, match="not a field"):
        render("{{ .Nodes }}", {"Index": 1}, "t.yaml")


def test_fields_decoded_case_insensitively_as_encoding_json():
    pod = {"spec": {"topologySpreadConstraints": [{"NodeAffinityPolicy": "Honor",
                                                   "labelSelector": {"matchLabels": {"A": "b"}}}]}}
    constraint = canonical_fields(pod, "Pod")["spec"]["topologySpreadConstraints"][0]
    assert constraint == {"nodeAffinityPolicy": "Honor",
                          "labelSelector": {"matchLabels": {"A": "b"}}}


def test_generate_name_suffixes_are_deterministic():
    namer = Namer()
    assert [namer.name("pod-") for _ in range(3)] == ["pod-bbbbb", "pod-bbbbc", "pod-bbbbd"]
    assert namer.name("node-") == "node-bbbbb"


def test_params_substituted_and_labels_selected():
    workloads = load_workloads(CONFIG)
    basic = workloads[0]
    assert basic.full_name == "Basic/3Nodes"
    assert basic.ops[0] == {"opcode": "createNodes", "count": 3,
                            "nodeTemplatePath": "templates/node.yaml"}
    assert basic.labels == {"integration-test", "performance"}
    assert basic.threshold == 100.0
    assert [w.full_name for w in select(workloads, ["performance"])] == [
        "Basic/3Nodes", "Basic/3Nodes_QueueingHintsEnabled"]
    assert [w.full_name for w in select(workloads, ["-performance"], "^(Spread|Gated)/")] == [
        "Spread/2Nodes", "Gated/1Node"]


def test_missing_param_is_refused_naming_file_and_field(tmp_path):
    config = tmp_path / "performance-config.yaml"
    config.write_text("- name: T\n  workloadTemplate:\n  - opcode: createNodes\n"
                      "    countParam: $nodes\n  workloads:\n  - name: w\n    params: {}\n")
    with pytest.raises(InvalidObjectError, match=r"performance-config.yaml: T/w: "
                                                 r"workloadTemplate\[0\]\.countParam"):
        load_workloads(config)


def test_create_only_workload_schedules_every_pod(outcomes):
    basic = outcomes["Basic/3Nodes"]
    assert (basic.status, basic.path, basic.scheduled, basic.unscheduled) == ("ok", "batch", 8, 0)
    [measured] = basic.measurements
    assert (measured.namespace, measured.clock, measured.scheduled) == ("namespace-2", "wall", 6)


def test_gate_only_variant_reuses_the_run(outcomes):
    twin = outcomes["Basic/3Nodes_QueueingHintsEnabled"]
    assert twin.measurements == outcomes["Basic/3Nodes"].measurements
    assert "same run as 3Nodes" in twin.notes[-1]


def test_indexed_templates_pair_pods_with_nodes(outcomes):
    indexed = outcomes["Indexed/4Nodes"]
    assert (indexed.scheduled, indexed.unscheduled) == (4, 0)


def test_node_affinity_policy_spelling_is_read(outcomes):
    assert (outcomes["Spread/2Nodes"].scheduled, outcomes["Spread/2Nodes"].unscheduled) == (4, 0)


def test_preemption_runs_on_the_virtual_clock(outcomes):
    run = outcomes["Preemption/2Nodes"]
    assert (run.path, run.scheduled, run.unscheduled) == ("simulator", 4, 0)
    [measured] = run.measurements
    assert measured.clock == "virtual"
    assert measured.attempt_results.count("scheduled") == 2
    assert measured.attempt_results.count("unschedulable") == 2  # each preempts first


def test_gated_pods_stay_pending(outcomes):
    gated = outcomes["Gated/1Node"]
    assert (gated.scheduled, gated.unscheduled) == (5, 3)  # 4 deleted, 5 measured bound


def test_churn_interleaves_with_measured_pods(outcomes):
    churn = outcomes["Churn/2Nodes"]
    assert churn.path == "simulator"
    assert churn.measurements[0].scheduled == 10
    assert churn.unscheduled > 0  # the churned pods fit nowhere


def test_dra_ops_are_skipped_with_the_reason(outcomes):
    dra = outcomes["Dra/skipped"]
    assert dra.status == "skipped"
    assert "createResourceDriver" in dra.reason


def test_pods_bound_on_the_batch_path_are_deleted_and_waited_for_on_the_clock(outcomes):
    run = outcomes["DeleteBlockers/1Node"]
    assert (run.path, run.scheduled, run.unscheduled, run.notes) == ("simulator", 2, 0, ())
    [window] = run.measurements
    assert window.scheduled == 2
    assert window.attempt_results.count("unschedulable") >= 2  # blocked until the deletes


def test_volumes_created_on_the_clock_reach_the_simulator(outcomes):
    run = outcomes["VolumesOnTheClock/2Nodes"]
    assert (run.path, run.scheduled, run.unscheduled, run.notes) == ("simulator", 3, 0, ())


def test_pod_sets_are_one_batch(monkeypatch):
    from ksched.perf import runner

    calls = []
    real = runner.schedule_batch
    monkeypatch.setattr(runner, "schedule_batch",
                        lambda cluster, table, **kw: calls.append(len(table)) or real(
                            cluster, table, **kw))
    [batch] = select(load_workloads(CONFIG), ["integration-test"], "^PodSets/Batch$")
    run = runner.run_workload(batch)
    assert (run.path, run.scheduled, run.unscheduled) == ("batch", 8, 0)
    assert calls == [6, 2]


def test_pod_sets_on_the_clock_are_waited_for_together(outcomes):
    run = outcomes["PodSetsOnTheClock/Simulator"]
    assert (run.path, run.scheduled, run.unscheduled, run.notes) == ("simulator", 6, 0, ())
    assert run.measurements[0].scheduled == 6


def test_simulator_cycle_hook_paces_the_clock():
    from ksched.api import Node, Pod
    from ksched.perf.clock import paced_simulator
    from ksched.simulator import Event
    from ksched.state import ClusterState

    node = Node.from_manifest({"metadata": {"name": "n"}, "status": {"allocatable": {
        "cpu": "4", "memory": "8Gi", "pods": "10"}}})
    pods = [Pod.from_manifest({"metadata": {"name": f"p{i}", "namespace": "d"},
                               "spec": {"containers": [{"name": "c", "image": "i"}]}})
            for i in range(3)]
    seen = []

    class Script:
        def poll(self, sim, idle):
            seen.append((sim.now, idle, len(sim.decisions)))
            if idle and len(sim.decisions) == 2:
                sim.push(Event(sim.now + 0.5, "create", pod=pods[2]))

    sim = paced_simulator(ClusterState.from_records([node]), Script(), 0.25)
    result = sim.run([Event(0.0, "create", pod=p) for p in pods[:2]])
    assert [d.time for d in result.decisions] == [0.0, 0.25, 1.0]  # each attempt takes 0.25
    assert seen == [(0.0, False, 0), (0.25, False, 1), (0.5, False, 2), (0.5, True, 2),
                    (1.25, False, 3), (1.25, True, 3)]  # not idle while creates are due


def test_results_document_has_upstream_shape(outcomes):
    doc = document(list(outcomes.values()))
    assert doc["version"] == "v1"
    names = {i["labels"]["Name"] for i in doc["dataItems"]
             if i["labels"]["Metric"] == "SchedulingThroughput"}
    assert "BenchmarkPerfScheduling/Basic/3Nodes/namespace-2" in names
    item = next(i for i in doc["dataItems"] if i["labels"]["Name"].endswith("Preemption/2Nodes/"
                                                                               "namespace-2"))
    assert item["unit"] == "pods/s" and item["labels"]["clock"] == "virtual"
    assert set(item["data"]) == {"Average", "Perc50", "Perc90", "Perc95", "Perc99"}
    assert item["labels"]["engine"].startswith("ksched-")
    json.dumps(doc)


def test_throughput_samples_per_second_window():
    assert throughput_samples(np.array([0.1, 0.2, 1.5, 2.2]), 2.5) == [2.0, 1.0, 2.0]
    assert throughput_samples(np.array([0.1, 2.5]), 3.0) == [1.0, 0.5, 0.5]
    assert throughput_samples(np.array([0.001] * 4), 0.5) == [8.0]


def test_histogram_quantile_interpolates_in_buckets():
    assert histogram_quantile(0.5, (1.0, 2.0), (0, 4, 4)) == 1.5
    assert histogram_quantile(0.5, (1.0, 2.0), (2, 2, 2)) == 0.5


def test_file_named_as_upstream():
    when = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)
    assert file_name(when) == "BenchmarkPerfScheduling_benchmark_2026-01-02T03:04:05Z.json"


def test_command_writes_results_and_exit_status(tmp_path, capsys):
    from ksched.cli import main

    out = tmp_path / "r.json"
    assert main(["perf", str(CONFIG), "--label", "integration-test", "--workload", "^(Basic|Dra)/",
                 "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "BenchmarkPerfScheduling/Basic/3Nodes/namespace-2" in printed
    assert "--- SKIPPED: BenchmarkPerfScheduling/Dra/skipped" in printed
    assert json.loads(out.read_text())["version"] == "v1"
