"""NodeVolumeLimits for the compiled loop: for a pod none of whose volumes is attached yet,
its counts per node group (``attach_counts``) against the state's table (``attach_table``),
through the loop's kernel check, give the reference Filter's verdict on every node; and what
the loop adds where it places the pod is what the index counts once the pod is bound there."""

from __future__ import annotations

import numpy as np
from hypothesis import event, given, settings
from hypothesis import strategies as st

from ksched.framework.capabilities import AttachCounts, AttachTable
from ksched.framework.interfaces import Cycle
from ksched.kernels.node_volume_limits import exceeds_limit
from ksched.plugins.attached_volumes import counted_volumes
from ksched.plugins.node_volume_limits import NodeVolumeLimits, attached_volumes
from ksched.plugins.reference.node_volume_limits import reference_filter
from ksched.status import Code
from tests.plugins.volume_scenarios import VolumeScenario, volume_scenarios

SETTINGS = settings(max_examples=300, deadline=None)
PLUGIN = NodeVolumeLimits()


def loop_verdict(node: int, table: AttachTable, counts: AttachCounts) -> bool:
    """The loop's check on one node (``schedule_loop._attach_ok``)."""
    group = table.group[node]
    return not counts.attaches[group] or not exceeds_limit(node, table.limits, table.attached,
                                                           counts.adds[group])


def _counts(s: VolumeScenario) -> tuple[AttachTable, AttachCounts] | None:
    cycle = Cycle(s.state, s.pod)
    if not counted_volumes(s.pod):
        event("not counted")
        return None
    PLUGIN.pre_filter(cycle)
    counts = PLUGIN.attach_counts(cycle)
    event("counted" if counts is not None else "attached already, or errs")
    return None if counts is None else (PLUGIN.attach_table(s.state), counts)


@SETTINGS
@given(volume_scenarios())
def test_the_counts_give_the_filter_verdict(s: VolumeScenario) -> None:
    found = _counts(s)
    if found is None:
        return
    table, counts = found
    expected = [reference_filter(s.pod, info, s.storage) for info in s.infos]
    assert all(status.code != Code.ERROR for status in expected)
    assert [loop_verdict(node, table, counts) for node in range(len(s.nodes))] == \
        [status.is_success for status in expected]


@SETTINGS
@given(volume_scenarios(), st.data())
def test_the_loop_adds_what_the_index_counts_once_bound(s: VolumeScenario, data) -> None:
    found = _counts(s)
    if found is None:
        return
    table, counts = found
    node = data.draw(st.integers(0, len(s.nodes) - 1))
    before = table.attached.copy()
    bound = s.state.bind([(s.pod, s.nodes[node].name)])
    after = attached_volumes(bound).attached
    expected = before.copy()
    expected[node] += counts.adds[table.group[node]]
    assert np.array_equal(after, expected)
    assert np.array_equal(attached_volumes(s.state).attached, before)  # a table is a copy
