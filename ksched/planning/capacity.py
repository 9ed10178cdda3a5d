"""Max fit: how many more copies of a pod template the cluster takes (cluster-capacity's
question), answered with kube-scheduler's own decisions.

Copies of each template (``<name>-<k>``, ``k`` from 0, skipping the numbers whose name a pod of
the cluster has in that namespace: a template ``web`` beside StatefulSet pods ``web-3`` makes
``web-0``, ``web-1``, ``web-2``, ``web-4``, ...) are scheduled one after another with the full
semantics of :func:`ksched.schedule_batch` until the first copy that does not fit
(cluster-capacity's rule) or the template's limit. A template's ``spec.nodeName`` and status
are cleared, as cluster-capacity's pod generator clears them.

Several templates: ``order`` (:data:`ORDERS`) says how they share the cluster:

- ``"independent"`` (the default): each template alone on the cluster as given, as if it were
  the only one (the answers do not add up: each may use the same free capacity);
- ``"fill"``: each template until it stops, in the given order, on what the ones before left;
- ``"interleave"``: one copy of each in turn, a template dropping out when it stops (the
  round-robin that cluster-capacity's report attributes copies by, ``i % len(templates)``).

The stop reason is the scheduler's full condition message for the first copy that did not fit
(:mod:`ksched.planning.capacity_reason`): the diagnosis and what PostFilter adds.
Two ways give the answer:

- **closed form** (``method="closed-form"``): when every filter that applies to the template is
  node-local (no topology spread constraints, no pod (anti-)affinity on the template, no bound
  pod with pod (anti-)affinity, no volumes or resource claims, the default profile, no limit), a
  node's capacity does not depend on the order of placement: ``min`` over the requested
  resources of ``free // request`` (the pod slots always count), at most 1 with host ports, 0 on
  a node a static filter (unschedulable, taints, node affinity, node name, host ports in use)
  rejects. The static verdicts come from one :func:`ksched.explain` of the template over every
  node; the rest is one vectorised pass.
- **loop** (``method="loop"``): otherwise. The copies go through ONE ``schedule_batch`` call,
  so that the node walk's rotating start index and the tie-break state run on as in one
  scheduler; the list is cut after each template's first failing copy and run again when a cut
  changes it (the placements before a cut are those of the longer list: ``schedule_batch``
  places pods in order). The first run's length is an upper bound (the closed form's resource
  count with only the static filters, plus one) under the default profile, else 1024, doubled
  while every copy fits; never more than :data:`ksched.limits.MAX_PODS` copies of a template.
  Copies of a template whose claims come from ResourceClaimTemplates get claims of their own,
  and the free devices bound the first run (:mod:`ksched.planning.capacity_claims`).
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs
import numpy as np
import numpy.typing as npt

from ksched.api import Pod
from ksched.engine import schedule_batch
from ksched.errors import ArgumentError, KschedError
from ksched.explain import Explanation, explain
from ksched.framework.capabilities import FilterKind, filter_kind, is_node_static_filter
from ksched.inputs import as_cluster, check_profile, check_progress, check_seed, check_tie_break
from ksched.limits import MAX_PODS
from ksched.planning.capacity_args import (
    CapacityRun,
    CopyTemplate,
    admitted_templates,
    check_limit,
    copy_templates,
    with_added_nodes,
    with_taken,
    without_nodes,
)
from ksched.planning.capacity_report import (
    LIMIT_REACHED,
    ORDERS,
    CapacityReport,
    CapacityResult,
    fail_counts,
)
from ksched.planning.capacity_claims import (
    claim_copies,
    device_bound,
    has_template_claims,
    placed_claims_only,
    replayed,
)
from ksched.planning.capacity_reason import closed_form_message, condition_message
from ksched.planning.headroom import displace, selected_nodes
from ksched.plugins import IN_TREE_REGISTRY
from ksched.pod_table import PodTable
from ksched.resources import pod_requests, request_vector
from ksched.state import ClusterState, host_ports


#: Where nodes without the ``by`` label are counted.
NO_LABEL = "<none>"
#: The default profile's filters whose verdict on a node does not change as copies are added:
#: those that declare themselves node-static.
STATIC_FILTERS = frozenset(name for name, plugin in IN_TREE_REGISTRY.items()
                           if is_node_static_filter(plugin))
#: Filters that cannot let a copy in once they reject it, with no pod (anti-)affinity in play:
#: the node-static ones and the host-port ones.
_CLOSED_FORM_ZERO = STATIC_FILTERS | frozenset(
    name for name, plugin in IN_TREE_REGISTRY.items()
    if filter_kind(plugin) is FilterKind.HOST_PORTS)
#: Copies in the first run of the loop when no upper bound is known.
FIRST_RUN = 1024


# =========================================================================== entry point


def capacity(cluster: ClusterState | Any, templates: Any, *, max_limit: int | None = None,
             exclude_nodes: Iterable[str] = (), profile: Any = None, by: str | None = None,
             order: str = "independent", add_nodes: Iterable[tuple[Any, int]] = (),
             remove_nodes: str | Iterable[str] | None = None,
             progress: Callable[[int], None] | None = None, tie_break: str = "round-robin",
             seed: Any = None) -> CapacityReport:
    """How many copies of each template the cluster takes, as kube-scheduler places them.

    Parameters
    ----------
    cluster : a :class:`~ksched.ClusterState` or anything :func:`ksched.load_cluster` reads
        (never modified).
    templates : one template or a list; each a pod (any form :func:`ksched.inputs.as_pod`
        takes) or a ``(pod, limit)`` pair.
    max_limit : the limit of each template without its own (``None``: none). Limits are at
        most :data:`ksched.limits.MAX_PODS` (10,000,000).
    exclude_nodes : names of nodes to leave out: the cluster is rebuilt from its records
        without them and their pods (``report.state`` lacks them too).
    profile : a :class:`~ksched.Profile` or :class:`~ksched.config.SchedulerConfig`, as
        ``schedule_batch`` takes it (the closed form is used with the default profile only).
    by : a node label key: per template, the copies per value of that label.
    order : how several templates share the cluster (:data:`ORDERS`): ``"independent"``
        (default) each alone on the cluster as given; ``"fill"`` each until it stops, in the
        given order; ``"interleave"`` one copy of each in turn, a template dropping out when
        it stops. The report names it (``report.order``).
    add_nodes : ``(node, count)`` pairs, a what-if: ``count`` new nodes made from each template
        (a Node record or manifest; named ``<name>-<k>``, with that hostname label); at most
        :data:`ksched.limits.MAX_NODES` (1,000,000) in all.
    remove_nodes : a what-if, unlike ``exclude_nodes``: these nodes (``"key=value"``, ``"key in
        (a,b)"`` or node names) go away and their pods are re-placed on the rest first, as
        :func:`ksched.headroom`'s ``without`` does (``report.displaced`` tells what moved and
        what no longer fits); the copies are counted after that.
    progress : optional callable ``progress(n)`` told as the loop schedules copies (e.g. a
        tqdm ``update``; the closed form needs none).
    tie_break, seed : how the loop breaks ties between equal-scoring nodes, as
        :func:`ksched.schedule_batch` takes them (one of
        :data:`ksched.constants.TIE_BREAKS`). The closed form's counts do not depend on it.

    Returns
    -------
    CapacityReport

    Bad arguments raise :class:`~ksched.errors.ArgumentError` naming the argument.

    Examples
    --------
    >>> from ksched import ClusterState, Container, Node, Pod
    >>> nodes = [Node(f"n{i}", allocatable={"cpu": 4000, "pods": 110}) for i in range(3)]
    >>> web = Pod("web", containers=[Container("c", requests={"cpu": 1000})])
    >>> report = capacity(ClusterState.from_records(nodes), web)
    >>> report.results[0].replicas, report.results[0].stop_reason
    (12, '0/3 nodes are available: 3 Insufficient cpu.')
    """
    max_limit = check_limit(max_limit, "max_limit")
    if not isinstance(order, str) or order not in ORDERS:
        raise ArgumentError(f"order: must be one of {', '.join(ORDERS)}, got {order!r}")
    if by is not None and (not isinstance(by, str) or not by):
        raise ArgumentError(f"by: must be a node label key (a non-empty string), got {by!r}")
    run = CapacityRun(check_profile(profile), check_tie_break(tie_break), check_seed(seed), by,
               check_progress(progress))
    state = with_added_nodes(without_nodes(as_cluster(cluster), exclude_nodes), add_nodes)
    items = admitted_templates(copy_templates(templates, max_limit), state)
    displaced = None
    if remove_nodes is not None:
        displaced = displace(state, selected_nodes(state, remove_nodes, "remove_nodes"),
                             run.profile)
        state = displaced.state
    report = _ordered(state, with_taken(state, items), order, run)
    return attrs.evolve(report, displaced=displaced)


def _ordered(state: ClusterState, items: Sequence[CopyTemplate], order: str,
             run: CapacityRun) -> CapacityReport:
    """The report in ``order``: ``"independent"`` runs each template alone on ``state``
    (``report.state`` is then ``state`` itself)."""
    if order != "independent" or len(items) == 1:
        return attrs.evolve(_report(state, items, "fill" if order == "independent" else order,
                                    run), order=order)
    results = tuple(_report(state, [t], "fill", run).results[0] for t in items)
    return CapacityReport(results, run.by, _const(state), order=order)


def _report(state: ClusterState, items: Sequence[CopyTemplate], order: str,
            run: CapacityRun) -> CapacityReport:
    """The closed form where it holds and succeeds, else the loop."""
    if run.profile is None and (order == "fill" or len(items) == 1) \
            and _closed_form_holds(state, items):
        try:
            return _closed_form(state, items, run.by)
        except KschedError:  # a cycle ends in an error (say, a bad preferred term): the loop
            pass             # reports it as schedule_batch does
    return _loop(state, items, order, run)


def _closed_form_holds(state: ClusterState, items: Sequence[CopyTemplate]) -> bool:
    """Whether every filter that applies is node-local, with no limit (see the module)."""
    if state.affinity_pods or any(t.limit is not None for t in items):
        return False
    if len(items) > 1 and any(host_ports(t.pod) for t in items):
        return False
    return all(_node_local(t.pod) for t in items)


def _node_local(pod: Pod) -> bool:
    return not (pod.topology_spread_constraints or pod.has_pod_affinity or pod.volumes
                or pod.resource_claims)


# =========================================================================== closed form


def _request_vector(state: ClusterState, pod: Pod) -> npt.NDArray[np.int64]:
    """The pod's effective request per column of ``state`` (the pod slot counts 1)."""
    return request_vector(pod_requests(pod), state.resource_names)


