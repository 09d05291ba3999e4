"""Lorenz plugin for Linear: the ``linear`` tracker and the ``linear_graphql`` tool pack.

Names load on first use, so registering the plugin (:mod:`.plugin`) does not import the client.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "DEFAULT_ENDPOINT": ".options",
    "LinearApiError": ".client",
    "LinearClient": ".client",
    "LinearProject": ".normalize",
    "LinearState": ".normalize",
    "LinearTeam": ".normalize",
    "LinearToolPack": ".tools",
    "LinearTracker": ".tracker",
    "PaginationLimits": ".connections",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        msg = f"module {__name__!r} has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


if TYPE_CHECKING:
    # `X as X`: mypy --strict (no implicit re-export) then sees `from lorenz_linear import X` as public.
    from .client import LinearApiError as LinearApiError
    from .client import LinearClient as LinearClient
    from .connections import PaginationLimits as PaginationLimits
    from .normalize import LinearProject as LinearProject
    from .normalize import LinearState as LinearState
    from .normalize import LinearTeam as LinearTeam
    from .options import DEFAULT_ENDPOINT as DEFAULT_ENDPOINT
    from .tools import LinearToolPack as LinearToolPack
    from .tracker import LinearTracker as LinearTracker
