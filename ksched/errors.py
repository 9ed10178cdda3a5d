"""Errors raised by ksched."""

from __future__ import annotations


class KschedError(Exception):
    """Base class of every error ksched raises on purpose."""


class KschedWarning(UserWarning):
    """Base class of ksched's warnings (input it read but left out or ignored); the command
    line prints each as one line, ``ksched: warning: <message>``."""


class InvalidObjectError(KschedError, ValueError):
    """A Kubernetes object in the input is malformed.

    The message names the object and the field path, as
    ``pod default/web-1: spec.containers[0].resources.requests.cpu: invalid quantity "1.5.0"``.
    """

    def __init__(self, obj: str, path: str, problem: str) -> None:
        self.obj = obj
        self.path = path
        self.problem = problem
        where = f"{obj}: {path}: " if path else f"{obj}: "
        super().__init__(where + problem)


class UnsupportedFeatureError(KschedError, NotImplementedError):
    """The input uses a scheduling feature that ksched does not implement yet."""


class ConfigError(KschedError, ValueError):
    """A scheduler configuration or profile is invalid."""


class ArgumentError(KschedError, ValueError):
    """A library function was called with an argument it cannot take (a wrong type, an
    out-of-range option, a pod where a cluster belongs, ...)."""


class ClusterAccessError(KschedError, ConnectionError):
    """A live cluster could not be read: a bad kubeconfig or context, a server that cannot be
    reached, or an API error (``status`` holds the HTTP status where there was one)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        self.status = status
        super().__init__(message)
