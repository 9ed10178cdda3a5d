"""What-if sweeps: one study over a grid of scenarios around one cluster snapshot, on every
core of this machine or on a Ray cluster, into one table.

>>> import ksched
>>> base = ksched.Scenario("snapshot.json", pods="pending.yaml")        # doctest: +SKIP
>>> result = ksched.sweep(base, {"strategy": ["LeastAllocated", "MostAllocated"],
...                              "scale": [1, 1.5, 2]})                  # doctest: +SKIP
>>> result.to_pandas()                                                   # doctest: +SKIP

:class:`Scenario` is the base (:mod:`~ksched.sweep.scenario`); the parameters and how a
scenario's are applied are in :mod:`~ksched.sweep.params` and :mod:`~ksched.sweep.apply`; the
studies in :mod:`~ksched.sweep.studies`; where scenarios run in :mod:`~ksched.sweep.executors`;
the journal that makes a sweep resumable in :mod:`~ksched.sweep.store`; the table in
:mod:`~ksched.sweep.result`.
"""

from ksched.sweep.apply import Variant
from ksched.sweep.params import grid
from ksched.sweep.result import SweepResult
from ksched.sweep.run import sweep
from ksched.sweep.scenario import Scenario

__all__ = ["Scenario", "SweepResult", "Variant", "grid", "sweep"]
