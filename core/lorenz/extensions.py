"""What the host-extension hooks register (public API): catalog shapers (``lorenz_catalog``),
call-record sinks (``lorenz_call_record``) and CLI commands (``lorenz_register_commands``).

A shaper or sink provider is named like a :class:`~lorenz.MiddlewareProvider`: it does nothing
until a workflow lists its name in ``server.middleware``, and :meth:`create` builds it from that
workflow's ``server.middleware_options.<name>``. A command is there once its distribution is
installed, imported only when ``lorenz <name>`` runs. See docs/hooks.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from attrs import frozen

from .middleware import identities_of

if TYPE_CHECKING:
    import argparse

    from .contracts import Caller, ToolSpec
    from .settings.model import Settings

__all__ = [
    "CatalogProvider",
    "CatalogShaper",
    "Listing",
    "PluginCommand",
    "RecordSink",
    "RecordSinkProvider",
]


@frozen(kw_only=True)
class Listing:
    """Who asks for the catalog, and how: what a :class:`CatalogShaper` shapes it for (as a
    :class:`~lorenz.Call` says who calls; never the token itself)."""

    token_name: str | None = None
    caller: Caller | None = None
    transport: str = "in-process"
    protocol: str | None = None

    @property
    def identities(self) -> tuple[str, ...]:
        """As :attr:`lorenz.Call.identities`: ``subject:…``, ``client:…``, ``token:…`` or ``anonymous``."""
        return identities_of(self.token_name, self.caller)


@runtime_checkable
class CatalogShaper(Protocol):
    """Shapes the tools one caller sees: gets them in the host's order (after the caller's grant)
    and returns those it may see, in the order it sees them, each as given or with its
    ``description``, ``title`` or ``annotations`` changed (``attrs.evolve``). A tool it leaves out
    is not listed and cannot be called; one it adds or renames is ignored."""

    async def __call__(self, tools: tuple[ToolSpec, ...], listing: Listing) -> Sequence[ToolSpec]: ...


@runtime_checkable
class CatalogProvider(Protocol):
    """What a plugin registers with ``lorenz_catalog``: a ``name`` a workflow lists in
    ``server.middleware``, and :meth:`create`, which validates its options (raising
    :class:`~lorenz.ConfigError` naming the key at fault; no I/O) and builds the shaper."""

    name: str

    def create(self, options: Mapping[str, Any], settings: Settings) -> CatalogShaper: ...


@runtime_checkable
class RecordSink(Protocol):
    """Receives each finished call's record: the call log's line as a dict (``tool``, ``pack``,
    ``outcome``, ``duration_ms``, ``token``, ``error`` redacted, no argument value…; see
    docs/cli-json.md), after the answer went out, from a bounded queue of its own."""

    async def __call__(self, record: Mapping[str, Any]) -> None: ...


@runtime_checkable
class RecordSinkProvider(Protocol):
    """What a plugin registers with ``lorenz_call_record``: a ``name`` a workflow lists in
    ``server.middleware``, and :meth:`create` (validates its options, no I/O) building the sink."""

    name: str

    def create(self, options: Mapping[str, Any], settings: Settings) -> RecordSink: ...


def _no_arguments(parser: argparse.ArgumentParser) -> None:
    """A command with no arguments of its own."""


@frozen(kw_only=True)
class PluginCommand:
    """A ``lorenz <name>`` subcommand a plugin registers with ``lorenz_register_commands``.

    ``help`` is its line in ``lorenz --help``; ``arguments`` adds its arguments to its own
    ``argparse`` parser; ``run`` gets the parsed arguments and returns the exit status. Import
    what it needs inside ``run``: nothing of it loads for the other commands."""

    name: str
    help: str
    run: Callable[[argparse.Namespace], int]
    arguments: Callable[[argparse.ArgumentParser], None] = _no_arguments
    #: The paragraph atop ``lorenz <name> --help`` (``help`` when empty).
    description: str = ""
