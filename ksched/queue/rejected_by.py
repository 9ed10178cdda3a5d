"""unschedulablePods by rejecting plugin: the pods an event only some plugins registered for
can move, found without a walk over the whole pool.

Upstream's ``movePodsToActiveOrBackoffQueue`` asks every pod of ``unschedulablePods`` and
``isPodWorthRequeuing`` skips (``queueSkip``) each one whose rejecting plugins
(``UnschedulablePlugins`` and ``PendingPlugins``) registered no hint for the event; only pods
rejected by a registered plugin can move. The Simulator sends AssignedPodAdd on every bind, so
it picks those pods here instead of asking thousands of pods rejected by others.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ksched.queue.queued_pod_info import QueuedPodInfo

__all__ = ["RejectedBy"]


class RejectedBy:
    """The parked pods per rejecting plugin, for the plugins asked about so far (the first
    question walks the pool once; from then on each park notes the pod). An entry is dropped
    when read if its pod is no longer parked with that plugin among its rejectors; each park
    notes the pod again, so one entry per pod and plugin is kept.

    Examples
    --------
    >>> from ksched.api import Pod
    >>> info = QueuedPodInfo(pod=Pod(name="a"), timestamp=0.0,
    ...                      unschedulable_plugins={"InterPodAffinity"})
    >>> index = RejectedBy()
    >>> [i.key for i in index.pods(["InterPodAffinity"], {info.key: info})]
    ['default/a']
    >>> index.pods(["NodeResourcesFit"], {info.key: info}), index.pods(["InterPodAffinity"], {})
    ([], [])
    """

    def __init__(self) -> None:
        self._by_plugin: dict[str, dict[str, QueuedPodInfo]] = {}

    def add(self, info: QueuedPodInfo) -> None:
        """Note ``info``, just parked, under each plugin asked about that rejected it."""
        for plugin, entries in self._by_plugin.items():
            if _rejected(info, plugin):
                entries[info.key] = info

    def pods(self, plugins: Iterable[str], parked: Mapping[str, QueuedPodInfo]
             ) -> list[QueuedPodInfo]:
        """The pods of ``parked`` (unschedulablePods by key) that one of ``plugins`` rejected,
        each once, gated pods included."""
        out: dict[str, QueuedPodInfo] = {}
        for plugin in plugins:
            entries = self._by_plugin.get(plugin)
            if entries is None:
                entries = self._by_plugin[plugin] = {
                    key: info for key, info in parked.items() if _rejected(info, plugin)}
            for key, info in list(entries.items()):
                if parked.get(key) is not info or not _rejected(info, plugin):
                    del entries[key]
                else:
                    out.setdefault(key, info)
        return list(out.values())


def _rejected(info: QueuedPodInfo, plugin: str) -> bool:
    """Whether ``plugin`` is one of the pod's rejectors (``UnschedulablePlugins`` or
    ``PendingPlugins``)."""
    return plugin in info.unschedulable_plugins or plugin in info.pending_plugins
