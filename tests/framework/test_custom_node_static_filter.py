"""A node-static Filter written outside ksched joins the fused loop by saying what it is.

The plugins below live only in this module: registered by one line, enabled by the
configuration, the Filter declares ``FILTER_KIND = FilterKind.NODE_STATIC``, and the batch stays
on the compiled loop (no framework cycle runs) with the placements of the object-level path.
The same plugin without the declaration sends the pods through the framework. Node-static
Scores join the same way (``SCORE_KIND``, ``NORMALIZATION``).
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np
import pytest

import ksched
from ksched.fused_loop import FusedLoop, supports
from ksched.constants import MAX_NODE_SCORE
from ksched.framework.capabilities import (
    FilterKind,
    Normalization,
    ScoreKind,
    is_node_static_filter,
)
from ksched.framework.interfaces import Cycle, FilterResult, NodeIndices
from ksched.framework.runtime import Framework
from ksched.kernels.normalize import default_normalize_score
from ksched.plugins import IN_TREE_REGISTRY
from ksched.status import unresolvable

REASON = "node(s) lacked the required label"


@attrs.frozen
class RequiredLabel:
    """Only nodes carrying the label its args name pass: a verdict on the node alone."""

    NAME: ClassVar[str] = "RequiredLabel"
    FILTER_KIND: ClassVar[FilterKind] = FilterKind.NODE_STATIC
    args: Any = None

    def judged_by_node_class(self, pod: ksched.Pod) -> bool:
        """Labels other than the hostname are part of a node's class."""
        return self.args["label"] != "kubernetes.io/hostname"

    def filter(self, cycle: Cycle, nodes: NodeIndices) -> FilterResult:
        column = cycle.state.label_column(self.args["label"])
        passed = (cycle.state.labels[nodes, column] >= 0 if column >= 0
                  else np.zeros(len(nodes), dtype=np.bool_))
        return FilterResult.from_mask(passed, unresolvable(REASON))


@attrs.frozen
class UndeclaredRequiredLabel(RequiredLabel):
    """The same rule, without saying it is node-static."""

    NAME: ClassVar[str] = "UndeclaredRequiredLabel"
    FILTER_KIND: ClassVar[None] = None


@attrs.frozen
class PreferLabelled:
    """Scores nodes by how many of the labels its args name they carry, normalised as
    ``DefaultNormalizeScore`` (or not at all): a score on the node alone."""

    NAME: ClassVar[str] = "PreferLabelled"
    SCORE_KIND: ClassVar[ScoreKind] = ScoreKind.NODE_STATIC
    NORMALIZATION: ClassVar[Normalization] = Normalization.DEFAULT
    args: Any = None

    def score(self, cycle: Cycle, nodes: NodeIndices) -> np.ndarray:
        out = np.zeros(len(nodes), dtype=np.int64)
        for label in self.args["labels"]:
            column = cycle.state.label_column(label)
            if column >= 0:
                out += 7 * (cycle.state.labels[nodes, column] >= 0)
        return out

    def normalize_score(self, cycle: Cycle, scores: np.ndarray) -> None:
        default_normalize_score(scores, MAX_NODE_SCORE, False)


@attrs.frozen
class PreferLabelledRaw(PreferLabelled):
    """The same score, not normalised (at most 14)."""

    NAME: ClassVar[str] = "PreferLabelledRaw"
    NORMALIZATION: ClassVar[Normalization] = Normalization.NONE

    def normalize_score(self, cycle: Cycle, scores: np.ndarray) -> None:
        """Leaves the scores as they are."""


REGISTRY = IN_TREE_REGISTRY.merged({"RequiredLabel": RequiredLabel,
                                    "UndeclaredRequiredLabel": UndeclaredRequiredLabel,
                                    "PreferLabelled": PreferLabelled,
                                    "PreferLabelledRaw": PreferLabelledRaw})


def config(name: str, label: str, score: str = "") -> Any:
    enabled = [{"name": name}] + ([{"name": score, "weight": 3}] if score else [])
    args = [{"name": name, "args": {"label": label}}]
    args += [{"name": score, "args": {"labels": ["ssd", "zone"]}}] if score else []
    return ksched.load_config({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler",
                      "plugins": {"multiPoint": {"enabled": enabled}},
                      "pluginConfig": args}],
    }, registry=REGISTRY)


