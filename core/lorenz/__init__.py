"""Lorenz: tool packs and issue trackers as plugins, served to AI agents over MCP.

The public API for plugin authors. Names are imported lazily so ``import lorenz`` (and the CLI)
stays fast; heavy dependencies (``mcp``, ``starlette``) load only when serving.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._version import __version__ as __version__
from .lazy import lazy_exports as lazy_exports

_EXPORTS: dict[str, str] = {
    # contracts
    "ToolSpec": "lorenz.contracts",
    "ResourceSpec": "lorenz.contracts",
    "PromptSpec": "lorenz.contracts",
    "PromptArgument": "lorenz.contracts",
    "ToolContext": "lorenz.contracts",
    "Caller": "lorenz.contracts",
    "ToolProvider": "lorenz.contracts",
    "PackInstance": "lorenz.contracts",
    "serving_loop": "lorenz.contracts",
    "TrackerProvider": "lorenz.contracts",
    "TrackerContext": "lorenz.contracts",
    "RuntimeTrackerClient": "lorenz.contracts",
    "ResolveSecret": "lorenz.contracts",
    # asking the client for input (``ToolContext.client_input``)
    "ClientInput": "lorenz.client_input",
    "InputRequired": "lorenz.client_input",
    # call middleware (lorenz_call_middleware)
    "Call": "lorenz.middleware",
    "CallNext": "lorenz.middleware",
    "Middleware": "lorenz.middleware",
    "MiddlewareProvider": "lorenz.middleware",
    "refusal": "lorenz.middleware",
    # catalog shapers, call-record sinks, commands (lorenz_catalog, lorenz_call_record, lorenz_register_commands)
    "CatalogProvider": "lorenz.extensions",
    "CatalogShaper": "lorenz.extensions",
    "Listing": "lorenz.extensions",
    "PluginCommand": "lorenz.extensions",
    "RecordSink": "lorenz.extensions",
    "RecordSinkProvider": "lorenz.extensions",
    # permissions (server.sandboxed_packs)
    "Permissions": "lorenz.sandbox.permissions",
    "SandboxedCommand": "lorenz.sandbox.command",
    "sandboxed_command": "lorenz.sandbox.command",
    "SandboxUnavailable": "lorenz.sandbox.host",
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
    # schema pieces and the plain text of a result
    "string_schema": "lorenz.schemas",
    "string_array_schema": "lorenz.schemas",
    "strict_object_schema": "lorenz.schemas",
    "plain_text": "lorenz.schemas",
    # issues
    "Issue": "lorenz.issue",
    "IssueRef": "lorenz.issue",
    "IssueNormalizationError": "lorenz.issue",
    "TrackerComment": "lorenz.issue",
    "ISSUE_STATE_TYPES": "lorenz.issue",
    "normalize_issue": "lorenz.issue",
    "normalize_state_type": "lorenz.issue",
    "default_state_type": "lorenz.issue",
    "IssueStateType": "lorenz.issue",
    # registries, plugins, mounting
    "ToolRegistry": "lorenz.plugins.registry",
    "TrackerRegistry": "lorenz.plugins.registry",
    "RegistryError": "lorenz.plugins.registry",
    "hookimpl": "lorenz.hookspecs",
    "discover": "lorenz.plugins.discovery",
    "make_manager": "lorenz.plugins.discovery",
    "Discovery": "lorenz.plugins.model",
    "mounted_pack_names": "lorenz.mounting.mount",
    "mounted_tool_specs": "lorenz.mounting.mount",
    "execute_mounted_tool": "lorenz.mounting.mount",
    "MountError": "lorenz.mounting.model",
    "PackFailure": "lorenz.mounting.model",
    "PluginFailure": "lorenz.plugins.model",
    # running tool calls
    "run_in_thread": "lorenz.toolcall.execution",
    "report_progress": "lorenz.toolcall.execution",
    # the read-only query DSL
    "QueryError": "lorenz.query",
    "parse_query_spec": "lorenz.query",
    "apply_query": "lorenz.query",
    "parse_select": "lorenz.query",
    "pick_fields": "lorenz.query",
    "parse_filter": "lorenz.query",
    "matches_filter": "lorenz.query",
    "query_input_properties": "lorenz.query_schema",
    "query_echo": "lorenz.query",
    "check_list_argument": "lorenz.query",
    # settings
    "Settings": "lorenz.settings.model",
    "TrackerSettings": "lorenz.settings.model",
    "ServerSettings": "lorenz.settings.model",
    "DispatchSettings": "lorenz.settings.model",
    # outbound HTTP (retries, timeouts, pagination guards)
    "DEFAULT_TIMEOUT": "lorenz.http",
    "RetryPolicy": "lorenz.http",
    "RetryEvent": "lorenz.http",
    "send_with_retry": "lorenz.http",
    "summarize_body": "lorenz.http",
    "timeout_message": "lorenz.http",
    "describe_timeout": "lorenz.http",
    "PaginationGuard": "lorenz.pagination",
    "PaginationLimits": "lorenz.pagination",
    "PaginationError": "lorenz.pagination",
    # redaction
    "redact_text": "lorenz.redact",
    "redact_value": "lorenz.redact",
    "is_secret_key": "lorenz.redact",
    # supervising a child process
    "Backoff": "lorenz.backoff",
    # a child process's stderr in a log
    "StderrRelay": "lorenz.stderr_relay",
    "StderrLimits": "lorenz.stderr_relay",
    # reading a pack's or tracker's options
    "ConfigError": "lorenz.settings.errors",
    "resolve_configured_secret": "lorenz.settings.secrets",
    "resolve_env_reference": "lorenz.settings.secrets",
    "reject_unknown_options": "lorenz.settings.options",
    "reject_unknown_keys": "lorenz.settings.options",
    "string_option": "lorenz.settings.options",
    "string_list_option": "lorenz.settings.options",
    "check_url": "lorenz.settings.options",
    "needs_tracker_kind": "lorenz.plugins.validate_settings",
    "load_yaml": "lorenz.yaml12",
    "YamlError": "lorenz.yaml12",
    # packages whose names load on first use
    "lazy_exports": "lorenz.lazy",
    "LazyPack": "lorenz.lazy",
}

__all__ = ["__version__", *_EXPORTS]


__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)


if TYPE_CHECKING:
    # `X as X`: mypy --strict (no implicit re-export) then sees `from lorenz import X` as public.
    from .arguments import ArgumentError as ArgumentError
    from .arguments import as_arguments as as_arguments
    from .arguments import optional_str as optional_str
    from .arguments import require_str as require_str
    from .backoff import Backoff as Backoff
    from .client_input import ClientInput as ClientInput
    from .client_input import InputRequired as InputRequired
    from .contracts import Caller as Caller
    from .contracts import PackInstance as PackInstance
    from .contracts import PromptArgument as PromptArgument
    from .contracts import PromptSpec as PromptSpec
    from .contracts import ResolveSecret as ResolveSecret
    from .contracts import ResourceSpec as ResourceSpec
    from .contracts import RuntimeTrackerClient as RuntimeTrackerClient
    from .contracts import ToolContext as ToolContext
    from .contracts import ToolProvider as ToolProvider
    from .contracts import ToolSpec as ToolSpec
    from .contracts import TrackerContext as TrackerContext
    from .contracts import TrackerProvider as TrackerProvider
    from .contracts import serving_loop as serving_loop
    from .extensions import CatalogProvider as CatalogProvider
    from .extensions import CatalogShaper as CatalogShaper
    from .extensions import Listing as Listing
    from .extensions import PluginCommand as PluginCommand
    from .extensions import RecordSink as RecordSink
    from .extensions import RecordSinkProvider as RecordSinkProvider
    from .hookspecs import hookimpl as hookimpl
    from .http import DEFAULT_TIMEOUT as DEFAULT_TIMEOUT
    from .http import RetryEvent as RetryEvent
    from .http import RetryPolicy as RetryPolicy
    from .http import describe_timeout as describe_timeout
    from .http import send_with_retry as send_with_retry
    from .http import summarize_body as summarize_body
    from .http import timeout_message as timeout_message
    from .issue import ISSUE_STATE_TYPES as ISSUE_STATE_TYPES
    from .issue import Issue as Issue
    from .issue import IssueNormalizationError as IssueNormalizationError
    from .issue import IssueRef as IssueRef
    from .issue import IssueStateType as IssueStateType
    from .issue import TrackerComment as TrackerComment
    from .issue import default_state_type as default_state_type
    from .issue import normalize_issue as normalize_issue
    from .issue import normalize_state_type as normalize_state_type
    from .lazy import LazyPack as LazyPack
    from .lazy import lazy_exports as lazy_exports
    from .middleware import Call as Call
    from .middleware import CallNext as CallNext
    from .middleware import Middleware as Middleware
    from .middleware import MiddlewareProvider as MiddlewareProvider
    from .middleware import refusal as refusal
    from .mounting.model import MountError as MountError
    from .mounting.model import PackFailure as PackFailure
    from .mounting.mount import execute_mounted_tool as execute_mounted_tool
    from .mounting.mount import mounted_pack_names as mounted_pack_names
    from .mounting.mount import mounted_tool_specs as mounted_tool_specs
    from .pagination import PaginationError as PaginationError
    from .pagination import PaginationGuard as PaginationGuard
    from .pagination import PaginationLimits as PaginationLimits
    from .plugins.discovery import discover as discover
    from .plugins.discovery import make_manager as make_manager
    from .plugins.model import Discovery as Discovery
    from .plugins.model import PluginFailure as PluginFailure
    from .plugins.registry import RegistryError as RegistryError
    from .plugins.registry import ToolRegistry as ToolRegistry
    from .plugins.registry import TrackerRegistry as TrackerRegistry
    from .plugins.validate_settings import needs_tracker_kind as needs_tracker_kind
    from .query import QueryError as QueryError
    from .query import apply_query as apply_query
    from .query import check_list_argument as check_list_argument
    from .query import matches_filter as matches_filter
    from .query import parse_filter as parse_filter
    from .query import parse_query_spec as parse_query_spec
    from .query import parse_select as parse_select
    from .query import pick_fields as pick_fields
    from .query import query_echo as query_echo
    from .query_schema import query_input_properties as query_input_properties
    from .redact import is_secret_key as is_secret_key
    from .redact import redact_text as redact_text
    from .redact import redact_value as redact_value
    from .results import ToolResult as ToolResult
    from .results import error_message as error_message
    from .results import tool_failure as tool_failure
    from .results import tool_success as tool_success
    from .results import unsupported_tool_failure as unsupported_tool_failure
    from .sandbox.command import SandboxedCommand as SandboxedCommand
    from .sandbox.command import sandboxed_command as sandboxed_command
    from .sandbox.host import SandboxUnavailable as SandboxUnavailable
    from .sandbox.permissions import Permissions as Permissions
    from .schemas import plain_text as plain_text
    from .schemas import strict_object_schema as strict_object_schema
    from .schemas import string_array_schema as string_array_schema
    from .schemas import string_schema as string_schema
    from .settings.errors import ConfigError as ConfigError
    from .settings.model import DispatchSettings as DispatchSettings
    from .settings.model import ServerSettings as ServerSettings
    from .settings.model import Settings as Settings
    from .settings.model import TrackerSettings as TrackerSettings
    from .settings.options import check_url as check_url
    from .settings.options import reject_unknown_keys as reject_unknown_keys
    from .settings.options import reject_unknown_options as reject_unknown_options
    from .settings.options import string_list_option as string_list_option
    from .settings.options import string_option as string_option
    from .settings.secrets import resolve_configured_secret as resolve_configured_secret
    from .settings.secrets import resolve_env_reference as resolve_env_reference
    from .stderr_relay import StderrLimits as StderrLimits
    from .stderr_relay import StderrRelay as StderrRelay
    from .toolcall.execution import report_progress as report_progress
    from .toolcall.execution import run_in_thread as run_in_thread
    from .yaml12 import YamlError as YamlError
    from .yaml12 import load_yaml as load_yaml
