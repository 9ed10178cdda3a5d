"""What kube-controller-manager's resourceclaim controller does around the scheduler
(``pkg/controller/resourceclaim/controller.go``), for the simulator:

- :func:`generate_claims`: a new pod's ``resourceClaimTemplateName`` entries get a claim made
  from the template (``handleClaim``): named ``<pod>-<claim>-<suffix>``, controlled by the pod,
  and recorded in the pod's ``status.resourceClaimStatuses``. A template that does not exist
  makes no claim, so DynamicResources' PreEnqueue holds the pod.
- :func:`release_claims`: when a pod finishes or is deleted, it leaves ``status.reservedFor``
  of its claims (``syncClaim``); a claim reserved by nobody any more is deallocated (its
  allocation and the delete-protection finalizer dropped), and the claims generated for the
  pod are deleted with it (the garbage collector, or the controller for a finished pod).

The suffix is deterministic (upstream: five random characters from ``generateName``).
"""

from __future__ import annotations

import hashlib
import operator
from typing import Any

import attrs

from ksched.api import Pod
from ksched.api.fields import assembler
from ksched.dra.claims import FINALIZER, ResourceClaim
from ksched.dra.state import ClaimCache, DraObjects, evolved

__all__ = ["claims_created", "claims_released", "generate_claims", "generated_names",
           "release_claims"]

_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # apimachinery's utilrand alphanumerics


def _suffix(pod: Any, name: str) -> str:
    digest = hashlib.sha256(f"{pod.namespace}/{pod.name}/{pod.uid}/{name}".encode()).digest()
    return "".join(_ALPHABET[b % len(_ALPHABET)] for b in digest[:5])


def _generated_name(pod: Any, name: str) -> str:
    """The name of the claim made for ``pod``'s entry ``name``."""
    return f"{pod.name[:57]}-{name[:57]}-{_suffix(pod, name)}"


def generated_names(pod: Any) -> list[str]:
    """The names of the claims made for ``pod``'s template entries."""
    return [_generated_name(pod, name) for name, claim_name, _ in pod.claim_sources
            if not claim_name]


def generate_claims(pod: Any, dra: DraObjects) -> tuple[Any, list[ResourceClaim]]:
    """The pod with ``status.resourceClaimStatuses`` for its template entries, and the claims
    made for it (none for an entry that has a status already or whose template is missing)."""
    statuses = dict(pod.claim_statuses)
    made = []
    for name, claim_name, template_name in pod.claim_sources:
        if claim_name or name in statuses:
            continue
        template = dra.template(pod.namespace, template_name)
        if template is None:
            continue
        generated = _generated_name(pod, name)
        made.append(ResourceClaim(generated, pod.namespace, f"uid-{generated}", template.spec,
                                  owner=("Pod", pod.name, pod.uid)))
        statuses[name] = generated
    if not made:
        return pod, []
    order = [n for n, _, _ in pod.claim_sources if n in statuses]
    return _with_statuses(pod, tuple((n, statuses[n]) for n in order)), made


#: A Pod's fields, and a Pod made of their values as they are (no converter or check again).
_POD_FIELDS = tuple(f.name for f in attrs.fields(Pod))
_pod_values = operator.attrgetter(*_POD_FIELDS)
_assemble_pod = assembler(Pod, _POD_FIELDS)
_STATUSES = _POD_FIELDS.index("claim_statuses")


def _with_statuses(pod: Any, statuses: tuple[tuple[str, str], ...]) -> Any:
    """``attrs.evolve(pod, claim_statuses=statuses)``: the statuses are in their final form
    (a tuple of string pairs), the other fields a Pod's already."""
    if type(pod) is not Pod:
        return attrs.evolve(pod, claim_statuses=statuses)
    values = list(_pod_values(pod))
    values[_STATUSES] = statuses
    return _assemble_pod(values)


def release_claims(pod: Any, dra: DraObjects
                   ) -> tuple[list[ResourceClaim], list[tuple[str, str]]]:
    """The claims ``pod`` held once it is gone: (updated claims, (namespace, name) of the
    claims to delete)."""
    updated, deleted = [], []
    statuses = dict(pod.claim_statuses)
    names = [claim_name or statuses.get(name, "") for name, claim_name, _ in pod.claim_sources]
    for claim_name in dict.fromkeys(n for n in names if n):
        claim = dra.claim(pod.namespace, claim_name)
        if claim is None:
            continue
        if claim.owner is not None and claim.owner[2] == pod.uid:
            deleted.append((claim.namespace, claim.name))
            continue
        if not claim.is_reserved_for(pod.uid):
            continue
        reserved = tuple(r for r in claim.reserved_for if r[2] != pod.uid)
        changes: dict[str, Any] = {"reserved_for": reserved}
        if not reserved:
            changes["allocation"] = None
            changes["finalizers"] = tuple(f for f in claim.finalizers if f != FINALIZER)
        updated.append(evolved(claim, **changes))
    return updated, deleted


def claims_created(pod: Any, cache: ClaimCache) -> tuple[Any, bool]:
    """A new pod as the controller leaves it: its generated claims written to ``cache``.
    Returns the pod and whether claims were made."""
    if not pod.claim_sources:
        return pod, False
    pod, made = generate_claims(pod, cache.current)
    if made:
        cache.write(made)
    return pod, bool(made)


def claims_released(pod: Any, cache: ClaimCache) -> bool:
    """A pod gone (finished, deleted, evicted): its claims released in ``cache``. Returns
    whether a claim changed."""
    if not pod.claim_sources:
        return False
    updated, deleted = release_claims(pod, cache.current)
    if updated or deleted:
        cache.write(updated, deleted)
    return bool(updated or deleted)
