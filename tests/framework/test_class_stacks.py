"""The class tables stacked as classes come (``StackedTables``) equal them stacked at once, and
one class's arrays cut from the stack equal that class's tables stacked alone."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ksched
from ksched import conformance
from ksched.class_stacks import GrowingRows, StackedTables
from ksched.framework.runtime import Framework
from ksched.fused_loop import FusedLoop
from ksched.profile import default_profile

TRACES = [p for p in conformance.trace_files([Path(__file__).parent.parent / "conformance"])
          if "config" not in p.name and "preempt" not in p.name and "dra" not in p.name]


def _classes(path: Path) -> tuple[FusedLoop, ksched.ClusterState, list[int]]:
    """A fused loop with the classes of a conformance trace's pending pods, in their order."""
    inputs = conformance.load_trace(path)["input"]
    objects = (inputs["nodes"] + inputs["existing_pods"] + inputs.get("namespaces", [])
               + [o for k in ("services", "replica_sets", "stateful_sets",
                              "replication_controllers") for o in inputs.get(k, [])])
    pods = list(ksched.load_pods(inputs["pending_pods"][:200]).specs)
    cluster = ksched.load_cluster(objects).widened_for(pods)
    loop = FusedLoop(Framework(default_profile()), cluster, pending=pods)
    found = [loop.class_of(pod, cluster) for pod in pods]
    return loop, cluster, sorted({c for c in found if c is not None})


def _assert_same(got: dict, expected: dict) -> None:
    assert got.keys() == expected.keys()
    for name in got:
        assert got[name].dtype == expected[name].dtype, name
        assert got[name].shape == expected[name].shape, name
        assert np.array_equal(got[name], expected[name]), name


def _assert_reads_back(a: dict, tables) -> None:
    """Each class's rows of the stacked arrays are its tables' (see the loop's docstring)."""
    for c in range(len(tables.static_ok)):
        assert np.array_equal(a["static_ok"][c], tables.static_ok[c])
        assert np.array_equal(a["request"][c], tables.request[c])
        for j, raw in enumerate(tables.norm_raw[c]):
            row = a["norm_row"][c, j]
            assert (row < 0) if raw is None else np.array_equal(a["norm_raw"][row], raw)
        static = tables.static_score[c]
        assert np.array_equal(a["static_score"][a["static_row"][c]],
                              np.zeros(len(tables.static_ok[c])) if static is None else static)
        for indptr, entries, table in (("spread_indptr", "spread_entries", "spread"),
                                       ("soft_indptr", "soft_entries", "soft_spread"),
                                       ("port_check_indptr", "port_check", "port_check"),
                                       ("subset_indptr", "subset", "subset"),
                                       ("ipa_anti_indptr", "ipa_anti", "ipa_anti")):
            got = a[entries][a[indptr][c]:a[indptr][c + 1]]
            assert np.array_equal(got, np.array(getattr(tables, table)[c]).reshape(got.shape))
        wording = tables.wording[c]
        assert (a["diag_row"][c] < 0) if wording is None else \
            np.array_equal(a["static_sid"][a["diag_row"][c]], wording.sid)


@settings(max_examples=30, deadline=None)
@given(path=st.sampled_from(TRACES), cuts=st.lists(st.integers(1, 6), max_size=8))
def test_classes_stacked_as_they_come_equal_them_stacked_at_once(path, cuts) -> None:
    loop, cluster, classes = _classes(path)
    if not classes:
        pytest.skip("no compiled class")
    tables, k, fit = loop.tables, len(loop.normalized), loop.fit is not None
    at_once = StackedTables(cluster, k, fit).update(tables)
    grown, stacks = type(tables)(), StackedTables(cluster, k, fit)
    for c in range(len(tables.static_ok)):  # the tables grow a class at a time
        for name in ("static_ok", "norm_raw", "static_score", "request", "fit_check_cols",
                     "count_only", "nonzero_add", "port_check", "port_add", "subset",
                     "has_subset", "fit_inputs", "ba_inputs", "ba_skip", "spread",
                     "soft_spread", "require_all", "wording", "ipa_affinity", "ipa_anti",
                     "ipa_existing", "ipa_score", "ipa_self_match"):
            getattr(grown, name).append(getattr(tables, name)[c])
        if c + 1 in np.cumsum(cuts) or c + 1 == len(tables.static_ok):
            stacks.update(grown)
    _assert_same(stacks.update(grown), at_once)
    _assert_reads_back(at_once, tables)
    for c in classes:
        alone = tables.one(c)
        if alone is not None:
            _assert_same(stacks.one(grown, c), StackedTables(cluster, k, fit).update(alone))


def test_growing_rows_keep_their_rows_as_the_buffer_doubles() -> None:
    rows = GrowingRows((2,), np.int64)
    for k in range(9):
        view = rows.extend([[k, -k]])
    assert view.tolist() == [[k, -k] for k in range(9)]
    assert rows.extend(np.zeros((0, 2), dtype=np.int64)).shape == (9, 2)
    with pytest.raises(ValueError, match="rows of 2 values expected"):
        rows.extend([[1]])  # numpy alone would copy it into both columns
    assert rows.rows().tolist() == [[k, -k] for k in range(9)]