def _static_open(state: ClusterState, pod: Pod, zero: frozenset[str],
                 why: Explanation | None = None) -> npt.NDArray[np.bool_]:
    """bool[n_nodes]: the nodes no filter in ``zero`` rejects, from one explained cycle
    (``why``, else run here)."""
    if why is None:
        why = explain(state, pod, percentage_of_nodes_to_score=100)
    if why.pre_filter_plugin and why.pre_filter_plugin not in zero:
        return np.ones(state.num_nodes, dtype=np.bool_)  # may pass once other pods are placed
    index = state.node_index
    open_ = np.zeros(state.num_nodes, dtype=np.bool_)
    for row in why.nodes:
        open_[index[row.node]] = row.feasible or (row.plugin not in zero and row.plugin != "")
    return open_


def per_node_capacity(free: npt.NDArray[np.int64], request: npt.NDArray[np.int64],
                      open_: npt.NDArray[np.bool_], one_per_node: bool) -> npt.NDArray[np.int64]:
    """Copies of one request each node takes, NodeResourcesFit's rule in closed form.

    Parameters
    ----------
    free : int64[n_nodes, n_resources], allocatable minus requested (may be negative).
    request : int64[n_resources], the pod's request (the pod slot column 1); resources it
        requests 0 of do not bound.
    open_ : bool[n_nodes], nodes the static filters let the pod onto.
    one_per_node : the pod uses host ports (at most one copy per node).

    Returns
    -------
    int64[n_nodes], never negative.
    """
    checked = request > 0
    counts = np.floor_divide(np.maximum(free[:, checked], 0), request[checked]).min(axis=1)
    counts = np.where(open_, counts, 0)
    return np.minimum(counts, 1) if one_per_node else counts


