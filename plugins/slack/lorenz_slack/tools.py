"""The ``slack`` tool pack: seven tools an agent uses on the Slack thread it was dispatched for.

There is deliberately no create tool: only humans create Slack issues. The tools are typed
:mod:`lorenz.authoring` tools (:mod:`.toolkit`); this provider loads them on first use, because every
``lorenz`` command registers every plugin and the kit (cattrs, jsonschema) must not load for that.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from lorenz import (
    Permissions,
    Settings,
    ToolContext,
    ToolResult,
    ToolSpec,
    needs_tracker_kind,
    unsupported_tool_failure,
)

from .catalog import TOOL_NAMES
from .options import slack_endpoint

if TYPE_CHECKING:
    from lorenz.authoring import Pack

    from .transport import SlackTransport

__all__ = ["SlackToolPack", "slack_tool_specs"]


def slack_tool_specs() -> list[ToolSpec]:
    """The seven tools, in their published order."""
    from .toolkit import TOOLS  # the typed tools: registering loads none

    return [tool.spec() for tool in TOOLS.values()]


TransportFactory = Callable[[Settings, ToolContext], "SlackTransport"]


class SlackToolPack:
    """The ``slack`` pack. It takes no ``tools.slack`` options (hence no ``validate_options``).

    It has no ``validates_arguments``: the host checks each call against the ``inputSchema`` first,
    then the tools read the arguments in the pack's own words.
    """

    name = "slack"

    def __init__(self, transport_factory: TransportFactory | None = None) -> None:
        self._transport_factory = transport_factory

    def permissions(self, settings: Settings) -> Permissions:
        """Sandboxed (``server.sandboxed_packs``): the configured Web API's host."""
        return Permissions.reaching(slack_endpoint(settings))

    def tool_specs(self, settings: Settings) -> Sequence[ToolSpec]:
        """The seven slack tools."""
        return slack_tool_specs()

    def typed_pack(self) -> Pack:
        """The :mod:`lorenz.authoring` pack behind this provider (``lorenz lint`` checks its tools)."""
        from .toolkit import SLACK_PACK  # the typed tools: registering loads none

        return SLACK_PACK

    def check_settings(self, settings: Settings) -> list[str]:
        """The token and channels are the slack tracker's (its ``validate_dispatch`` checks them)."""
        return needs_tracker_kind(settings, ("slack",), ("tracker.api_key", "tracker.channels"))

    async def execute_tool(self, name: str, input: Any, context: ToolContext) -> ToolResult:
        """Run a slack tool over the Web API through the host's HTTP client."""
        if name not in TOOL_NAMES:
            return unsupported_tool_failure(name, TOOL_NAMES)
        from .handlers import run_slack_tool  # the handlers and transport: on the first call

        factory = self._transport_factory
        transport = factory(context.settings, context) if factory is not None else None
        return await run_slack_tool(name, input, context, transport)
