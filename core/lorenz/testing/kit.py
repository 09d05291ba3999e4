"""The rest of a pack author's test kit: the host's own steps, one call each.

Parse and validate a workflow's settings (:func:`parse_config`, :func:`validate_dispatch_config`,
:func:`check_pack_settings`), open a workflow as ``lorenz serve`` does (:func:`open_workspace`), see
what a workflow mounts (:func:`mounted_packs`, :func:`mounted_skill_sources`), run one tool as the
host runs it (:func:`run_tool`) and render its result as a client reads it (:func:`result_text`),
lint a pack (:func:`lint_pack`) and run the ``lorenz`` command line (:func:`run_cli`). The bundled
packs are tested with exactly these.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lorenz.authoring.lint import lint_pack as lint
from lorenz.cli import main
from lorenz.contracts import ToolContext, ToolProvider
from lorenz.mounting.mount import execute_mounted_tool
from lorenz.mounting.mount import mounted_packs as mount
from lorenz.mounting.mount import mounted_skill_sources as skills
from lorenz.plugins.validate_settings import check_pack_settings, validate_dispatch_config
from lorenz.results import ToolResult
from lorenz.settings import parse_config
from lorenz.settings.model import Settings
from lorenz.toolcall.replies import call_result
from lorenz.workspace import Workspace
from lorenz.workspace import open_workspace as open_

if TYPE_CHECKING:
    from lorenz.authoring.diagnostics import Diagnostic
    from lorenz.plugins.registry import ToolRegistry, TrackerRegistry

__all__ = [
    "check_pack_settings",
    "lint_pack",
    "mounted_packs",
    "mounted_skill_sources",
    "open_workspace",
    "parse_config",
    "result_text",
    "run_cli",
    "run_tool",
    "validate_dispatch_config",
]


def open_workspace(
    workflow: str | os.PathLike[str] | None = None,
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    plugins: Sequence[object] = (),
) -> Workspace:
    """The workflow opened as ``lorenz serve`` opens it (installed plugins and ``plugins``), parsed,
    validated and mounted; raises the host's ``ConfigError`` (or mount error) on a bad workflow."""
    return open_(workflow, cwd=cwd, env=env, plugins=plugins)


def mounted_packs(settings: Settings, tools: ToolRegistry, trackers: TrackerRegistry) -> list[ToolProvider]:
    """The packs ``settings`` mount, from a discovery's ``tools`` and ``trackers``."""
    return mount(settings, tools, trackers)


def mounted_skill_sources(packs: Sequence[ToolProvider]) -> list[str]:
    """The skill directories the mounted ``packs`` ship, as absolute paths."""
    return skills(packs)


async def run_tool(pack: ToolProvider, name: str, arguments: Any, context: ToolContext) -> ToolResult:
    """One call of ``pack``'s tool ``name`` as the MCP host and ``lorenz call`` make it
    (:func:`lorenz.toolcall.call.call_tool`): arguments checked against the tool's ``inputSchema``,
    run within ``context.settings.server.tool_timeout_seconds`` and ``pack_concurrency``, the result
    checked against its ``outputSchema`` and ``max_result_bytes``; ``context.progress_sink`` receives
    what the tool reports. Never raises."""
    return await execute_mounted_tool([pack], name, arguments, context)


def result_text(result: ToolResult) -> str:
    """The text content an MCP client receives for ``result``."""
    return call_result(result).text


def lint_pack(pack: ToolProvider, settings: Settings | None = None) -> list[Diagnostic]:
    """Every ``lorenz lint`` diagnostic for ``pack``; :func:`~lorenz.testing.assert_pack_contract`
    fails a test on them."""
    return lint(pack, settings)


def run_cli(argv: Sequence[str]) -> int:
    """Run ``lorenz <argv>`` in-process and return its exit status (output goes to stdout/stderr)."""
    return main(list(argv))
