"""The error :func:`ksched.config.load_config` raises, at the stage of ``cmd/kube-scheduler``
where kube-scheduler would stop."""

from __future__ import annotations

from ksched.errors import ConfigError

__all__ = ["ConfigLoadError"]


class ConfigLoadError(ConfigError):
    """A configuration kube-scheduler rejects.

    ``stage`` is ``"read"`` (the file cannot be read: Go's ``os`` words), ``"decode"``,
    ``"validation"`` or ``"framework"``; ``str(error)`` is upstream's message.
    """

    def __init__(self, stage: str, message: str) -> None:
        super().__init__(message)
        self.stage = stage
        self.message = message
