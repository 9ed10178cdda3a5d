"""The plugins' references: plain-Python transliterations of upstream's Go code over
NodeInfo records, line by line in meaning, that the vectorised plugins are tested against.

The small plugins keep theirs beside them (``reference_filter`` / ``reference_score`` in their
own modules); the two large ones have theirs here.
"""