def _closed_form(state: ClusterState, items: Sequence[CopyTemplate], by: str | None
                 ) -> CapacityReport:
    """Every template in turn, node by node in one vectorised pass each."""
    state = state.widened_for([t.pod for t in items])
    free = state.allocatable - state.requested
    placed: list[npt.NDArray[np.int64]] = []
    stops: list[Callable[[], str]] = []
    for i, t in enumerate(items):
        why = explain(state, t.pod, percentage_of_nodes_to_score=100)
        request = _request_vector(state, t.pod)
        counts = per_node_capacity(free, request,
                                   _static_open(state, t.pod, _CLOSED_FORM_ZERO, why),
                                   bool(host_ports(t.pod)))
        free = free - counts[:, None] * request
        placed.append(counts)
        exact = _Memo(lambda i=i: _bind_counts(state, items[:i + 1], placed[:i + 1]))
        stops.append(_Memo(_closed_form_stop(state, items[:i + 1], int(counts.sum()), why,
                                             free, exact)))
    after = _Memo(lambda: _bind_counts(state, items, placed))
    results = []
    for t, counts, stop in zip(items, placed, stops):
        on_nodes = {state.node_names[n]: int(counts[n]) for n in np.flatnonzero(counts)}
        results.append(CapacityResult(t.pod, int(counts.sum()), on_nodes,
                                      _by(state, on_nodes, by), "closed-form", t.limit, stop))
    return CapacityReport(tuple(results), by, after)


