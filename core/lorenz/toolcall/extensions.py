"""The host extensions a workflow turns on: every name in ``server.middleware``, built once.

A name turns on what installed plugins registered under it: a call middleware
(``lorenz_call_middleware``), a catalog shaper (``lorenz_catalog``), a call-record sink
(``lorenz_call_record``), or several of them. Each provider's ``create`` gets that name's
``server.middleware_options`` entry; a name nothing provides, or options for a name not listed,
is a :class:`~lorenz.ConfigError` naming it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from attrs import frozen

from lorenz.plugins.containment import PluginError, call_plugin
from lorenz.plugins.model import Discovery
from lorenz.settings.errors import ConfigError
from lorenz.settings.model import Settings
from lorenz.settings.suggest import did_you_mean, shown

from .middleware import Layer

__all__ = ["Extensions", "Named", "build_extensions"]


@frozen
class Named:
    """One configured catalog shaper or call-record sink, under the name the workflow gave it."""

    name: str
    obj: Any


@frozen
class Extensions:
    """The workflow's middleware layers, catalog shapers and call-record sinks, each in
    ``server.middleware``'s order (``Extensions()``: none, the common case)."""

    layers: tuple[Layer, ...] = ()
    shapers: tuple[Named, ...] = ()
    sinks: tuple[Named, ...] = ()


#: ``(what it is, Discovery field)``, in the order a name's providers are created.
_KINDS = (("middleware", "middleware"), ("catalog shaper", "catalog"), ("call-record sink", "sinks"))


def build_extensions(settings: Settings, discovery: Discovery) -> Extensions:
    """What ``server.middleware`` names, created from its options; raises :class:`ConfigError`
    naming an unknown name (with a did-you-mean and what is installed) or a provider's complaint."""
    server = settings.server
    if not server.middleware and not server.middleware_options:
        return Extensions()
    for key in server.middleware_options:
        if key not in server.middleware:
            msg = (
                f"server.middleware_options.{shown(key)}: {shown(key)} is not listed in server.middleware"
                f"{did_you_mean(key, server.middleware)}; options apply only to middleware the workflow turns on"
            )
            raise ConfigError(msg)
    installed: dict[str, dict[str, Any]] = {
        field: {provider.name.strip(): provider for provider in getattr(discovery, field)} for _, field in _KINDS
    }
    every = sorted({name for providers in installed.values() for name in providers})
    built: dict[str, list[tuple[str, Any]]] = {field: [] for _, field in _KINDS}
    for name in server.middleware:
        if not any(name in providers for providers in installed.values()):
            hint = did_you_mean(name, every) or f" (installed: {', '.join(every) or 'none'})"
            raise ConfigError(f"server.middleware: unknown middleware {shown(name)}{hint}")
        options = server.middleware_options.get(name, {})
        for kind, field in _KINDS:
            provider = installed[field].get(name)
            if provider is not None:
                built[field].append((name, _create(kind, name, provider, options, settings)))
    return Extensions(
        layers=tuple(Layer(name, obj) for name, obj in built["middleware"]),
        shapers=tuple(Named(name, obj) for name, obj in built["catalog"]),
        sinks=tuple(Named(name, obj) for name, obj in built["sinks"]),
    )


def _create(kind: str, name: str, provider: Any, options: Mapping[str, Any], settings: Settings) -> Any:
    try:
        obj = call_plugin(f"{kind} {name}", "create", provider.create, options, settings)
    except PluginError as exc:
        if isinstance(exc.original, ConfigError):
            raise ConfigError(f"server.middleware_options.{name}: {exc.original}") from None
        raise ConfigError(f"server.middleware: {name}: {exc}") from None
    if not callable(obj):
        msg = f"server.middleware: {name}: its {kind}'s create() returned {type(obj).__name__}, not a {kind}"
        raise ConfigError(msg)
    return obj
