"""The ``local`` tool pack as the host mounts it: specs from the typed tools, calls to the typed pack.

Registering the plugin imports this module only. Listing reads the typed tools' specs as written to
``specs.json`` (``python -m lorenz_local.pack`` rewrites it; a test checks it is what the kit
generates), so ``lorenz tools`` loads neither the kit nor its models; the typed tools (and through
them the board operations) load on the first call.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Mapping
from pathlib import Path
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


#: The typed tools' specs in their wire form, as :func:`generated_specs` writes them.
SPECS_FILE = Path(__file__).with_name("specs.json")


@functools.cache
def _specs() -> tuple[ToolSpec, ...]:
    return tuple(
        ToolSpec(
            name=wire["name"],
            description=wire["description"],
            input_schema=wire["inputSchema"],
            title=wire.get("title"),
            annotations=wire.get("annotations"),
            output_schema=wire.get("outputSchema"),
        )
        for wire in json.loads(SPECS_FILE.read_text(encoding="utf-8"))
    )


def generated_specs() -> str:
    """The text of :data:`SPECS_FILE` as the typed tools generate it now."""
    from .kit import local_tools  # the typed tools: only to write the file

    return json.dumps([tool.spec().to_wire() for tool in local_tools()], indent=1, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    SPECS_FILE.write_text(generated_specs(), encoding="utf-8")
