"""Lorenz plugin for Linear: the ``linear`` tracker and the ``linear_graphql`` tool pack.

Names load on first use, so registering the plugin (:mod:`.plugin`) does not import the client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lorenz import lazy_exports

_EXPORTS = {
    "DEFAULT_ENDPOINT": ".options",
    "LinearApiError": ".responses",
    "LinearClient": ".client",
    "LinearProject": ".normalize",
    "LinearState": ".normalize",
    "LinearTeam": ".normalize",
    "LinearToolPack": ".tools",
    "LinearTracker": ".tracker",
    "PaginationLimits": ".connections",
}

__all__ = list(_EXPORTS)


__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)


if TYPE_CHECKING:
    # `X as X`: mypy --strict (no implicit re-export) then sees `from lorenz_linear import X` as public.
    from .client import LinearClient as LinearClient
    from .connections import PaginationLimits as PaginationLimits
    from .normalize import LinearProject as LinearProject
    from .normalize import LinearState as LinearState
    from .normalize import LinearTeam as LinearTeam
    from .options import DEFAULT_ENDPOINT as DEFAULT_ENDPOINT
    from .responses import LinearApiError as LinearApiError
    from .tools import LinearToolPack as LinearToolPack
    from .tracker import LinearTracker as LinearTracker