def cluster(count: int = 40) -> ksched.ClusterState:
    nodes = []
    for i in range(count):
        labels = {"kubernetes.io/hostname": f"n{i}", "zone": "abc"[i % 3]}
        if i % 4:
            labels["ssd"] = "true"
        nodes.append(ksched.Node(f"n{i}", labels=labels, allocatable={
            "cpu": 1000 * (1 + i % 4), "memory": 4 << 30, "pods": 10}))
    return ksched.ClusterState.from_records(nodes)


def pods(count: int = 60) -> list[ksched.Pod]:
    return [ksched.Pod(f"p{i}", containers=[ksched.Container("c", requests={
        "cpu": (100, 300, 700)[i % 3], "memory": 256 << 20})]) for i in range(count)]


def framework_cycles(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The pods the object-level framework schedules from now on."""
    seen: list[str] = []
    original = Framework.schedule_one

    def counted(self: Framework, state: Any, pod: ksched.Pod, **kw: Any) -> Any:
        seen.append(pod.name)
        return original(self, state, pod, **kw)

    monkeypatch.setattr(Framework, "schedule_one", counted)
    return seen


@pytest.mark.parametrize("label", ["ssd", "kubernetes.io/hostname"])
def test_a_declared_node_static_filter_stays_on_the_fused_loop(
        monkeypatch: pytest.MonkeyPatch, label: str) -> None:
    profile = config("RequiredLabel", label)
    framework = Framework(profile.profiles[0], REGISTRY)
    assert is_node_static_filter(framework.plugins["RequiredLabel"])
    assert supports(framework)
    state = cluster()
    assert FusedLoop(framework, state).class_of(pods(1)[0], state) is not None

    slow = ksched.schedule_batch(state, pods(), profile=profile, fast_path=False)
    cycles = framework_cycles(monkeypatch)
    fast = ksched.schedule_batch(state, pods(), profile=profile)
    assert cycles == []
    assert [(p.pod.name, p.node) for p in fast.placements] == \
        [(p.pod.name, p.node) for p in slow.placements]
    assert len(fast.scheduled) == len(slow.scheduled) > 0
    if label == "ssd":
        nodes = {p.node for p in fast.scheduled}
        assert not nodes & {f"n{i}" for i in range(0, 40, 4)}


@pytest.mark.parametrize("score", ["PreferLabelled", "PreferLabelledRaw"])
def test_a_declared_node_static_score_stays_on_the_fused_loop(
        monkeypatch: pytest.MonkeyPatch, score: str) -> None:
    profile = config("RequiredLabel", "zone", score)
    framework = Framework(profile.profiles[0], REGISTRY)
    assert supports(framework) and score in framework.weights
    state = cluster()
    slow = ksched.schedule_batch(state, pods(), profile=profile, fast_path=False)
    cycles = framework_cycles(monkeypatch)
    fast = ksched.schedule_batch(state, pods(), profile=profile)
    assert cycles == []
    assert [(p.pod.name, p.node) for p in fast.placements] == \
        [(p.pod.name, p.node) for p in slow.placements]
    without = ksched.schedule_batch(state, pods(), profile=config("RequiredLabel", "zone"))
    assert [p.node for p in fast.placements] != [p.node for p in without.placements]


def test_its_failures_are_worded_by_the_framework() -> None:
    profile = config("RequiredLabel", "gpu")
    fast = ksched.schedule_batch(cluster(4), pods(2), profile=profile)
    slow = ksched.schedule_batch(cluster(4), pods(2), profile=profile, fast_path=False)
    assert [p.reason for p in fast.placements] == [p.reason for p in slow.placements] == [
        f"0/4 nodes are available: 4 {REASON}."] * 2


def test_the_same_filter_undeclared_takes_the_framework(monkeypatch: pytest.MonkeyPatch) -> None:
    profile = config("UndeclaredRequiredLabel", "ssd")
    framework = Framework(profile.profiles[0], REGISTRY)
    assert not is_node_static_filter(framework.plugins["UndeclaredRequiredLabel"])
    assert not supports(framework)
    cycles = framework_cycles(monkeypatch)
    placed = ksched.schedule_batch(cluster(), pods(5), profile=profile)
    assert cycles == [f"p{i}" for i in range(5)]
    assert len(placed.scheduled) == 5
