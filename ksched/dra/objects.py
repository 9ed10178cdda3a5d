"""resource.k8s.io/v1 objects: the public names of :mod:`ksched.dra.devices` (DeviceClass,
ResourceSlice), :mod:`ksched.dra.claims` (ResourceClaim, ResourceClaimTemplate) and the limits
of :mod:`ksched.dra.fields`, in one place for the readers of :mod:`ksched.io`."""

from __future__ import annotations

from ksched.dra.claims import (
    FINALIZER,
    AllocationResult,
    ClaimSpec,
    DeviceRequest,
    DeviceResult,
    ExactRequest,
    ResourceClaim,
    ResourceClaimTemplate,
    read_resource_claim,
    read_resource_claim_template,
)
from ksched.dra.devices import (
    Device,
    DeviceClass,
    ResourceSlice,
    read_device_class,
    read_resource_slice,
)
from ksched.dra.fields import FIRST_AVAILABLE_MAX, RESULTS_MAX, check_unique

__all__ = ["AllocationResult", "ClaimSpec", "Device", "DeviceClass", "DeviceRequest",
           "DeviceResult", "ExactRequest", "FINALIZER", "FIRST_AVAILABLE_MAX", "RESULTS_MAX",
           "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice", "check_unique",
           "read_device_class", "read_resource_claim", "read_resource_claim_template",
           "read_resource_slice"]
