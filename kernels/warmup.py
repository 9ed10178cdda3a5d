"""Compile (or load from numba's disk cache) every kernel on tiny inputs, for benchmarks
(:func:`ksched.warmup`). Commands do not call it: a run compiles what it calls, on first call
(``ksched demo`` first schedules a three-node copy of its workload, so its timing excludes
compilation)."""

from __future__ import annotations

import time

import numpy as np


def warmup() -> float:
    """Compile every kernel once; returns the seconds it took."""
    from . import (
        balanced_allocation,
        image_locality,
        json_scan,
        loop_steps,
        node_affinity,
        node_ports,
        node_resources_fit,
        normalize,
        node_volume_limits,
        preemption,
        samples,
        select,
        taint_toleration,
        volume_zone,
    )

    started = time.perf_counter()
    i64, i32 = np.int64, np.int32
    nodes = np.zeros(1, i64)
    matrix = np.ones((1, 4), i64)
    empty = np.zeros(0, i64)
    node_resources_fit.fit_codes(matrix, matrix, nodes, np.ones(4, i64), np.arange(3, dtype=i64),
                                 3, False)
    for strategy in range(3):
        node_resources_fit.resource_allocation_scores(
            strategy, matrix, matrix, np.ones((1, 2), i64), nodes, np.zeros(2, i64),
            np.zeros(2, i64), np.ones(2, i64), np.ones(2, i64), np.array([0, 100], i64),
            np.array([0, 100], i64))
    balanced_allocation.balanced_allocation_scores(matrix, matrix, nodes, np.zeros(2, i64),
                                                   np.ones(2, i64))
    taints = (np.zeros(2, i64), np.zeros(1, i32), np.zeros(1, i32), np.zeros(1, np.int8))
    tolerations = (np.zeros(1, i64), np.zeros(1, np.bool_), np.zeros(1, i64), np.zeros(1, i64))
    taint_toleration.untolerated_mask(*taints, nodes, *tolerations)
    taint_toleration.intolerable_prefer_no_schedule_counts(*taints, nodes, *tolerations)
    labels = (np.zeros((1, 1), i32), np.zeros((1, 1), i64), np.zeros((1, 1), np.bool_))
    program = (np.array([0, 1], i64), np.ones(1, np.bool_), np.zeros(1, i64), np.zeros(1, i64),
               np.array([0, 1], i64), np.zeros(1, i64), np.zeros(1, i64))
    node_affinity.selector_mask(*labels, nodes, *program)
    node_affinity.preferred_scores(*labels, nodes, np.ones(1, i64), *program)
    node_ports.port_conflict_mask(np.zeros((1, 1), i32), nodes, empty)
    fixed_labels = np.zeros((1, 1), i32)  # a state's label column is read-only
    fixed_labels.flags.writeable = False
    volume_zone.zone_conflict_mask(fixed_labels, nodes, np.zeros(4, i64), empty, empty,
                                   np.zeros(1, i64), empty)
    node_volume_limits.volume_limit_exceeded(nodes, np.zeros((1, 1), i64), np.zeros((1, 1), i64),
                                             empty, np.zeros(1, i64), empty)
    image_locality.image_locality_scores(np.zeros(2, i64), np.zeros(0, i32), empty, empty, nodes,
                                         empty, 1, 23, 1000)
    normalize.default_normalize_score(np.ones(2, i64), 100, True)
    select.num_feasible_nodes_to_find(0, 1000)
    select.select_host(np.ones(2, i64), 0, np.zeros(1, i64), np.zeros(5, i64))
    fixed_order, fixed_matrix = np.zeros(1, i64), np.ones((1, 4), i64)  # a state's: read-only
    fixed_order.flags.writeable = fixed_matrix.flags.writeable = False
    loop_steps.walk_lists(fixed_order, np.ones((1, 1), np.bool_), np.zeros(1, i64), fixed_matrix,
                          3, np.ones((1, 4), i64), np.array([0, 2], i64), np.arange(2, dtype=i64),
                          True, 1, 1)
    samples.sampled_moments(np.zeros(1), 0.0, 60.0)  # and next_sample_time, for the Simulator
    samples.next_sample_time(0.0, 0.0, 60.0)
    _warm_counts()
    _warm_preemption(preemption)
    json_scan.scan(b'{"items": [{"kind": "Pod"}]}', 100)  # the loader's item scan
    return time.perf_counter() - started


