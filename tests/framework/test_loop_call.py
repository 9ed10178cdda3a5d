"""The fused loop's class set-up and calls: classes differing only in requests and priority
share their node-static verdicts, and runs of one pod reuse their prepared arguments, which
view the live per-class state the loop writes."""

from __future__ import annotations

import numpy as np
import pytest

import ksched
from ksched.api import Container, Node, Pod
from ksched.pods import sibling_signature
from ksched.loop_call import LIVE, PER_RUN, LoopCall
from ksched.kernels.schedule_loop import PARAMETERS



def _cluster(rng: np.random.Generator, count: int) -> ksched.ClusterState:
    return ksched.ClusterState.from_records([
        Node(f"n{i:03d}", labels={"kubernetes.io/hostname": f"n{i:03d}",
                                  "tier": str(rng.integers(1, 3))},
             allocatable={"cpu": int(rng.choice([2000, 4000])), "memory": 8 << 30,
                          "pods": 10}) for i in range(count)])


def _pod(name: str, cpu: int, priority: int = 0, tier: str | None = None) -> Pod:
    return Pod(name, containers=[Container("c", "img", requests={"cpu": cpu})],
               priority=priority, node_selector={"tier": tier} if tier else None)


def test_sibling_signature_leaves_out_requests_and_priority_only() -> None:
    base = _pod("a", 100, 0, "1")
    assert sibling_signature(base) == sibling_signature(_pod("b", 500, 1000, "1"))
    assert sibling_signature(base) != sibling_signature(_pod("c", 100, 0, "2"))


@pytest.mark.parametrize("seed", range(4))
def test_classes_of_other_priorities_share_verdicts_and_place_identically(seed: int) -> None:
    rng = np.random.default_rng(seed)
    cluster = _cluster(rng, 60)
    pods = [_pod(f"p{i}", int(rng.choice([100, 700, 1500])),
                 int(rng.choice([0, 500, 1000])), str(rng.choice(["1", "2"])))
            for i in range(300)]
    fast = ksched.schedule_batch(cluster, pods)
    slow = ksched.schedule_batch(cluster, pods, fast_path=False)
    assert [(p.pod.key, p.node, p.reason) for p in fast.placements] == \
           [(p.pod.key, p.node, p.reason) for p in slow.placements]
    assert fast.scheduled and fast.unschedulable  # both kinds of outcome compared


def test_loop_call_lists_every_parameter_once() -> None:
    assert not set(PER_RUN) & set(LIVE)
    assert set(PER_RUN) | set(LIVE) <= set(PARAMETERS)


def test_loop_call_refreshes_the_live_views_only_when_they_are_replaced() -> None:
    fail_epoch = np.full(4, -1, dtype=np.int64)
    arrays = {name: None for name in PARAMETERS if name not in PER_RUN and name not in LIVE}
    arrays["has_attach"] = np.zeros(1, dtype=np.bool_)
    call = LoopCall(arrays, False, arrays)
    made = []

    def views():
        made.append(1)
        return {"fail_epoch": fail_epoch[1:2]}

    call.refresh((fail_epoch,), views)
    call.refresh((fail_epoch,), views)
    assert len(made) == 1
    view = call.args[PARAMETERS.index("fail_epoch")]
    fail_epoch[1] = 7  # the prepared argument views the live array
    assert view[0] == 7
    grown = np.full(8, -1, dtype=np.int64)
    call.refresh((grown,), lambda: {"fail_epoch": grown[1:2]})
    assert call.args[PARAMETERS.index("fail_epoch")].base is grown


def test_a_missing_argument_is_refused() -> None:
    with pytest.raises(ValueError, match="missing"):
        LoopCall({"has_attach": np.zeros(0, np.bool_)}, False, {})
