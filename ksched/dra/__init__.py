"""Dynamic Resource Allocation: resource.k8s.io/v1 objects (:mod:`ksched.dra.objects`), CEL
device selectors (:mod:`ksched.dra.cel`), the structured allocator
(:mod:`ksched.dra.allocator`) and the objects a cluster state carries with the claim assume
cache (:mod:`ksched.dra.state`). The DynamicResources plugin is
:mod:`ksched.plugins.dynamic_resources`."""
