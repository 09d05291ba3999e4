"""WORKFLOW.md settings: locating and parsing the file, validating its front matter into
:class:`~lorenz.settings.model.Settings`, and resolving secrets (checking them against the installed
plugins is :mod:`lorenz.plugins.validate_settings`).

Names are imported lazily, so ``lorenz.settings.model`` (which every plugin reaches through
``lorenz.contracts``) does not pull in the YAML parser and cattrs. Internal: pack authors import
the settings names docs/api.md declares from ``lorenz``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lorenz.lazy import lazy_exports

if TYPE_CHECKING:
    from .deprecations import ConfigDeprecation, collect_config_deprecations, format_config_deprecation
    from .errors import ConfigError
    from .model import DispatchSettings, ServerSettings, Settings, TrackerSettings
    from .parse import EMBEDDED_DEFAULT_CONFIG, load_settings, parse_config
    from .secrets import resolve_configured_secret, resolve_env_reference
    from .workflow import Workflow, load_workflow, parse_workflow_content, workflow_path

_EXPORTS = {
    "ConfigError": ".errors",
    "Workflow": ".workflow",
    "workflow_path": ".workflow",
    "parse_workflow_content": ".workflow",
    "load_workflow": ".workflow",
    "parse_config": ".parse",
    "load_settings": ".parse",
    "EMBEDDED_DEFAULT_CONFIG": ".parse",
    "resolve_configured_secret": ".secrets",
    "resolve_env_reference": ".secrets",
    "ConfigDeprecation": ".deprecations",
    "collect_config_deprecations": ".deprecations",
    "format_config_deprecation": ".deprecations",
    "Settings": ".model",
    "TrackerSettings": ".model",
    "ServerSettings": ".model",
    "DispatchSettings": ".model",
}

__all__ = [
    "ConfigError",
    "Workflow",
    "workflow_path",
    "parse_workflow_content",
    "load_workflow",
    "parse_config",
    "load_settings",
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


__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)
