"""Lorenz: tool packs and issue trackers as plugins, served to AI agents over MCP.

The public API for plugin authors. Names are imported lazily so ``import lorenz`` (and the CLI)
stays fast; heavy dependencies (``mcp``, ``starlette``) load only when serving.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .lazy import lazy_exports

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
    "PackFailure": "lorenz.mount",
    "PluginFailure": "lorenz.plugins",
    # running tool calls
    "run_in_thread": "lorenz.execution",
    "report_progress": "lorenz.execution",
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


__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)


if TYPE_CHECKING:
    # `X as X`: mypy --strict (no implicit re-export) then sees `from lorenz import X` as public.
    from .arguments import ArgumentError as ArgumentError
    from .arguments import as_arguments as as_arguments
    from .arguments import optional_str as optional_str
    from .arguments import require_str as require_str
    from .contracts import RuntimeTrackerClient as RuntimeTrackerClient
    from .contracts import ToolContext as ToolContext
    from .contracts import ToolProvider as ToolProvider
    from .contracts import ToolSpec as ToolSpec
    from .contracts import TrackerContext as TrackerContext
    from .contracts import TrackerProvider as TrackerProvider
    from .execution import report_progress as report_progress
    from .execution import run_in_thread as run_in_thread
    from .hookspecs import hookimpl as hookimpl
    from .issue import ISSUE_STATE_TYPES as ISSUE_STATE_TYPES
    from .issue import Issue as Issue
    from .issue import IssueNormalizationError as IssueNormalizationError
    from .issue import IssueRef as IssueRef
    from .issue import TrackerComment as TrackerComment
    from .issue import default_state_type as default_state_type
    from .issue import normalize_issue as normalize_issue
    from .issue import normalize_state_type as normalize_state_type
    from .mount import MountError as MountError
    from .mount import PackFailure as PackFailure
    from .mount import execute_mounted_tool as execute_mounted_tool
    from .mount import mounted_pack_names as mounted_pack_names
    from .mount import mounted_tool_specs as mounted_tool_specs
    from .plugins import Discovery as Discovery
    from .plugins import PluginFailure as PluginFailure
    from .plugins import discover as discover
    from .plugins import make_manager as make_manager
    from .query import QueryError as QueryError
    from .query import apply_query as apply_query
    from .query import matches_filter as matches_filter
    from .query import parse_filter as parse_filter
    from .query import parse_query_spec as parse_query_spec
    from .query import parse_select as parse_select
    from .query import pick_fields as pick_fields
    from .registry import RegistryError as RegistryError
    from .registry import ToolRegistry as ToolRegistry
    from .registry import TrackerRegistry as TrackerRegistry
    from .results import ToolResult as ToolResult
    from .results import error_message as error_message
    from .results import tool_failure as tool_failure
    from .results import tool_success as tool_success
    from .results import unsupported_tool_failure as unsupported_tool_failure
    from .settings.model import DispatchSettings as DispatchSettings
    from .settings.model import ServerSettings as ServerSettings
    from .settings.model import Settings as Settings
    from .settings.model import TrackerSettings as TrackerSettings
