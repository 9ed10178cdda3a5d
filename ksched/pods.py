"""Which pods the scheduler may treat alike: the signatures of pod classes.

Replicas share their spec. The fused loop compiles one *pod class* per distinct
:func:`class_signature` (every field but the pod's identity: labels, namespace and owner count,
as topology spreading counts pods by them and builds its default selector from them), and the
framework keeps node-static filter verdicts per distinct :func:`filter_signature` (also
leaving out the fields no filter reads). A pod that mounts claims is classed by its
:func:`spec_signature` and what its volumes add (:mod:`ksched.volume_classes`): replicas of a
StatefulSet mount claims of their own.
"""

from __future__ import annotations

import operator
from collections.abc import Callable

import attrs

from ksched.api import Pod

#: Pod fields that name a pod rather than say what it asks for.
IDENTITY_FIELDS = frozenset({"name", "uid"})
#: Pod fields no filter reads.
UNFILTERED_FIELDS = IDENTITY_FIELDS | {"nominated_node_name", "start_time", "creation_time"}


def _signature(left_out: frozenset[str]) -> Callable[[Pod], tuple]:
    """A getter of every :class:`~ksched.api.Pod` field but ``left_out``, as a tuple."""
    return operator.attrgetter(*(f.name for f in attrs.fields(Pod) if f.name not in left_out))


#: ``class_signature(pod)``: what decides a pod's class in the fused loop.
class_signature = _signature(IDENTITY_FIELDS)
#: ``filter_signature(pod)``: what the filters read of a pod.
filter_signature = _signature(UNFILTERED_FIELDS)
#: ``spec_signature(pod)``: :func:`class_signature` but the volumes.
spec_signature = _signature(IDENTITY_FIELDS | {"volumes"})

__all__ = ["IDENTITY_FIELDS", "UNFILTERED_FIELDS", "class_signature", "filter_signature",
           "spec_signature"]
