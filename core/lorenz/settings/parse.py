"""Raw workflow config → typed :class:`Settings`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attrs import evolve

from .errors import ConfigError
from .model import Settings
from .secrets import SecretRecorder
from .server import parse_server
from .tools import parse_tool_options
from .tracker import parse_tracker
from .workflow import load_workflow

if TYPE_CHECKING:
    from ..registry import TrackerRegistry

__all__ = ["EMBEDDED_DEFAULT_CONFIG", "load_settings", "parse_config"]

#: The configuration used when there is no WORKFLOW.md: the local board at ``.lorenz/local``.
#: Only data: the core never imports a tracker by name.
EMBEDDED_DEFAULT_CONFIG: Mapping[str, Any] = {"tracker": {"kind": "local"}}


def parse_config(
    config: Mapping[str, Any], *, env: Mapping[str, str], trackers: TrackerRegistry, base_dir: Path
) -> Settings:
    """Validate a workflow's front matter and build :class:`Settings`.

    Unknown top-level keys are ignored. Secrets (``$VAR``, provider env fallbacks, ``op://``)
    are resolved and recorded in ``Settings.secrets``. Raises :class:`ConfigError` naming the
    key at fault; the tracker kind itself is checked later, by ``validate_dispatch_config``.
    """
    if not isinstance(config, Mapping):
        msg = "config must be a map"
        raise ConfigError(msg)
    selector = _section(config, "tracker")
    bundles = _map_of_maps(config, "trackers")
    tools = _map_of_maps(config, "tools")
    server = _section(config, "server")

    record_secret = SecretRecorder()
    tracker = parse_tracker(
        selector, bundles, env=env, trackers=trackers, base_dir=base_dir, record_secret=record_secret
    )
    tool_options = parse_tool_options(tools, env=env, record_secret=record_secret)
    server_settings = parse_server(server, env=env, record_secret=record_secret)
    return Settings(
        tracker=tracker,
        tool_options=tool_options,
        server=server_settings,
        base_dir=base_dir,
        secrets=record_secret.frozen(),
    )


def load_settings(path: str | os.PathLike[str], *, env: Mapping[str, str], trackers: TrackerRegistry) -> Settings:
    """Load a WORKFLOW.md and parse its front matter, resolving paths against its directory."""
    workflow = load_workflow(path)
    assert workflow.path is not None  # load_workflow always sets it
    settings = parse_config(workflow.config, env=env, trackers=trackers, base_dir=workflow.path.parent)
    return evolve(settings, workflow_path=workflow.path, body=workflow.body)


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
            msg = f"{key}.{name} must be a map"
            raise ConfigError(msg)
    return value
