"""Lorenz: tool packs and issue trackers as plugins, served to AI agents over MCP.

The public API for plugin authors. Names are imported lazily so ``import lorenz`` (and the CLI)
stays fast; heavy dependencies (``mcp``, ``starlette``) load only when serving.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    # contracts
    "ToolSpec": "lorenz.contracts",
    "ToolContext": "lorenz.contracts",
    "ToolProvider": "lorenz.contracts",
    "TrackerProvider": "lorenz.contracts",
    "TrackerContext": "lorenz.contracts",
    "RuntimeTrackerClient": "lorenz.contracts",
    # results
    "ToolResult": "lorenz.results",
    "tool_success": "lorenz.results",
    "tool_failure": "lorenz.results",
    "unsupported_tool_failure": "lorenz.results",
    "error_message": "lorenz.results",
    # tool arguments
    "ArgumentError": "lorenz.arguments",
    "as_arguments": "lorenz.arguments",
    "require_str": "lorenz.arguments",
    "optional_str": "lorenz.arguments",
    # issues
    "Issue": "lorenz.issue",
    "IssueRef": "lorenz.issue",
    "IssueNormalizationError": "lorenz.issue",
    "TrackerComment": "lorenz.issue",
    "ISSUE_STATE_TYPES": "lorenz.issue",
    "normalize_issue": "lorenz.issue",
    "normalize_state_type": "lorenz.issue",
    "default_state_type": "lorenz.issue",
    # registries, plugins, mounting
    "ToolRegistry": "lorenz.registry",
    "TrackerRegistry": "lorenz.registry",
    "RegistryError": "lorenz.registry",
    "hookimpl": "lorenz.hookspecs",
    "discover": "lorenz.plugins",
    "make_manager": "lorenz.plugins",
    "Discovery": "lorenz.plugins",
    "mounted_pack_names": "lorenz.mount",
    "mounted_tool_specs": "lorenz.mount",
    "execute_mounted_tool": "lorenz.mount",
    "MountError": "lorenz.mount",
    # the read-only query DSL
    "QueryError": "lorenz.query",
    "parse_query_spec": "lorenz.query",
    "apply_query": "lorenz.query",
    "parse_select": "lorenz.query",
    "pick_fields": "lorenz.query",
    "parse_filter": "lorenz.query",
    "matches_filter": "lorenz.query",
    # settings
    "Settings": "lorenz.settings.model",
    "TrackerSettings": "lorenz.settings.model",
    "ServerSettings": "lorenz.settings.model",
    "DispatchSettings": "lorenz.settings.model",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        msg = f"module 'lorenz' has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


if TYPE_CHECKING:
    from .arguments import ArgumentError, as_arguments, optional_str, require_str
    from .contracts import (
        RuntimeTrackerClient,
        ToolContext,
        ToolProvider,
        ToolSpec,
        TrackerContext,
        TrackerProvider,
    )
    from .hookspecs import hookimpl
    from .issue import (
        ISSUE_STATE_TYPES,
        Issue,
        IssueNormalizationError,
        IssueRef,
        TrackerComment,
        default_state_type,
        normalize_issue,
        normalize_state_type,
    )
    from .mount import MountError, execute_mounted_tool, mounted_pack_names, mounted_tool_specs
    from .plugins import Discovery, discover, make_manager
    from .query import (
        QueryError,
        apply_query,
        matches_filter,
        parse_filter,
        parse_query_spec,
        parse_select,
        pick_fields,
    )
    from .registry import RegistryError, ToolRegistry, TrackerRegistry
    from .results import ToolResult, error_message, tool_failure, tool_success, unsupported_tool_failure
    from .settings.model import DispatchSettings, ServerSettings, Settings, TrackerSettings
