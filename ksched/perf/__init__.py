"""Running upstream's scheduler_perf suite (``test/integration/scheduler_perf``) on ksched.

The modules follow the data: :mod:`~ksched.perf.config` reads ``performance-config.yaml``
into workloads; :mod:`~ksched.perf.gotemplate`, :mod:`~ksched.perf.decode` and
:mod:`~ksched.perf.objects` make the objects of their templates; :mod:`~ksched.perf.world`
keeps what ops created; :mod:`~ksched.perf.runner` runs a workload on the batch path or on
the :mod:`~ksched.perf.clock` simulator (ops as a :mod:`~ksched.perf.script`);
:mod:`~ksched.perf.results` and :mod:`~ksched.perf.report` write what upstream writes.
"""

from ksched.perf.config import Workload, load_workloads, select
from ksched.perf.runner import Outcome, run_workload, run_workloads

__all__ = ["Outcome", "Workload", "load_workloads", "run_workload", "run_workloads", "select"]
