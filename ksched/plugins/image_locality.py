"""ImageLocality (``plugins/imagelocality/image_locality.go``).

Favours nodes that already hold the pod's images, each image weighted by its size and by how
widely it is spread over the cluster.
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np

from ksched.api import Node, Pod
from ksched.constants import IMAGE_MAX_CONTAINER_THRESHOLD, IMAGE_MIN_THRESHOLD
from ksched.framework.capabilities import Normalization, ScoreKind
from ksched.framework.interfaces import Cycle, NodeIndices
from ksched.kernels import image_locality as kernels
from ksched.state import ClusterState


def normalized_image_name(name: str) -> str:
    """``normalizedImageName``: add ``:latest`` when the name has no tag."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def pod_images(pod: Pod) -> list[str]:
    """Init containers' images first, then the app containers'."""
    return [normalized_image_name(c.image) for c in pod.init_containers + pod.containers]


def max_threshold(pod: Pod) -> int:
    return IMAGE_MAX_CONTAINER_THRESHOLD * (len(pod.init_containers) + len(pod.containers))


@attrs.frozen
class ImageLocality:
    NAME: ClassVar[str] = "ImageLocality"
    SCORE_KIND: ClassVar[ScoreKind] = ScoreKind.NODE_STATIC
    NORMALIZATION: ClassVar[Normalization] = Normalization.NONE
    args: Any = None

    def judged_by_node_class(self, pod: Pod) -> bool:
        """Images are part of a node's class (their spread is the cluster's)."""
        return True

    def score(self, cycle: Cycle, nodes: NodeIndices) -> np.ndarray:
        state, pod = cycle.state, cycle.pod
        images = np.array([state.image_index.get(name, -1) for name in pod_images(pod)],
                          dtype=np.int64)
        return kernels.image_locality_scores(
            state.image_indptr, state.image_ids, state.image_sizes, state.image_num_nodes, nodes,
            images, state.num_nodes, IMAGE_MIN_THRESHOLD, max_threshold(pod))


def reference_score(pod: Pod, node: Node, state: ClusterState) -> int:
    """Sizes and spreads come from the whole cluster (the scheduler cache's image states)."""
    held = {name for image in node.images for name in image.names}
    total = 0
    for name in pod_images(pod):
        if name in held:
            image = state.image_index[name]
            spread = float(state.image_num_nodes[image]) / float(state.num_nodes)
            total += int(float(state.image_sizes[image]) * spread)
    high = max_threshold(pod)
    total = min(max(total, IMAGE_MIN_THRESHOLD), high)
    return 100 * (total - IMAGE_MIN_THRESHOLD) // (high - IMAGE_MIN_THRESHOLD)
