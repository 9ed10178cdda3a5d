"""``fit_code`` (``fitsRequest``), the one fit check of the plugin, the fused loop and the
preemption kernels, against NodeResourcesFit's ``reference_filter`` on the same nodes: as is,
with pods removed (``delta``) and with nominated pods added (``extra``)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ksched.constants import PODS
from ksched.framework.node_info import NodeInfo
from ksched.framework.nominator import request_vector
from ksched.kernels import preemption
from ksched.kernels.node_resources_fit import fit_code
from ksched.plugins.node_resources_fit import NodeResourcesFit, reference_filter
from tests.strategies import Scenario, scenarios

SETTINGS = settings(max_examples=80, deadline=None)
_ZERO = np.zeros(0, dtype=np.int64)


def _reasons(status: object) -> tuple[object, frozenset[str]]:
    return status.code, frozenset(status.reasons)


def check_node(s: Scenario, node: int, delta: np.ndarray, extra: np.ndarray, info: NodeInfo,
               nominated: bool) -> None:
    """Every caller's form of the check on one node whose requests changed by ``delta``
    (and ``extra[node]`` when ``nominated``) against the reference on ``info``."""
    plugin, cycle, state = NodeResourcesFit(), s.cycle(), s.state
    check = plugin.request_check(cycle)
    request, checked, count_only, missing = check.kernel_args
    pods = state.resource_column(PODS)
    want = reference_filter(s.pod, info)
    full = fit_code(state.allocatable, state.requested, node, request, checked, pods, count_only,
                    missing, False, delta, True, extra, nominated)
    first = fit_code(state.allocatable, state.requested, node, request, checked, pods,
                     count_only, missing, True, delta, True, extra, nominated)
    assert (full == 0) == want.is_success
    assert (first == 0) == (full == 0) and (first & ~full) == 0
    assert _reasons(plugin.status_of_code(cycle, int(full))) == _reasons(want)
    if not nominated:
        assert preemption.fit_code_with(node, state.allocatable, state.requested, pods, request,
                                        checked, count_only, missing, delta) == full
    if not delta.any() and not nominated and not missing:  # as the fused loop asks
        assert (fit_code(state.allocatable, state.requested, node, request, checked, pods,
                         count_only, 0, True, request, False, state.requested, False) == 0) \
            == want.is_success


@SETTINGS
@given(scenarios(max_nodes=6, spread=False))
def test_fit_code_matches_the_reference_on_each_node(s: Scenario) -> None:
    zero = np.zeros(len(s.state.resource_names), dtype=np.int64)
    for node, info in enumerate(s.infos):
        check_node(s, node, zero, s.state.requested, info, False)


@SETTINGS
@given(scenarios(max_nodes=4, spread=False), st.data())
def test_fit_code_with_pods_removed_and_nominated_pods_added(s: Scenario,
                                                             data: st.DataObject) -> None:
    state = s.state
    for node, info in enumerate(s.infos):
        on_node = list(info.pods)
        keep = data.draw(st.lists(st.booleans(), min_size=len(on_node),
                                  max_size=len(on_node)))
        removed = [p for p, k in zip(on_node, keep) if not k]
        delta = -sum((request_vector(state, p) for p in removed),
                     np.zeros(len(state.resource_names), dtype=np.int64))
        kept = tuple(p for p, k in zip(on_node, keep) if k)
        check_node(s, node, delta, state.requested, NodeInfo(info.node, kept), False)
        others = [p for p in s.bound if p not in on_node and not p.terminal][:3]
        extra = np.zeros_like(state.requested)
        extra[node] = sum((request_vector(state, p) for p in others), extra[node])
        check_node(s, node, delta, extra, NodeInfo(info.node, kept + tuple(others)), True)


@SETTINGS
@given(scenarios(max_nodes=6, spread=False))
def test_nominated_fit_failures_is_the_fit_code_with_nominated_pods(s: Scenario) -> None:
    state, plugin, cycle = s.state, NodeResourcesFit(), s.cycle()
    request, checked, count_only, missing = plugin.request_check(cycle).kernel_args
    walk = s.indices[::-1].copy()
    added = np.zeros_like(state.requested)
    added[::2] = request_vector(state, s.pod)
    passed = np.ones(len(walk), dtype=np.bool_)
    mask = np.ones(state.num_nodes, dtype=np.bool_)
    at, codes = np.empty(len(walk), np.int64), np.empty(len(walk), np.int64)
    count = preemption.nominated_fit_failures(
        walk, passed, mask, state.allocatable, state.requested, added, request, checked,
        state.resource_column(PODS), count_only, missing, at, codes)
    expected = {i: fit_code(state.allocatable, state.requested, int(walk[i]), request, checked,
                            state.resource_column(PODS), count_only, missing, False, _ZERO,
                            False, added, True) for i in range(len(walk))}
    assert dict(zip(at[:count].tolist(), codes[:count].tolist())) == {
        i: c for i, c in expected.items() if c}
