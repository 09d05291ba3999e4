"""The ``linear`` tool pack: ``linear_graphql``, any GraphQL operation with Lorenz's Linear credentials.

The tool is a typed tool of the authoring kit (:mod:`.kit`, loaded by the first listing or call, not
at registration); :class:`LinearToolPack` serves it as the pack always answered: the result as the
pretty JSON text it always was, failures with the messages they always had (now with a reason,
``retryable`` and a recovery where one is declared).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lorenz import Permissions, RetryPolicy, Settings, ToolContext, ToolResult, ToolSpec, unsupported_tool_failure

from .options import tool_credentials, validate_tool_options

if TYPE_CHECKING:
    from .kit import TypedLinearPack
    from .transport import Clock, Sleep

__all__ = ["LINEAR_GRAPHQL", "SKILL_DIR", "LinearToolPack", "linear_tool_specs"]

LINEAR_GRAPHQL = "linear_graphql"
SKILL_DIR = Path(__file__).resolve().parent / "skills" / "lorenz-linear"


def linear_tool_specs() -> list[ToolSpec]:
    """The pack's one tool."""
    return list(LinearToolPack().tool_specs(Settings()))


class LinearToolPack:
    """Pack ``linear``. Forwards any query or mutation as-is: safety rests on the key's scope and the
    bundled ``lorenz-linear`` skill. ``sleep``/``now``/``policy`` tune the 429 retry loop (tests; the
    default policy is :data:`~.transport.LINEAR_RETRY_POLICY`).

    It has no ``validates_arguments``: the host checks each call against the ``inputSchema`` first,
    then the tool reads the arguments in its own words."""

    name = "linear"

    def __init__(
        self,
        *,
        policy: RetryPolicy | None = None,
        sleep: Sleep | None = None,
        now: Clock | None = None,
    ) -> None:
        self.skills: tuple[str, ...] = (str(SKILL_DIR),)
        self._tuning = (policy, sleep, now)
        self._typed: TypedLinearPack | None = None

    def typed_pack(self) -> TypedLinearPack:
        """The kit ``Pack`` behind this provider (``lorenz lint`` checks its tool)."""
        if self._typed is None:
            from .kit import TypedLinearPack, linear_tool  # the typed tools: registering loads none

            self._typed = TypedLinearPack(linear_tool(*self._tuning))
        return self._typed

    def tool_specs(self, settings: Settings) -> Sequence[ToolSpec]:
        return self.typed_pack().tool_specs(settings)

    def permissions(self, settings: Settings) -> Permissions:
        """Sandboxed (``server.sandboxed_packs``): the configured GraphQL endpoint's host."""
        return Permissions.reaching(tool_credentials(settings).endpoint)

    def validate_options(self, options: Mapping[str, Any]) -> None:
        """``tools.linear`` accepts ``apiKey``/``api_key`` and ``endpoint``, all strings."""
        validate_tool_options(options)

    def check_settings(self, settings: Settings) -> list[str]:
        """Without a key (``tools.linear`` or a linear tracker's) every call fails."""
        if tool_credentials(settings).api_key:
            return []
        return ["tools.linear.api_key is required (or a linear tracker's tracker.api_key)"]

    async def execute_tool(self, name: str, input: Any, context: ToolContext) -> ToolResult:
        if name != LINEAR_GRAPHQL:
            return unsupported_tool_failure(name, [LINEAR_GRAPHQL])
        if isinstance(input, str):  # a bare string has always been the query
            input = {"query": input}
        result = await self.typed_pack().execute_tool(name, input, context)
        # A plain result: the host renders it as the pretty JSON the tool has always sent.
        return ToolResult(success=result.success, result=result.result, error=result.error)
