"""PrioritySort (``plugins/queuesort/priority_sort.go``): the activeQ order."""

from __future__ import annotations

from typing import Any, ClassVar

import attrs


@attrs.frozen
class PrioritySort:
    NAME: ClassVar[str] = "PrioritySort"
    args: Any = None

    def less(self, a: Any, b: Any) -> bool:
        """Higher ``spec.priority`` first; equal priorities by earlier queue timestamp."""
        if a.pod.priority != b.pod.priority:
            return a.pod.priority > b.pod.priority
        return a.timestamp < b.timestamp
