"""Packages whose names load on first use (PEP 562), so importing one stays cheap: the core, the
host (which alone imports ``mcp``) and the bundled plugins, whose registration must not load their
clients."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    namespace: dict[str, Any], exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's ``__getattr__`` and ``__dir__``: ``exports`` maps each name to the module that
    defines it (absolute, or relative to the package); a name loaded once stays in ``namespace``.

    Use as ``__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)``."""
    package = namespace["__name__"]

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            msg = f"module {package!r} has no attribute {name!r}"
            raise AttributeError(msg)
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *exports})

    return __getattr__, __dir__
