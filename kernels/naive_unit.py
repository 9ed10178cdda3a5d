"""The speed unit U: a plain loop that, for every pod, filters and scores *every* node of a
SchedulingBasic-shaped cluster (cpu/memory/pods fit, a LeastAllocated + BalancedAllocation-like
score, first maximum wins) and places the pod. No sampling, no caching, no tricks.

Machines differ two- to threefold; a speed given as a multiple of U measured on the same
machine in the same window does not. ``ksched bench`` and ``benchmarks/`` report both.
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from ._jit import jit


@jit
def naive_full_scan(alloc, req, pod):
    """Place each pod of ``pod : int64[n_pods, 3]`` on the best of all nodes; ``req`` is
    updated in place. Returns how many pods were placed."""
    n_nodes, n_pods, placed = alloc.shape[0], pod.shape[0], 0
    for p in range(n_pods):
        best, best_score = -1, -1
        for n in range(n_nodes):
            ok = True
            for r in range(3):
                if req[n, r] + pod[p, r] > alloc[n, r]:
                    ok = False
                    break
            if not ok:
                continue
            s = 0
            for r in range(2):
                a = alloc[n, r]
                s += ((a - req[n, r] - pod[p, r]) * 100) // a
            f0 = (req[n, 0] + pod[p, 0]) / alloc[n, 0]
            f1 = (req[n, 1] + pod[p, 1]) / alloc[n, 1]
            score = s // 2 + int((1 - abs(f0 - f1) / 2) * 100)
            if score > best_score:
                best_score, best = score, n
        if best >= 0:
            placed += 1
            for r in range(3):
                req[best, r] += pod[p, r]
    return placed


def unit(nodes: int = 5000, running: int = 1000, pending: int = 10000, repeat: int = 3) -> float:
    """U: the median pods/s of :func:`naive_full_scan` on 5,000 nodes of 4 cpu / 32 GiB / 110
    pods, 1,000 running and 10,000 pending pods of 100m / 500 MiB (compiled before timing)."""
    alloc = np.zeros((nodes, 3), np.int64)
    alloc[:] = (4000, 32 << 30, 110)
    base = np.zeros_like(alloc)
    for i in range(running):
        base[i % nodes] += (100, 500 << 20, 1)
    pods = np.tile(np.array([[100, 500 << 20, 1]], np.int64), (pending, 1))
    naive_full_scan(alloc, base.copy(), pods[:5])
    rates = []
    for _ in range(repeat):
        req = base.copy()
        started = time.perf_counter()
        naive_full_scan(alloc, req, pods)
        rates.append(pending / (time.perf_counter() - started))
    return statistics.median(rates)
