"""What stands in for a plugin discovery surveyed in a child instead of importing it: stubs of its
packs and trackers, and its commands as names to list (:func:`lorenz.isolation.survey.stand_ins_for`
builds them from the survey)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from lorenz.extensions import PluginCommand
from lorenz.hookspecs import hookimpl

if TYPE_CHECKING:
    from lorenz.contracts import ToolSpec
    from lorenz.sandbox.permissions import Permissions

    from .protocol import Source

__all__ = ["IsolatedPackStub", "StandIn", "TrackerStub"]


class IsolatedPackStub:
    """A pack discovery left unimported because it runs in a process of its own; mounting puts
    the process's proxy in its place (:class:`lorenz.isolation.IsolationPool`)."""

    def __init__(
        self,
        name: str,
        source: Source,
        permissions: Permissions | None = None,
        *,
        settings_dependent: bool = False,
        listed_specs: Sequence[ToolSpec] | None = None,
    ) -> None:
        self.name = name
        self.isolation_source = source
        #: Its tools as its survey listed them without settings (``None``: listing them raised).
        self.listed_specs = None if listed_specs is None else tuple(listed_specs)
        #: What the pack declares (read in its survey process): mounting sandboxes it with them.
        self.permissions = permissions
        #: Its permissions are a function of its settings: computed in a child once they are known.
        self.permissions_depend_on_settings = settings_dependent

    def _refuse(self) -> NoReturn:
        msg = (
            f"pack {self.name} was surveyed in a child, not imported here, and was not started (it runs in a"
            " process of its own, or the workflow mounts it without naming it: add it to `tools:`)"
        )
        raise RuntimeError(msg)

    def tool_specs(self, settings: Any) -> list[Any]:
        self._refuse()

    async def execute_tool(self, name: str, input: Any, context: Any) -> Any:
        self._refuse()


class TrackerStub:
    """A tracker of a plugin the host surveyed instead of importing: a kind to list, and no
    client (a workflow using it has the host import the plugin)."""

    def __init__(self, kind: str, source: Source) -> None:
        self.kind = kind
        self.isolation_source = source

    def create_client(self, settings: Any, context: Any) -> NoReturn:
        msg = f"tracker {self.kind} of {self.isolation_source.label} was listed, not imported"
        raise RuntimeError(msg)


class StandIn:
    """Registers the stubs of a plugin that was surveyed instead of imported. ``in_host``: those of
    its packs that run in the host when mounted (not isolated)."""

    def __init__(
        self,
        stubs: Sequence[IsolatedPackStub],
        trackers: Sequence[TrackerStub] = (),
        in_host: frozenset[str] = frozenset(),
        commands: Mapping[str, str] | None = None,
    ) -> None:
        self.stubs = tuple(stubs)
        self.trackers = tuple(trackers)
        self.in_host = in_host
        self.commands = dict(commands or {})

    @hookimpl
    def lorenz_register_tool_packs(self, register: Any) -> None:
        for stub in self.stubs:
            register(stub)

    @hookimpl
    def lorenz_register_trackers(self, register: Any) -> None:
        for tracker in self.trackers:
            register(tracker)

    @hookimpl
    def lorenz_register_commands(self, register: Any) -> None:
        for name, line in self.commands.items():  # listed only: running one imports its plugin
            register(PluginCommand(name=name, help=line, run=_surveyed_command))


def _surveyed_command(args: Any) -> NoReturn:
    raise RuntimeError("a surveyed plugin's command runs only once its plugin is imported")