def _closed_form_stop(state: ClusterState, items: Sequence[CopyTemplate], count: int,
                      why: Explanation, free: npt.NDArray[np.int64],
                      exact: Callable[[], ClusterState]) -> Callable[[], str]:
    """The last template's stop reason, computed when called: worded from the arrays
    (:func:`~ksched.planning.capacity_reason.closed_form_message`), else from the simulator
    on the cluster with the copies bound (when the closed form cannot word it, or when a
    template before has a lower priority: its copies could be preemption victims)."""
    t = items[-1]
    pod = t.copy(count)

    def stop() -> str:
        message = None
        if all(u.pod.priority >= t.pod.priority for u in items[:-1]):
            message = closed_form_message(state, pod, why, free, STATIC_FILTERS)
        return message if message is not None else condition_message(exact(), pod)

    return stop


class _Memo:
    """A value computed on first use."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self._make, self._value, self._done = make, None, False

    def __call__(self) -> Any:
        if not self._done:
            self._value, self._done = self._make(), True
        return self._value


def _bind_counts(state: ClusterState, items: Sequence[CopyTemplate],
                 placed: Sequence[npt.NDArray[np.int64]]) -> ClusterState:
    """``state`` with the closed form's copies bound, template by template, node by node."""
    bindings, names = [], state.node_names
    for t, counts in zip(items, placed):
        nodes = np.repeat(np.arange(len(counts)), counts).tolist()
        suffixes = t.suffixes(len(nodes)).tolist()
        prefix = f"{t.pod.name}-"
        bindings += [(t.pod.renamed(prefix + str(k)), names[n])
                     for k, n in zip(suffixes, nodes)]
    return state.bind(bindings) if bindings else state


def _by(state: ClusterState, on_nodes: Mapping[str, int], by: str | None) -> dict[str, int]:
    """Copies per value of node label ``by``."""
    if by is None:
        return {}
    totals: dict[str, int] = collections.Counter()
    nodes, index = state.nodes, state.node_index
    for name, count in on_nodes.items():
        totals[nodes[index[name]].labels.get(by, NO_LABEL)] += count
    return dict(sorted(totals.items()))


# =========================================================================== loop


def _upper_bound(state: ClusterState, pod: Pod) -> int | None:
    """One more than the copies any run can place under the default profile: resources and
    pod slots on the nodes the static filters let the pod onto, and the free devices its
    claim templates ask for (``None``: unknown, the explained cycle ended in an error)."""
    wide = state.widened_for([pod])
    try:
        open_ = _static_open(wide, pod, STATIC_FILTERS)
    except KschedError:
        return None
    counts = per_node_capacity(wide.allocatable - wide.requested, _request_vector(wide, pod),
                               open_, bool(host_ports(pod)))
    total, devices = int(counts.sum()), device_bound(state, pod)
    return (total if devices is None else min(total, devices)) + 1


def _sequence(counts: Sequence[int], order: str) -> tuple[np.ndarray, np.ndarray]:
    """(template, copy number) of each copy, in scheduling order, as two arrays."""
    counts = np.asarray(counts, dtype=np.int64)
    n = len(counts)
    if order == "fill":
        templates = np.repeat(np.arange(n, dtype=np.int64), counts)
        firsts = np.repeat(np.cumsum(counts) - counts, counts)
        return templates, np.arange(len(templates), dtype=np.int64) - firsts
    copies = np.repeat(np.arange(int(counts.max(initial=0)), dtype=np.int64), n)
    templates = np.tile(np.arange(n, dtype=np.int64), int(counts.max(initial=0)))
    kept = copies < counts[templates]
    return templates[kept], copies[kept]


def _copies(items: Sequence[CopyTemplate], templates: np.ndarray,
            copies: np.ndarray) -> PodTable:
    """The copies, named as :meth:`CopyTemplate.copy` names them: a table of one spec row per
    template (the pods are made only when read)."""
    prefixes = [f"{t.pod.name}-" for t in items]
    numbers = [t.suffixes(int(copies[templates == i].max(initial=-1)) + 1).tolist()
               for i, t in enumerate(items)]
    names = [prefixes[t] + str(numbers[t][k])
             for t, k in zip(templates.tolist(), copies.tolist())]
    pods = [t.pod for t in items]
    return PodTable.from_columns(
        pods, templates, names, uids=[pods[t].uid for t in templates.tolist()],
        creation_times=[pods[t].creation_time for t in templates.tolist()])


