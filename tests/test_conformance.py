"""Replays of the traces recorded from the real kube-scheduler v1.35.4 (tests/conformance)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ksched import conformance

TRACES = conformance.trace_files([Path(__file__).parent / "conformance"])
#: Families whose every case must replay exactly; the others are reported as they progress.
REQUIRED = ("resources", "taints", "affinity", "ports", "images", "config-sampling", "spread",
            "defaultspread", "interpod", "mixed", "large-default", "config-mostallocated",
            "config-rtcr", "config-weights", "config-args", "config-profiles", "config-invalid")


def _family(path: Path) -> str:
    return path.name.removesuffix(".json.gz").rsplit("-", 1)[0]


@pytest.mark.conformance
@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name.removesuffix(".json.gz"))
def test_trace_replays(path: Path) -> None:
    result = conformance.run_case(path)
    assert result.outcome != conformance.FAIL, result.line()
    if _family(path) in REQUIRED:
        assert result.outcome == conformance.PASS, result.line()
        results = conformance.load_trace(path)["output"]["results"] or []
        assert result.decisions == len([r for r in results if not r.get("no_matching_profile")])


def test_every_family_is_present() -> None:
    families = {_family(p) for p in TRACES}
    assert set(REQUIRED) <= families
    assert len(TRACES) == 171


def test_a_changed_trace_fails(tmp_path: Path) -> None:
    """The replay really compares: a trace whose recorded score is altered must fail."""
    import gzip
    import json

    trace = conformance.load_trace(Path(__file__).parent / "conformance" / "resources-1.json.gz")
    first = trace["output"]["results"][0]
    node = first["feasible"][0]
    first["scores"][node]["NodeResourcesFit"] += 1
    path = tmp_path / "resources-altered.json.gz"
    with gzip.open(path, "wt") as f:
        json.dump(trace, f)
    result = conformance.run_case(path)
    assert result.outcome == conformance.FAIL
    assert result.detail.startswith("default/pod-000: scores: got")
