"""The plan's lower bound: an integer program over pod groups and node types.

Variables: ``n[t]``, the new nodes of type ``t`` (integers >= 0); ``x[g, t]``, the pods of
group ``g`` on new nodes of type ``t``, only for the types the group may use (its selectors,
affinity, taints and tolerations, and its requests against a new node less its DaemonSet
pods, judged by the scheduler: :meth:`Planner.type_fit`); ``e[g, p]``, the pods of group
``g`` on the existing nodes of pool ``p`` (nodes on which the same groups pass every Filter
plugin but the resource ones), only where some node of the pool has room for one pod of the
group. ``x`` and ``e`` are continuous: a relaxation.

Constraints: every group's pods are placed (``sum_t x[g, t] + sum_p e[g, p] = count[g]``);
per type and resource, ``sum_g x[g, t] * request[g] <= n[t] * allocatable[t]`` (allocatable
less the DaemonSet pods'); per pool and resource, ``sum_g e[g, p] * request[g] <= free[p]``
(the pool's unused allocatable). Devices that claims from templates ask for join the resources
as one column per DeviceClass (:func:`ksched.planning.plan_devices.device_columns`, a
relaxation). Objective: the total price (then, among the cheapest, the
fewest nodes); without prices the node count.

Any placement the scheduler finds satisfies these constraints, so the optimum is a lower
bound of every plan's cost. It ignores that a pod takes one node whole (fragmentation), the
order and scores of the scheduler (a pod that may go anywhere can take the room a pinned pod
needs), spreading and inter-pod affinity between pending pods, and host ports.
"""

from __future__ import annotations

import attrs
import numpy as np
import numpy.typing as npt
from scipy import sparse
from scipy.optimize import Bounds, LinearConstraint, milp

__all__ = ["Bound", "Pools", "existing_pools", "solve"]


@attrs.frozen
class Bound:
    """The integer program's answer.

    Attributes
    ----------
    counts : int64[n_types] or None
        New nodes per type (``None``: no solution within the time limit).
    cost : float
        Their total price (without prices: the node count).
    lower : float
        A proven lower bound on the cost of any plan (``cost`` when solved to optimality; the
        solver's dual bound when it stopped on its time limit).
    optimal : bool
        Solved to optimality.
    """

    counts: npt.NDArray[np.int64] | None
    cost: float
    lower: float
    optimal: bool


@attrs.frozen(eq=False)
class Pools:
    """Existing nodes pooled by the groups that pass their non-resource filters.

    Attributes
    ----------
    allowed : bool[n_groups, n_pools]
        Group ``g`` may use pool ``p``: it passes there and some node of the pool has room
        for one of its pods.
    free : int64[n_pools, n_resources]
        The pools' unused allocatable.
    """

    allowed: npt.NDArray[np.bool_]
    free: npt.NDArray[np.int64]

    @classmethod
    def none(cls, n_groups: int, n_resources: int) -> Pools:
        return cls(np.zeros((n_groups, 0), np.bool_), np.zeros((0, n_resources), np.int64))


def existing_pools(static: npt.NDArray[np.bool_], free: npt.NDArray[np.int64],
                   requests: npt.NDArray[np.int64]) -> Pools:
    """Pool the existing nodes.

    Parameters
    ----------
    static : bool[n_groups, n_nodes]
        Whether each group passes every non-resource filter on each node.
    free : int64[n_nodes, n_resources]
        Each node's unused allocatable (0 on cordoned nodes).
    requests : int64[n_groups, n_resources]
        One pod's requests per group.
    """
    if not static.size:
        return Pools.none(len(requests), requests.shape[1])
    keys = np.packbits(static, axis=0).T  # [n_nodes, bytes]
    used = static.any(axis=0)
    unique, inverse = np.unique(keys[used], axis=0, return_inverse=True)
    nodes = np.flatnonzero(used)
    allowed = np.zeros((len(requests), len(unique)), np.bool_)
    pooled = np.zeros((len(unique), requests.shape[1]), np.int64)
    for p in range(len(unique)):
        rows = nodes[inverse.ravel() == p]
        room = free[rows]
        pooled[p] = room.sum(axis=0)
        for g in np.flatnonzero(static[:, rows[0]]):
            allowed[g, p] = bool((room >= requests[g]).all(axis=1).any())
    return Pools(allowed, pooled)


