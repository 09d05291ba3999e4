"""``validate_dispatch_config``: can these settings dispatch, with these plugins? (core.md §4.4)"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, ParamSpec, TypeVar

from .errors import ConfigError
from .model import Settings

if TYPE_CHECKING:
    from ..registry import ToolRegistry, TrackerRegistry

__all__ = ["validate_dispatch_config"]

P = ParamSpec("P")
R = TypeVar("R")


def validate_dispatch_config(settings: Settings, trackers: TrackerRegistry, tools: ToolRegistry | None = None) -> None:
    """Check the tracker kind is registered, let its provider veto, then check ``tools:``.

    In order: ``tracker.kind is required`` / ``unsupported tracker.kind: …``; the provider's
    ``validate_dispatch``; then, only when ``tools`` is given, for each ``tools.<pack>``:
    ``unsupported tool pack: …``, ``tools.<pack> is not supported by the "<pack>" pack`` (options
    given to a pack without ``validate_options``), or the pack's own ``validate_options``.
    Raises :class:`ConfigError` with the first problem's message.
    """
    provider = _call(trackers.require, settings.tracker.kind)
    validate = getattr(provider, "validate_dispatch", None)
    if callable(validate):
        _call(validate, settings)
    if tools is None or settings.tool_options is None:
        return
    for name, options in settings.tool_options.items():
        pack = _call(tools.require, name)
        validate_options = getattr(pack, "validate_options", None)
        if callable(validate_options):
            _call(validate_options, options)
        elif options:
            msg = f'tools.{name} is not supported by the "{name}" pack'
            raise ConfigError(msg)


def _call(function: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    """Run a registry lookup or plugin hook; its message passes through as a ConfigError."""
    try:
        return function(*args, **kwargs)
    except ConfigError:
        raise
    except Exception as exc:
        raise ConfigError(str(exc)) from exc
