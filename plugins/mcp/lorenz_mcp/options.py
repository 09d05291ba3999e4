"""The ``tools.mcp`` keys: one upstream, either a stdio ``command`` or a Streamable HTTP ``url``.

``env`` and ``headers`` values may hold ``$VAR`` / ``${VAR}`` references, resolved from the host's
environment when the upstream starts; what they resolve to is redacted from every log line and error.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from typing import Any

from attrs import field, frozen

from lorenz import Permissions, check_url, reject_unknown_keys

__all__ = ["KNOWN_KEYS", "McpOptions", "parse_options", "resolve_references", "unset_references"]

KNOWN_KEYS = (
    "command",
    "url",
    "env",
    "headers",
    "cwd",
    "start_timeout_seconds",
    "timeout_seconds",
    "resources",
    "prompts",
    "sandbox",
)

#: How long a start (spawn or connect, handshake, ``tools/list``) may take before the mount fails.
DEFAULT_START_TIMEOUT = 30.0
#: A remote upstream's HTTP timeout, and the bound on any request but ``tools/call``.
DEFAULT_TIMEOUT = 60.0

_REFERENCE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


@frozen(kw_only=True)
class McpOptions:
    """One upstream, validated. ``key`` identifies it: two mounts with equal options share it."""

    command: tuple[str, ...] | None = None
    url: str | None = None
    env: Mapping[str, str] = field(factory=dict)
    headers: Mapping[str, str] = field(factory=dict)
    cwd: str | None = None
    start_timeout_seconds: float = DEFAULT_START_TIMEOUT
    timeout_seconds: float = DEFAULT_TIMEOUT
    #: Serve the upstream's resources and resource templates / its prompts (when it has them).
    resources: bool = True
    prompts: bool = True
    #: Run the stdio server confined to ``permissions`` (``tools.<key>.permissions``, set by the pack).
    sandbox: bool = False
    permissions: Permissions | None = None
    #: The ``tools:`` key whose permissions apply, and the workflow's directory (never readable).
    instance: str | None = None
    workflow_dir: str | None = None

    @property
    def key(self) -> str:
        granted = self.permissions.describe() if self.permissions is not None else None
        return json.dumps(
            [self.command, self.url, dict(self.env), dict(self.headers), self.cwd, self.timeout_seconds]
            + ([self.instance, granted, self.workflow_dir] if self.sandbox else []),
            sort_keys=True,
        )

    def describe(self) -> str:
        """The upstream as a log line names it: its command line (shortened), or its URL sans query."""
        if self.command is not None:
            line = shlex.join(self.command)
            return line if len(line) <= 80 else line[:79] + "…"
        assert self.url is not None
        return self.url.split("?", 1)[0]


def _string_map(options: Mapping[str, Any], key: str, label: str) -> dict[str, str]:
    value = options.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        msg = f"{label}.{key} must be a map of strings to strings"
        raise ValueError(msg)
    return dict(value)


def _seconds(options: Mapping[str, Any], key: str, label: str, default: float) -> float:
    value = options.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 3600:
        msg = f"{label}.{key} must be a number of seconds between 0 and 3600"
        raise ValueError(msg)
    return float(value)


def parse_options(options: Mapping[str, Any], label: str = "tools.mcp") -> McpOptions:
    """The options of one mount; ``ValueError`` naming ``<label>.<key>`` when they are not valid."""
    reject_unknown_keys(options, KNOWN_KEYS, label)
    command = options.get("command")
    url = options.get("url")
    if command is not None and url is not None:
        msg = f"{label} takes either command (a stdio server) or url (a remote one), not both"
        raise ValueError(msg)
    if command is None and url is None:
        msg = f"{label} needs command (a stdio server: [npx, -y, pkg]) or url (a Streamable HTTP endpoint)"
        raise ValueError(msg)
    parsed_command: tuple[str, ...] | None = None
    if command is not None:
        if isinstance(command, str) or not isinstance(command, list) or not command:
            msg = f"{label}.command must be a non-empty list of strings (the program, then its arguments)"
            raise ValueError(msg)
        if not all(isinstance(part, str) and part and "\0" not in part for part in command):
            msg = f"{label}.command must be a non-empty list of non-empty strings"
            raise ValueError(msg)
        parsed_command = tuple(command)
    if url is not None:
        if not isinstance(url, str):
            msg = f"{label}.url must be a string"
            raise ValueError(msg)
        check_url(url, f"{label}.url")
    headers = _string_map(options, "headers", label)
    if headers and url is None:
        msg = f"{label}.headers only applies to a url upstream"
        raise ValueError(msg)
    env = _string_map(options, "env", label)
    if env and command is None:
        msg = f"{label}.env only applies to a command upstream"
        raise ValueError(msg)
    cwd = options.get("cwd")
    if cwd is not None and (not isinstance(cwd, str) or command is None):
        msg = f"{label}.cwd must be a string, for a command upstream"
        raise ValueError(msg)
    for flag in ("resources", "prompts", "sandbox"):
        if not isinstance(options.get(flag, flag != "sandbox"), bool):
            msg = f"{label}.{flag} must be true or false"
            raise ValueError(msg)
    if options.get("sandbox") and command is None:
        msg = f"{label}.sandbox only applies to a command upstream (a remote server runs elsewhere)"
        raise ValueError(msg)
    return McpOptions(
        resources=bool(options.get("resources", True)),
        prompts=bool(options.get("prompts", True)),
        sandbox=bool(options.get("sandbox", False)),
        command=parsed_command,
        url=url,
        env=env,
        headers=headers,
        cwd=cwd,
        start_timeout_seconds=_seconds(options, "start_timeout_seconds", label, DEFAULT_START_TIMEOUT),
        timeout_seconds=_seconds(options, "timeout_seconds", label, DEFAULT_TIMEOUT),
    )


def resolve_references(value: str, environ: Mapping[str, str]) -> str:
    """``value`` with each ``$VAR`` / ``${VAR}`` replaced by its value in ``environ`` (``""`` if unset)."""
    return _REFERENCE.sub(lambda m: environ.get(m.group(1) or m.group(2), ""), value)


def unset_references(options: McpOptions, environ: Mapping[str, str], label: str = "tools.mcp") -> list[str]:
    """One problem per ``env``/``headers`` value naming a variable that is unset or empty."""
    problems = []
    for section, values in (("env", options.env), ("headers", options.headers)):
        for key, value in values.items():
            for match in _REFERENCE.finditer(value):
                name = match.group(1) or match.group(2)
                if not environ.get(name):
                    problems.append(f"{label}.{section}.{key}: ${name} is not set")
    return problems
