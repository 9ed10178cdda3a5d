"""Peak memory of a 1,000,000-node fleet (ten resources, built from node templates)
scheduling 100,000 pods, measured in a fresh process. Target: peak RSS under 2 GB."""

from __future__ import annotations

import json
import subprocess
import sys

_PROGRAM = """
import json, resource, time
import ksched
from ksched.workloads import WORKLOADS
ksched.warmup()
cluster, pods = WORKLOADS["Fleet/1000000Nodes_100000Pods"].make()
started = time.perf_counter()
result = ksched.schedule_batch(cluster, pods)
seconds = time.perf_counter() - started
print(json.dumps({"peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "seconds": seconds, "nodes": cluster.num_nodes, "pods": len(pods),
                  "scheduled": len(result.scheduled)}))
"""


def bench_fleet_peak_memory(benchmark) -> None:
    def run() -> dict:
        out = subprocess.run([sys.executable, "-c", _PROGRAM], check=True, capture_output=True,
                             text=True).stdout
        return json.loads(out.strip().splitlines()[-1])

    figures = benchmark.pedantic(run, rounds=1, iterations=1)
    benchmark.extra_info.update(figures, pods_per_second=figures["pods"] / figures["seconds"])
    assert figures["scheduled"] == figures["pods"]
    assert figures["nodes"] == 1_000_000
