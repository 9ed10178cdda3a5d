"""Constants of kube-scheduler v1.35.4, under the names upstream gives them.

Sources: ``k8s.io/kube-scheduler/framework/interface.go`` (score range),
``pkg/scheduler/util/pod_resources.go`` (non-zero scoring requests),
``pkg/scheduler/schedule_one.go`` (node sampling), ``apis/config/v1/default_plugins.go``.
"""

from __future__ import annotations

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0

#: Scoring defaults for a container that states no cpu / memory request.
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

#: ``numFeasibleNodesToFind``.
MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE = 0

#: ImageLocality thresholds (``imagelocality/image_locality.go``).
MB = 1024 * 1024
IMAGE_MIN_THRESHOLD = 23 * MB
IMAGE_MAX_CONTAINER_THRESHOLD = 1000 * MB

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"
#: The fixed leading columns of every resource matrix.
BASE_RESOURCES = (CPU, MEMORY, EPHEMERAL_STORAGE, PODS)

DEFAULT_SCHEDULER_NAME = "default-scheduler"

TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"

LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_ZONE = "topology.kubernetes.io/zone"
LABEL_REGION = "topology.kubernetes.io/region"
LABEL_ZONE_BETA = "failure-domain.beta.kubernetes.io/zone"
LABEL_REGION_BETA = "failure-domain.beta.kubernetes.io/region"

#: Host selection among the nodes tied at the top total score (ksched's option, not upstream's):
#: the one list every check of ``tie_break`` uses, in the order of the kernel codes
#: (:mod:`ksched.kernels.select`). ``heap`` is v1.35.4's own order (its score heap).
TIE_BREAKS = ("round-robin", "random", "heap")

#: ``ksched perf``'s default virtual cost of one scheduling attempt, in seconds (about the
#: 250 pods/s upstream's scheduler_perf measures; :mod:`ksched.perf.clock`).
PERF_CYCLE_SECONDS = 0.004

#: How several templates share the cluster (``capacity(order=...)``), each with what it
#: means; the CLI's help and the report's text say the same.
CAPACITY_ORDERS = {
    "independent": "each template alone on the cluster as given (answers do not add up)",
    "fill": "each template until it stops, in the given order, on what the ones before left",
    "interleave": "one copy of each template in turn, a template dropping out when it stops",
}
