"""WORKFLOW.md settings: locating and parsing the file, validating its front matter into
:class:`~lorenz.settings.model.Settings`, resolving secrets, and the dispatch check."""

from __future__ import annotations

from .deprecations import ConfigDeprecation, collect_config_deprecations, format_config_deprecation
from .errors import ConfigError
from .model import DispatchSettings, ServerSettings, Settings, TrackerSettings
from .parse import EMBEDDED_DEFAULT_CONFIG, load_settings, parse_config
from .secrets import resolve_configured_secret, resolve_env_reference
from .validate import validate_dispatch_config
from .workflow import Workflow, load_workflow, parse_workflow_content, workflow_path

__all__ = [
    "ConfigError",
    "Workflow",
    "workflow_path",
    "parse_workflow_content",
    "load_workflow",
    "parse_config",
    "load_settings",
    "validate_dispatch_config",
    "EMBEDDED_DEFAULT_CONFIG",
    "resolve_configured_secret",
    "resolve_env_reference",
    "ConfigDeprecation",
    "collect_config_deprecations",
    "format_config_deprecation",
    "Settings",
    "TrackerSettings",
    "ServerSettings",
    "DispatchSettings",
]
