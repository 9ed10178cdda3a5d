"""What plugins declare (``FILTER_KIND``, ``SCORE_KIND``, ``NORMALIZATION``) is what they are:
each in-tree plugin satisfies its kind's protocol, the node-static ones give the same verdict
to nodes of one class where they say so, and the runtime finds the request filter by kind."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

from ksched.framework.capabilities import (
    FILTER_PROTOCOLS,
    SCORE_PROTOCOLS,
    FilterKind,
    Normalization,
    filter_kind,
    is_node_static_filter,
    is_node_static_score,
    judged_by_node_class,
    normalization,
    score_kind,
)
from ksched.api import Node, Pod
from ksched.framework.interfaces import implements
from ksched.framework.runtime import Framework
from ksched.plugins import IN_TREE_PLUGINS
from ksched.profile import Profile, default_profile
from ksched.state import ClusterState
from tests.strategies import Scenario, scenarios


@pytest.mark.parametrize("cls", IN_TREE_PLUGINS, ids=lambda c: c.NAME)
def test_declared_kinds_satisfy_their_protocols(cls: type) -> None:
    plugin = cls(None)
    if filter_kind(plugin) is not None:
        assert implements(plugin, "filter")
        assert isinstance(plugin, FILTER_PROTOCOLS[filter_kind(plugin)])
    if score_kind(plugin) is not None:
        assert implements(plugin, "score")
        assert isinstance(plugin, SCORE_PROTOCOLS[score_kind(plugin)])
    if is_node_static_score(plugin):
        has_normalize = hasattr(plugin, "normalize_score")
        assert has_normalize or normalization(plugin) is Normalization.NONE


def test_every_default_filter_and_score_declares_a_kind() -> None:
    framework = Framework(default_profile())
    for point, kind_of in (("filter", filter_kind), ("score", score_kind)):
        assert all(kind_of(plugin) is not None for _, plugin in framework.points[point])
    statics = [n for n, p in framework.points["filter"] if is_node_static_filter(p)]
    assert statics[:4] == ["NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity"]


def test_the_request_filter_is_found_by_kind() -> None:
    framework = Framework(default_profile())
    position, name, plugin = framework.request_filter(frozenset())
    assert (name, filter_kind(plugin)) == ("NodeResourcesFit", FilterKind.REQUEST_DELTA)
    assert framework.points["filter"][position][0] == name
    assert framework.request_filter(frozenset({name})) == (-1, "", None)
    counting = frozenset({"NodePorts", "PodTopologySpread", "InterPodAffinity"})
    pod, state = Pod("p"), ClusterState.from_records([Node("n")])
    assert framework.resource_only(counting, pod, state)  # volume plugins: static for it
    for name in counting:  # each of them looks at the node's pods
        assert not framework.resource_only(counting - {name}, pod, state)
    no_fit = Framework(Profile(plugins={"filter": ("NodePorts", "TaintToleration")}))
    assert no_fit.request_filter(frozenset()) == (-1, "", None)


@settings(max_examples=40, deadline=None)
@given(scenarios(max_nodes=10))
def test_node_static_verdicts_are_the_same_within_a_node_class(s: Scenario) -> None:
    """Where a node-static plugin says its verdict follows the node class, nodes of one
    class get one verdict and one score."""
    framework = Framework(default_profile())
    cycle = s.cycle()
    for name, plugin in framework.points["filter"] + framework.points["score"]:
        if not (is_node_static_filter(plugin) or is_node_static_score(plugin)):
            continue
        if not judged_by_node_class(plugin, s.pod):
            continue
        if is_node_static_filter(plugin) and (name, plugin) in framework.points["filter"]:
            if plugin.pre_filter(cycle) if hasattr(plugin, "pre_filter") else None:
                continue  # skipped (or rejected) at PreFilter: its Filter does not run
            values = plugin.filter(cycle, s.indices).passed
        else:
            values = np.asarray(plugin.score(cycle, s.indices))
        for k in np.unique(s.state.node_class):
            same = values[s.state.node_class == k]
            assert (same == same[0]).all(), (name, k)
