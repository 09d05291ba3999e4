"""The ``local`` tool pack as the host mounts it: specs from the typed tools, calls to the typed pack.

Registering the plugin imports this module only; the typed tools (and through them the board
operations) load when the tools are first listed.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from typing import Any

from lorenz import Permissions, Settings, ToolContext, ToolResult, ToolSpec

from .options import pack_board_config, validate_pack_options
from .paths import env_references, resolve_board_dir

__all__ = ["LocalToolPack", "local_tool_specs"]


def local_tool_specs() -> list[ToolSpec]:
    """The pack's tools as advertised, in their fixed order."""
    return list(_specs())


class LocalToolPack:
    """Pack ``local``: ``local_update_status``, ``local_comment``, ``local_create_issue``,
    ``local_read_issue``, ``local_query``.

    Listing reads the typed tools' specs (which loads neither the board store nor the kit's call-time
    libraries); a call runs the typed pack."""

    name = "local"
    validates_arguments = False  # the host checks the published inputSchema, worded as always

    def tool_specs(self, settings: Settings) -> list[ToolSpec]:
        return local_tool_specs()

    def typed_pack(self) -> Any:
        """The kit ``Pack`` behind this provider (``lorenz lint`` checks its tools)."""
        return _typed_pack()

    def permissions(self, settings: Settings) -> Permissions:
        """Sandboxed (``server.sandboxed_packs``): its board directory, read-write, and the
        variables its configured path names (``HOME`` for ``~``)."""
        config = pack_board_config(settings)
        board = resolve_board_dir(config.path, cwd=os.getcwd(), env=os.environ)
        return Permissions(write=[str(board)], env=env_references(config.path))

    def validate_options(self, options: Mapping[str, Any]) -> None:
        """Check ``tools.local`` (keys ``path``, ``idPrefix``/``id_prefix``)."""
        validate_pack_options(options)

    async def execute_tool(self, name: str, input: Any, context: ToolContext) -> ToolResult:
        from .tools import cached_read  # the board operations load on the first call, not to list tools

        if name == "local_read_issue" and (cached := cached_read(input, context.settings)) is not None:
            return cached
        result: ToolResult = await _typed_pack().execute_tool(name, input, context)
        return result


@functools.cache
def _typed_pack() -> Any:
    from .kit import TypedLocalPack  # the typed tools: registering loads none

    return TypedLocalPack()


@functools.cache
def _specs() -> tuple[ToolSpec, ...]:
    from .kit import local_tools  # the typed tools: registering loads none

    return tuple(tool.spec() for tool in local_tools())
