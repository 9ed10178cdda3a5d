"""ImageLocality kernel (``plugins/imagelocality/image_locality.go``)."""

from __future__ import annotations

import numpy as np

from ._jit import jit


@jit
def image_locality_scores(image_indptr, image_ids, image_sizes, image_num_nodes, nodes,
                          pod_images, total_num_nodes, min_threshold, max_threshold):
    """int64[n] scores in [0, 100].

    pod_images : int64[c] image id per container (init containers first; -1 when no node has it)
    Each present image adds ``int64(float64(size) * (float64(nodes_with_it) / total))``; the sum
    is clamped to ``[min_threshold, max_threshold]`` and scaled to 0..100.
    """
    out = np.zeros(nodes.shape[0], dtype=np.int64)
    for i in range(nodes.shape[0]):
        node = nodes[i]
        total = np.int64(0)
        for image in pod_images:
            if image < 0:
                continue
            for k in range(image_indptr[node], image_indptr[node + 1]):
                if image_ids[k] == image:
                    spread = np.float64(image_num_nodes[image]) / np.float64(total_num_nodes)
                    total += np.int64(np.float64(image_sizes[image]) * spread)
                    break
        total = min(max(total, min_threshold), max_threshold)
        out[i] = 100 * (total - min_threshold) // (max_threshold - min_threshold)
    return out