def _warm_preemption(preemption) -> None:
    """The preemption and nominated-pods kernels, on one node with one pod."""
    i64 = np.int64
    nodes, cols, one = np.zeros(1, i64), np.arange(2, dtype=i64), np.ones(1, i64)
    matrix = np.ones((1, 4), i64)
    # A state's allocatable and tree order are read-only arrays (their own signature).
    fixed, order = np.ones((1, 4), i64), np.zeros(1, i64)
    fixed.flags.writeable = order.flags.writeable = False
    flag, extra = np.ones(1, np.bool_), np.zeros((1, 4), i64)
    grid, cube = np.zeros((1, 1), i64), np.zeros((1, 1, 4), i64)
    outs = [np.zeros(1, i64) for _ in range(3)] + [np.zeros(2, i64), np.zeros(1, i64),
                                                   np.zeros(1, i64), np.zeros(1)]
    preemption.dry_run(nodes, 0, 1, 1, fixed, matrix, 3, one.repeat(4), cols, False, i64(0),
                       True, flag, extra, grid, one, grid, np.zeros((1, 1)), cube, one, one,
                       flag, np.full(1, -1, i64), one, one, one, grid, grid, np.zeros((1, 1)),
                       *outs)
    preemption.pick_candidate(nodes, one, nodes, one, np.zeros(1), nodes)
    preemption.discard_slot(np.zeros((1, 1), i64), grid.copy(), np.zeros((1, 1)), cube.copy(),
                            one.copy(), one.copy(), 0, 0)
    preemption.best_candidate(1, nodes, nodes, np.array([0, 1], i64), one, np.zeros(1), nodes)
    preemption.fit_code_with(0, fixed, matrix, 3, one.repeat(4), cols, False, i64(0),
                             np.zeros(4, i64))
    preemption.failing_walk(order, np.full(1, -1, i64), nodes, flag, 0, fixed, matrix, 3,
                            one.repeat(4), cols, False, i64(0), flag, extra, True, one, one,
                            np.full(1, -1, i64), np.zeros(1, i64), np.zeros(1, i64),
                            np.zeros(1, i64), np.zeros(4, i64), np.zeros(4, i64),
                            np.zeros(1, i64))
    preemption.group_codes(one)
    preemption.nominated_fit_failures(nodes, flag, flag, fixed, matrix, extra, one.repeat(4),
                                      cols, 3, False, i64(0), nodes.copy(), nodes.copy())
    kinds, codes = np.zeros(1, i64), np.zeros(1, i64)
    preemption.walk_filters(nodes, np.full(1, -1, i64), 0, fixed, matrix, 3, one.repeat(4),
                            cols, False, i64(0), flag, extra, kinds, codes)
    scratch = [np.zeros(1, i64) for _ in range(4)]
    preemption.walk_failures(nodes, kinds, codes, 1, nodes, 0, *scratch)


def _warm_counts() -> None:
    """The topology spread and inter-pod affinity kernels, on one node and one constraint."""
    from . import inter_pod_affinity, pod_topology_spread

    i64 = np.int64
    nodes, labels = np.zeros(1, i64), np.zeros((1, 1), np.int32)
    entries, counts = np.array([[0, 1, 1, 1]], i64), np.zeros((1, 2), i64)
    minimum = pod_topology_spread.spread_minimums(entries, np.array([0, 1], i64), nodes, counts)
    pod_topology_spread.spread_filter_codes(nodes, entries, minimum, labels, nodes, counts)
    pod_topology_spread.normalize_spread_scores(
        pod_topology_spread.round_scores(np.ones(1)), np.zeros(1, np.bool_))
    pod_topology_spread.spread_scores(nodes, np.zeros((1, 3), i64), True, labels, nodes, nodes,
                                      counts, -1, 1, np.zeros(2, np.bool_))
    terms, rows = np.zeros((1, 2), i64), np.zeros((1, 2), i64)
    inter_pod_affinity.pod_affinity_codes(nodes, terms, terms, terms, False, labels, rows)
    inter_pod_affinity.normalize_pod_affinity_scores(
        inter_pod_affinity.pod_affinity_scores(nodes, terms, labels, rows))
