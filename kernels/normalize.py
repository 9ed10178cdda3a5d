"""Score normalisation (``plugins/helper/normalize_score.go``)."""

from __future__ import annotations

import numpy as np

from ._jit import jit


@jit
def default_normalize_score(scores, max_priority, reverse):
    """``DefaultNormalizeScore``, in place.

    scores : int64[n], non-negative. Scaled to ``max_priority * s // max(s)``; with ``reverse``
    the result is ``max_priority - that``. When every score is 0, reverse sets all to
    ``max_priority`` and forward leaves them at 0.
    """
    max_count = np.int64(0)
    for s in scores:
        if s > max_count:
            max_count = s
    if max_count == 0:
        if reverse:
            for i in range(scores.shape[0]):
                scores[i] = max_priority
        return
    for i in range(scores.shape[0]):
        value = max_priority * scores[i] // max_count
        scores[i] = max_priority - value if reverse else value
