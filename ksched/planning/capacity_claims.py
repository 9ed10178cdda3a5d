"""Capacity's copies of a template with resource claims made from ResourceClaimTemplates.

Each copy gets its own claims, as kube-controller-manager's resourceclaim controller makes
them for a new pod (:func:`ksched.dra.controller.generate_claims`: named
``<pod>-<claim>-<suffix>``, owned by the copy, recorded in its
``status.resourceClaimStatuses``), so a copy differs from the next in more than its name: the
copies are a table of one spec row each (the slower path; the compiled loop still classes them
together where it counts their devices). The devices the templates ask for bound the copies
from above (:func:`device_bound`), so the first run is no longer than the free devices allow.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import numpy as np

from ksched.dra.controller import generate_claims
from ksched.engine import schedule_batch
from ksched.dra.state import dra_objects, with_dra
from ksched.planning.devices import device_inventory, free_per_class, template_needs
from ksched.pod_table import PodTable

__all__ = ["claim_copies", "device_bound", "has_template_claims", "placed_claims_only",
           "replayed"]


def has_template_claims(pod: Any) -> bool:
    """Whether ``pod`` has a claim made from a ResourceClaimTemplate."""
    return any(not claim_name for _, claim_name, _ in pod.claim_sources)


def claim_copies(state: Any, table: PodTable, keep_statuses: bool = False
                 ) -> tuple[Any, PodTable]:
    """(``state`` with the copies' generated claims, the copies with their claim statuses).
    A template's own ``status.resourceClaimStatuses`` are dropped first (a copy is a new
    pod) unless ``keep_statuses`` (entries with a status then make no claim); a template
    that does not exist makes no claim (PreEnqueue holds the copy)."""
    dra = dra_objects(state)
    pods, made = [], []
    for pod in table:
        if has_template_claims(pod):
            if pod.claim_statuses and not keep_statuses:
                pod = attrs.evolve(pod, claim_statuses=())
            pod, claims = generate_claims(pod, dra)
            made += claims
        pods.append(pod)
    return with_dra(state, dra.updated(made)), PodTable.of(pods)


def placed_claims_only(state: Any, table: PodTable, node_rows: np.ndarray) -> Any:
    """``state`` without the claims generated for the copies that were not placed."""
    if not any(has_template_claims(p) for p in table.specs):
        return state
    gone = []
    for i in np.flatnonzero(np.asarray(node_rows) < 0).tolist():
        pod = table[i]
        gone += [(pod.namespace, name) for _, name in pod.claim_statuses if name]
    if not gone:
        return state
    return with_dra(state, dra_objects(state).updated([], gone))


def device_bound(state: Any, pod: Any) -> int | None:
    """At most how many copies of ``pod`` the free devices let in (``None``: they set no
    bound): per class, its free devices over what a copy's template claims take of it
    (:func:`ksched.planning.devices.template_needs`); 0 when a template is missing."""
    if not has_template_claims(pod):
        return None
    needs = template_needs(pod, dra_objects(state))
    if needs is None:
        return 0
    needs = {c: n for c, n in needs.items() if n > 0}
    if not needs:
        return None
    free = free_per_class(device_inventory(state))
    return min(free.get(c, 0) // n for c, n in needs.items())


def replayed(state: Any, table: PodTable, at: int, run: Any) -> Any:
    """The cluster when copy ``at`` came: the copies before it scheduled again as ``run``
    schedules them (``schedule_batch`` places pods in order, so they land where they did)."""
    if at == 0:
        return state
    before: Sequence[Any] = table.take(np.arange(at))
    return schedule_batch(state, before, profile=run.profile, tie_break=run.tie_break,
                          seed=run.seed).state
