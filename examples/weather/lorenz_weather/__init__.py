"""lorenz-weather: an example third-party tool pack built with :mod:`lorenz.authoring`."""

from __future__ import annotations

from .tools import PACK

__all__ = ["PACK"]
