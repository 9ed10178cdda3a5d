"""``ports_conflict`` (``HostPortInfo.CheckConflict``), the one host-port check of the plugin
and the fused loop, against NodePorts' ``reference_filter`` on the same nodes."""

from __future__ import annotations

from hypothesis import given, settings

from ksched.kernels.node_ports import port_conflict_mask, ports_conflict
from ksched.plugins.node_ports import NodePorts, reference_filter
from tests.strategies import Scenario, scenarios

SETTINGS = settings(max_examples=80, deadline=None)


@SETTINGS
@given(scenarios(max_nodes=8, spread=False))
def test_ports_conflict_matches_the_reference(s: Scenario) -> None:
    columns = NodePorts().blocking_columns(s.cycle())
    port_count = s.state.port_count
    mask = port_conflict_mask(port_count, s.indices, columns)
    for node, info in enumerate(s.infos):
        want = not reference_filter(s.pod, info).is_success
        assert ports_conflict(port_count, node, columns) == want
        assert mask[node] == want