def solve(requests: npt.NDArray[np.int64], counts: npt.NDArray[np.int64],
          allowed: npt.NDArray[np.bool_], alloc: npt.NDArray[np.int64],
          prices: npt.NDArray[np.float64], pools: Pools,
          time_limit: float | None = None) -> Bound:
    """Solve the integer program (see the module's docstring).

    Parameters
    ----------
    requests : int64[n_groups, n_resources]
    counts : int64[n_groups]
        Pods per group; every group has an allowed type.
    allowed : bool[n_groups, n_types]
    alloc : int64[n_types, n_resources]
        A new node's allocatable less its DaemonSet pods'.
    prices : float64[n_types]
    pools : Pools
    time_limit : float, optional
        Seconds for each of the two solves.
    """
    n_types = alloc.shape[0]
    if not len(counts) or not counts.sum():
        return Bound(np.zeros(n_types, np.int64), 0.0, 0.0, True)
    a, lower, upper = _constraints(requests, counts, allowed, alloc, pools)
    integrality = np.zeros(a.shape[1])
    integrality[:n_types] = 1
    options = {"mip_rel_gap": 0.0} | ({"time_limit": float(time_limit)} if time_limit else {})
    cost = np.zeros(a.shape[1])
    cost[:n_types] = prices
    first = milp(cost, constraints=LinearConstraint(a, lower, upper), integrality=integrality,
                 bounds=Bounds(0, np.inf), options=options)
    if first.x is None:
        return Bound(None, float("nan"), float("nan"), False)
    best = np.round(first.x[:n_types]).astype(np.int64)
    optimum = float(prices @ best)
    dual = getattr(first, "mip_dual_bound", None)
    bound = Bound(best, optimum, optimum if first.status == 0 or dual is None else float(dual),
                  first.status == 0)
    if len(set(prices.tolist())) == 1:
        return bound
    fewest = _fewest(a, lower, upper, cost, integrality, options, optimum, n_types)
    if fewest is None or float(prices @ fewest) > optimum + 1e-6 * max(1.0, optimum):
        return bound
    return attrs.evolve(bound, counts=fewest)


def _fewest(a: sparse.csr_array, lower: npt.NDArray, upper: npt.NDArray,
            cost: npt.NDArray, integrality: npt.NDArray, options: dict, optimum: float,
            n_types: int) -> npt.NDArray[np.int64] | None:
    """Among the cheapest solutions, one with the fewest nodes."""
    a2 = sparse.vstack([a, sparse.csr_array(cost[None, :])]).tocsr()
    count = np.zeros(a.shape[1])
    count[:n_types] = 1
    res = milp(count, constraints=LinearConstraint(
        a2, np.append(lower, -np.inf), np.append(upper, optimum * (1 + 1e-9) + 1e-9)),
               integrality=integrality, bounds=Bounds(0, np.inf), options=options)
    return None if res.x is None else np.round(res.x[:n_types]).astype(np.int64)


def _constraints(requests: npt.NDArray[np.int64], counts: npt.NDArray[np.int64],
                 allowed: npt.NDArray[np.bool_], alloc: npt.NDArray[np.int64], pools: Pools
                 ) -> tuple[sparse.csr_array, npt.NDArray, npt.NDArray]:
    """The sparse constraint matrix and its row bounds; columns ``n``, ``x``, ``e``."""
    n_groups, n_res = requests.shape
    n_types, n_pools = alloc.shape[0], pools.free.shape[0]
    xs, es = np.argwhere(allowed), np.argwhere(pools.allowed)
    x0, e0 = n_types, n_types + len(xs)
    scale = np.maximum(np.maximum(alloc.max(axis=0, initial=0), requests.max(axis=0)), 1)
    req = requests / scale
    rows, cols, vals = [], [], []
    # demand: one row per group
    rows += [xs[:, 0], es[:, 0]]
    cols += [x0 + np.arange(len(xs)), e0 + np.arange(len(es))]
    vals += [np.ones(len(xs)), np.ones(len(es))]
    # type capacity: row n_groups + t * n_res + r
    for r in range(n_res):
        rows += [n_groups + xs[:, 1] * n_res + r, n_groups + np.arange(n_types) * n_res + r]
        cols += [x0 + np.arange(len(xs)), np.arange(n_types)]
        vals += [req[xs[:, 0], r], -alloc[:, r] / scale[r]]
    # pool capacity: row n_groups + n_types * n_res + p * n_res + r
    base = n_groups + n_types * n_res
    for r in range(n_res):
        rows.append(base + es[:, 1] * n_res + r)
        cols.append(e0 + np.arange(len(es)))
        vals.append(req[es[:, 0], r])
    shape = (base + n_pools * n_res, e0 + len(es))
    a = sparse.csr_array((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                         shape=shape)
    lower = np.concatenate([counts.astype(float), np.full(n_types * n_res, -np.inf),
                            np.full(n_pools * n_res, -np.inf)])
    upper = np.concatenate([counts.astype(float), np.zeros(n_types * n_res),
                            (pools.free / scale).ravel()])
    return a, lower, upper
