"""Packages whose names load on first use (PEP 562), so importing one stays cheap: the core, the
host (which alone imports ``mcp``) and the bundled plugins, whose registration must not load their
clients; and :class:`LazyPack`, a pack registered by name whose code loads when it is first used."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["LazyPack", "lazy_exports"]


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


class LazyPack:
    """A tool pack known by its ``name`` whose code loads on first use: ``target`` (``"module:attribute"``)
    names the callable that makes the real pack, imported and called the first time anything but
    ``name`` is asked of this one (its tools listed, a call, an optional member looked up). A plugin
    registers one so that installing it costs a command that does not mount it no import.

    The pack it makes must be named ``name``; its own members are then answered as they are. A lazy
    pack's optional members are checked when it loads, not when it registers. One that fails to load
    raises its error from ``tool_specs`` and ``execute_tool`` (the host reports the pack as failed) and
    has no optional members."""

    def __init__(self, name: str, target: str) -> None:
        self.name = name
        self._target = target
        self._pack: Any = None
        self._error: BaseException | None = None

    def load(self) -> Any:
        """The real pack, made on first call (a failure is raised again, not retried)."""
        if self._error is not None:
            raise self._error
        if self._pack is None:
            try:
                self._pack = self._make()
            except Exception as exc:
                self._error = exc
                raise
        return self._pack

    def _make(self) -> Any:
        module, _, attribute = self._target.partition(":")
        pack = getattr(importlib.import_module(module), attribute)()
        if getattr(pack, "name", None) != self.name:
            msg = f"{self._target} made a pack named {getattr(pack, 'name', None)!r}, registered as {self.name!r}"
            raise ValueError(msg)
        return pack

    def tool_specs(self, settings: Any) -> Any:
        return self.load().tool_specs(settings)

    async def execute_tool(self, name: str, input: Any, context: Any) -> Any:
        return await self.load().execute_tool(name, input, context)

    def __getattr__(self, member: str) -> Any:
        if member.startswith("__") or member in ("_target", "_pack", "_error"):  # copy, pickle, half-made
            raise AttributeError(member)
        try:
            pack = self.load()
        except Exception as exc:  # `getattr(pack, "health", None)` must not raise: the member is absent
            raise AttributeError(f"{member} (pack {self.name!r} did not load)") from exc
        return getattr(pack, member)

    def __repr__(self) -> str:
        return f"LazyPack({self.name!r}, {self._target!r})"
