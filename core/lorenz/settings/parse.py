"""Raw workflow config → typed :class:`Settings`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attrs import evolve

from ._kinds import camel_to_snake
from .deprecations import collect_config_deprecations, format_config_deprecation
from .errors import ConfigError
from .model import Settings
from .secrets import SecretRecorder
from .server import parse_server
from .suggest import did_you_mean, quoted, shown
from .tools import parse_tool_instances, parse_tool_options, parse_tool_permissions
from .tracker import parse_tracker
from .workflow import display_path, load_workflow

if TYPE_CHECKING:
    from .context import TrackerLookup

__all__ = ["EMBEDDED_DEFAULT_CONFIG", "OTHER_HOST_KEYS", "TOP_LEVEL_KEYS", "load_settings", "parse_config"]

#: The configuration used when there is no WORKFLOW.md: the local board at ``.lorenz/local``.
#: Only data: the core never imports a tracker by name.
EMBEDDED_DEFAULT_CONFIG: Mapping[str, Any] = {"tracker": {"kind": "local"}}

#: The sections this host reads.
TOP_LEVEL_KEYS = ("server", "tools", "tracker", "trackers")
#: Sections the Lorenz daemon reads from the same file; accepted here with a warning.
OTHER_HOST_KEYS = (
    "agent",
    "agents",
    "claude",
    "codex",
    "hooks",
    "logging",
    "polling",
    "status_overrides",
    "workspace",
)


def parse_config(
    config: Mapping[str, Any], *, env: Mapping[str, str], trackers: TrackerLookup, base_dir: Path
) -> Settings:
    """Validate a workflow's front matter and build :class:`Settings`.

    Every key is checked: an unknown top-level key is an error naming it and the closest known
    one (``unknown top-level key "toolz" (did you mean "tools"?)``), the daemon's sections
    (:data:`OTHER_HOST_KEYS`) and deprecated shapes are accepted with one ``Settings.warnings``
    entry each. Secrets (``$VAR``, provider env fallbacks, ``op://``) are resolved and recorded
    in ``Settings.secrets``; unset ``$VAR`` references in ``Settings.unset_variables``. Raises
    :class:`ConfigError` naming the key at fault; the tracker kind itself is checked later, by
    ``validate_dispatch_config``.
    """
    if not isinstance(config, Mapping):
        msg = "config must be a map"
        raise ConfigError(msg)
    warnings = _check_top_level(config)
    selector = _section(config, "tracker")
    bundles = _map_of_maps(config, "trackers")
    tools = _map_of_maps(config, "tools")
    server = _section(config, "server")

    record_secret = SecretRecorder()
    unset: dict[str, str] = {}
    tracker = parse_tracker(
        selector, bundles, env=env, trackers=trackers, base_dir=base_dir, record_secret=record_secret, unset=unset
    )
    pack_options, tool_instances = parse_tool_instances(tools)
    tool_permissions = parse_tool_permissions(tools)
    tool_options = parse_tool_options(pack_options, env=env, record_secret=record_secret, unset=unset)
    server_settings = parse_server(server, env=env, record_secret=record_secret)
    warnings += [format_config_deprecation(found) for found in collect_config_deprecations(config)]
    return Settings(
        tracker=tracker,
        tool_options=tool_options,
        tool_instances=tool_instances,
        server=server_settings,
        base_dir=base_dir,
        secrets=record_secret.frozen(),
        warnings=tuple(warnings),
        unset_variables=unset,
        tool_permissions=tool_permissions,
    )


def load_settings(path: str | os.PathLike[str], *, env: Mapping[str, str], trackers: TrackerLookup) -> Settings:
    """Load a WORKFLOW.md and parse its front matter, resolving paths against its directory.

    Warnings name the file: ``WORKFLOW.md: …``.
    """
    workflow = load_workflow(path)
    assert workflow.path is not None  # load_workflow always sets it
    settings = parse_config(workflow.config, env=env, trackers=trackers, base_dir=workflow.path.parent)
    name = display_path(workflow.path)
    return evolve(
        settings,
        workflow_path=workflow.path,
        body=workflow.body,
        warnings=tuple(f"{name}: {warning}" for warning in settings.warnings),
    )


def _check_top_level(config: Mapping[str, Any]) -> list[str]:
    """One warning per daemon section; an unknown key raises, naming the closest known one."""
    warnings: list[str] = []
    for raw_key in config:
        key = str(raw_key)
        if key in TOP_LEVEL_KEYS:
            continue
        if camel_to_snake(key) in OTHER_HOST_KEYS:
            warnings.append(f"top-level key {quoted(key)} is read by the Lorenz daemon; this host ignores it")
            continue
        hint = did_you_mean(key, (*TOP_LEVEL_KEYS, *OTHER_HOST_KEYS)) or f" (known keys: {', '.join(TOP_LEVEL_KEYS)})"
        msg = f"unknown top-level key {quoted(key)}{hint}"
        raise ConfigError(msg)
    return warnings


def _section(config: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = config.get(key, {})
    if not isinstance(value, Mapping):
        msg = f"{key} must be a map"
        raise ConfigError(msg)
    return value


def _map_of_maps(config: Mapping[str, Any], key: str) -> Mapping[str, Mapping[str, Any]]:
    value = _section(config, key)
    for name, entry in value.items():
        if not isinstance(entry, Mapping):
            msg = f"{key}.{shown(str(name))} must be a map"
            raise ConfigError(msg)
    return value
