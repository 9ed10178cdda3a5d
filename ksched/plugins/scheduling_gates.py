"""SchedulingGates (``plugins/schedulinggates/scheduling_gates.go``): a pod with
``spec.schedulingGates`` stays out of activeQ until every gate is removed."""

from __future__ import annotations

from typing import Any, ClassVar

import attrs

from ksched.api import Pod
from ksched.status import SUCCESS, Code, Status


@attrs.frozen
class SchedulingGates:
    NAME: ClassVar[str] = "SchedulingGates"
    args: Any = None

    def pre_enqueue(self, pod: Pod) -> Status:
        """``PreEnqueue``: UnschedulableAndUnresolvable while gates remain."""
        gates = getattr(pod, "scheduling_gates", ())
        if not gates:
            return SUCCESS
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                      (f"waiting for scheduling gates: [{' '.join(gates)}]",))