def _loop(state: ClusterState, items: Sequence[CopyTemplate], order: str,
          run: CapacityRun) -> CapacityReport:
    """One ``schedule_batch`` over the copies, cut after each template's first failure."""
    caps = [_upper_bound(state, t.pod) if run.profile is None else None for t in items]
    counts = [_first_count(t.limit, cap) for t, cap in zip(items, caps)]
    claims = any(has_template_claims(t.pod) for t in items)
    given = state
    while True:
        templates, copies = _sequence(counts, order)
        table = _copies(items, templates, copies)
        if claims:  # each copy its own claims, made before it is scheduled
            state, table = claim_copies(given, table)
        result = schedule_batch(state, table, profile=run.profile, progress=run.progress,
                                tie_break=run.tie_break, seed=run.seed)
        failed = _first_failures(templates, copies, result.node_rows, len(items))
        wanted = [_wanted(c, f, t.limit, cap)
                  for c, f, t, cap in zip(counts, failed, items, caps)]
        if wanted == counts:
            break
        counts = wanted
    return _loop_report(state, items, (templates, copies, table), result, failed, run)


def _first_count(limit: int | None, cap: int | None) -> int:
    bound = FIRST_RUN if cap is None else cap
    return min(bound, _loop_limit(limit))


def _loop_limit(limit: int | None) -> int:
    """The most copies the loop schedules: the template's limit, else
    :data:`~ksched.limits.MAX_PODS` (a cluster with room for more stops there, its stop
    reason ``limit reached``)."""
    return MAX_PODS if limit is None else limit


def _wanted(count: int, failed: int | None, limit: int | None, cap: int | None) -> int:
    """A template's copies in the next run: up to its first failure, else more (doubled)
    until the limit."""
    if failed is not None:
        return failed + 1
    return min(max(2 * count, FIRST_RUN), _loop_limit(limit))


def _first_failures(templates: np.ndarray, copies: np.ndarray, node_rows: np.ndarray,
                    n_templates: int) -> list[int | None]:
    """Per template, the copy number of its first unplaced copy (``None``: all placed)."""
    unplaced = node_rows < 0
    failed: list[int | None] = []
    for t in range(n_templates):
        at = np.flatnonzero(unplaced & (templates == t))
        failed.append(int(copies[at[0]]) if len(at) else None)
    return failed


def _loop_report(state: ClusterState, items: Sequence[CopyTemplate],
                 sequence: tuple[np.ndarray, np.ndarray, PodTable], result: Any,
                 failed: Sequence[int | None], run: CapacityRun) -> CapacityReport:
    templates, copies, table = sequence
    rows, names = result.node_rows, result.state.node_names
    results = []
    for i, t in enumerate(items):
        mine = templates == i
        used, first, count = np.unique(rows[mine & (rows >= 0)], return_index=True,
                                       return_counts=True)
        order = np.argsort(first, kind="stable")  # nodes as the copies first reached them
        on_nodes = {names[int(used[j])]: int(count[j]) for j in order.tolist()}
        stop = _const(LIMIT_REACHED)
        if failed[i] is not None:
            at = int(np.flatnonzero(mine & (copies == failed[i]))[0])
            stop = _Memo(_loop_stop(state, table, result, at, run))
        results.append(CapacityResult(t.pod, sum(on_nodes.values()), on_nodes,
                                      _by(state, on_nodes, run.by), "loop", t.limit, stop))
    return CapacityReport(tuple(results), run.by,
                          _Memo(lambda: placed_claims_only(result.state, table, rows)))


def _loop_stop(state: ClusterState, table: PodTable, result: Any, at: int, run: CapacityRun
               ) -> Callable[[], str]:
    """The stop reason of the copy at ``at``, computed when called: the simulator's
    condition message on the cluster as it was then (the copies placed before it bound; with
    generated claims, scheduled again up to it, so that their devices are allocated)."""
    profile = run.profile

    def stop() -> str:
        rows = result.node_rows
        placed = np.flatnonzero(rows >= 0)
        before = placed[placed < at]
        if len(before) == len(placed):
            then = result.state
        elif any(has_template_claims(p) for p in table.specs):
            then = replayed(state, table, at, run)
        else:
            names = state.node_names
            then = state.bind([(table[int(j)], names[int(rows[j])]) for j in before])
        fallback = result.reasons[int(result.reason_codes[at])]
        return condition_message(then, table[at], profile, fallback)

    return stop


def _const(value: Any) -> Callable[[], Any]:
    return lambda: value


__all__ = ["LIMIT_REACHED", "NO_LABEL", "ORDERS", "CapacityReport", "CapacityResult",
           "capacity", "fail_counts", "per_node_capacity"]
