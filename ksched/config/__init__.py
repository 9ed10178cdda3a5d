"""``KubeSchedulerConfiguration`` (``kubescheduler.config.k8s.io/v1``) loading, as kube-scheduler
v1.35.4 does it.

:func:`load_config` runs the three steps of ``cmd/kube-scheduler`` and raises
:class:`ConfigLoadError` with upstream's exact message at the first one that fails:

1. **decode** (``scheme.Codecs.UniversalDecoder``, :mod:`~ksched.config.decode`): strict
   decoding (case-sensitive field names, unknown and duplicate fields are errors), plugin args
   decoded by kind (``PluginConfig.decodeNestedObjects``), then v1 defaulting
   (:mod:`~ksched.config.defaults`): the default plugin set merged with the profile's plugins
   (``mergePlugins``) and default args for every plugin in use
   (``setDefaults_KubeSchedulerProfile``);
2. **validation** (``ValidateKubeSchedulerConfiguration``, :mod:`~ksched.config.validation`,
   and the plugin-args validators it calls, :mod:`~ksched.config.validation_pluginargs`), on
   the internal form (:mod:`~ksched.config.conversion`);
3. **framework** (``profile.NewMap`` / ``frameworkruntime.NewFramework``,
   :mod:`~ksched.config.framework`): plugin constructors (only NodeResourcesFit's args are
   checked there alone: ``validatePluginConfig`` looks them up under the wrong key),
   per-extension-point lists, the MultiPoint expansion, score weights.

:mod:`~ksched.config.loader` runs them and builds the profiles ksched runs. Feature gates are
those of v1.35.4 defaults (DynamicResourceAllocation and DRASchedulerFilterTimeout on;
StorageCapacityScoring, DRADeviceBindingConditions, GangScheduling and NodeDeclaredFeatures
off). The Go sources are cited per function.
"""

from __future__ import annotations

from ksched.config.defaults import DEFAULT_MULTI_POINT
from ksched.config.errors import ConfigLoadError
from ksched.config.framework import plugin_extension_points
from ksched.config.loader import SchedulerConfig, load_config
from ksched.config.types import ALL_POINTS, API_VERSION, KIND
from ksched.validation import go_duration, parse_go_duration

__all__ = ["ALL_POINTS", "API_VERSION", "DEFAULT_MULTI_POINT", "KIND", "ConfigLoadError",
           "SchedulerConfig", "go_duration", "load_config", "parse_go_duration",
           "plugin_extension_points"]
