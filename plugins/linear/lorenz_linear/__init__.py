"""Lorenz plugin for Linear: the ``linear`` tracker and the ``linear_graphql`` tool pack."""

from __future__ import annotations

from .client import LinearApiError, LinearClient
from .connections import PaginationLimits
from .normalize import LinearProject, LinearState, LinearTeam
from .options import DEFAULT_ENDPOINT
from .tools import LinearToolPack
from .tracker import LinearTracker

__all__ = [
    "DEFAULT_ENDPOINT",
    "LinearApiError",
    "LinearClient",
    "LinearProject",
    "LinearState",
    "LinearTeam",
    "LinearToolPack",
    "LinearTracker",
    "PaginationLimits",
]
