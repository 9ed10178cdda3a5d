"""DefaultBinder (``plugins/defaultbinder/default_binder.go``): binds the pod with a
``v1.Binding`` to the chosen node; here the binding is recorded on the cycle."""

from __future__ import annotations

from typing import Any, ClassVar

import attrs

from ksched.framework.interfaces import Cycle
from ksched.status import Status

#: Bound: the status ``Bind`` returns, naming the plugin.
BOUND = Status(plugin="DefaultBinder")


@attrs.frozen
class Binding:
    """``v1.Binding``: the pod (namespace, name, uid) and the target node."""

    namespace: str
    name: str
    uid: str
    node: str


@attrs.frozen
class DefaultBinder:
    NAME: ClassVar[str] = "DefaultBinder"
    args: Any = None

    def bind(self, cycle: Cycle, node: str) -> Status:
        """``Bind``: ``POST pods/<name>/binding``; the Binding lands in ``cycle.data``."""
        pod = cycle.pod
        cycle.data["DefaultBinder/binding"] = Binding(pod.namespace, pod.name, pod.uid, node)
        return BOUND
