"""The claims of a pod (``foreachPodResourceClaim``) and what Reserve writes to them: shared by
the DynamicResources plugin (:mod:`ksched.plugins.dynamic_resources`) and the compiled device
counts (:mod:`ksched.dra.compiled`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ksched.dra.claims import FINALIZER, AllocationResult, ResourceClaim
from ksched.dra.state import DraObjects, evolved

__all__ = ["ClaimLookupError", "pod_claims", "reserved_claims"]


class ClaimLookupError(Exception):
    """``foreachPodResourceClaim`` failed: a claim is missing, deleted or not the pod's."""


def pod_claims(pod: Any, dra: DraObjects) -> list[tuple[str, str, ResourceClaim]]:
    """``foreachPodResourceClaim``: (pod claim name, source field, claim) per entry that
    resolves to a claim, in pod order. Raises :class:`ClaimLookupError` with upstream's
    message for a claim that does not exist, is being deleted or is not the pod's."""
    sources = pod.claim_sources
    names = pod.resource_claims
    if len(names) != len(sources) or any(n != s[0] for n, s in zip(names, sources)):
        sourced = {name for name, _, _ in sources}
        for name in names:
            if name not in sourced:  # a record made without the entry's source
                raise ClaimLookupError(f'pod "{pod.name}", spec.resourceClaim "{name}": '
                                       "unsupported: neither resourceClaimName nor "
                                       "resourceClaimTemplateName is set")
    statuses = dict(pod.claim_statuses) if pod.claim_statuses else {}
    out = []
    claim_of = dra.claim
    for name, claim_name, template in sources:
        if claim_name:
            source, found_name, must_own = "resourceClaimName", claim_name, False
        else:
            source, must_own = "resourceClaimTemplateName", True
            found_name = statuses.get(name)
            if found_name is None:
                raise ClaimLookupError(f'pod "{pod.name}": no claim status for '
                                       f'resourceClaimTemplateName "{template}"')
            if not found_name:
                continue  # the controller decided that no claim is needed
        claim = claim_of(pod.namespace, found_name)
        if claim is None:
            raise ClaimLookupError(f'resourceclaim.resource.k8s.io "{found_name}" not found')
        if claim.deleting:
            raise ClaimLookupError(f'resourceclaim "{claim.name}" is being deleted')
        if must_own and (claim.owner is None or claim.owner[2] != pod.uid):
            raise ClaimLookupError(f"ResourceClaim {pod.namespace}/{claim.name} was not "
                                   f"created for pod {pod.namespace}/{pod.name} (pod is not "
                                   "owner)")
        out.append((name, source, claim))
    return out


def reserved_claims(pod: Any, claims: Sequence[ResourceClaim],
                    allocations: Sequence[AllocationResult | None]) -> list[ResourceClaim]:
    """``Reserve`` and the writes of ``PreBind``: each claim the pod allocates
    (``allocations[i]`` not ``None``) gets the delete-protection finalizer and its allocation,
    and every claim not yet reserved for the pod gets the pod appended to
    ``status.reservedFor``; the claims that change, in order."""
    updated = []
    for claim, allocation in zip(claims, allocations):
        reserved = claim.is_reserved_for(pod.uid)
        if allocation is None and reserved:
            continue
        changes: dict[str, Any] = {}
        if allocation is not None:
            changes["allocation"] = allocation
            if FINALIZER not in claim.finalizers:
                changes["finalizers"] = (*claim.finalizers, FINALIZER)
        if not reserved:
            changes["reserved_for"] = (*claim.reserved_for, ("pods", pod.name, pod.uid))
        updated.append(evolved(claim, **changes))
    return updated
