"""What a pack says it needs: :class:`Permissions`, declared by its author and widened by the operator.

A pack declares them on ``Pack(permissions=...)`` or as a ``permissions`` attribute of a plain
``ToolProvider``; the operator adds to them under ``tools.<pack>.permissions`` in WORKFLOW.md.
They are enforced only for packs ``server.sandboxed_packs`` names (:mod:`lorenz.sandbox.policy`).
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

from attrs import field, frozen

__all__ = ["PERMISSION_KEYS", "Permissions", "parse_permissions"]

PERMISSION_KEYS = ("network", "read", "write", "env", "subprocess")


def _strings(values: Iterable[str]) -> tuple[str, ...]:
    if isinstance(values, str):
        values = (values,)
    return tuple(dict.fromkeys(str(value) for value in values))


@frozen(kw_only=True)
class Permissions:
    """What a pack may reach when it runs sandboxed (``server.sandboxed_packs``).

    ``network``: hosts, each ``host`` (any port) or ``host:port``, globs allowed (``*.atlassian.net:443``);
    ``read`` and ``write``: paths (``~`` and ``$NAME`` expanded as the host has them; a directory
    covers what is under it; ``write`` implies ``read``); ``env``: the names of environment
    variables it gets; ``subprocess``: whether it may start programs (they run under the same
    policy).
    """

    network: tuple[str, ...] = field(default=(), converter=_strings)
    read: tuple[str, ...] = field(default=(), converter=_strings)
    write: tuple[str, ...] = field(default=(), converter=_strings)
    env: tuple[str, ...] = field(default=(), converter=_strings)
    subprocess: bool = False

    @classmethod
    def reaching(cls, *urls: str | None, **more: Any) -> Permissions:
        """Network access to the host and port of each URL (``None`` and ``""`` skipped), e.g.
        ``Permissions.reaching(options.base_url)`` in a ``permissions(settings)`` function;
        ``more`` are the other fields."""
        hosts: list[str] = []
        for url in urls:
            if not url:
                continue
            parts = urlsplit(url)
            if not parts.hostname:
                continue
            port = parts.port or (443 if parts.scheme in ("https", "wss") else 80)
            host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
            hosts.append(f"{host}:{port}")
        return cls(network=[*hosts, *more.pop("network", ())], **more)

    def widened(self, other: Permissions) -> Permissions:
        """These permissions plus ``other``'s (what the operator adds in WORKFLOW.md)."""
        return Permissions(
            network=self.network + other.network,
            read=self.read + other.read,
            write=self.write + other.write,
            env=self.env + other.env,
            subprocess=self.subprocess or other.subprocess,
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape (``lorenz tools --all --json``, the survey, the launch frame)."""
        return {
            "network": list(self.network),
            "read": list(self.read),
            "write": list(self.write),
            "env": list(self.env),
            "subprocess": self.subprocess,
        }

    def describe(self) -> str:
        """One line for people: ``network: api.github.com; read: ~/.config/gh; no subprocess``."""
        parts = [f"{key}: {', '.join(values)}" for key, values in self._lists() if values]
        if not parts and not self.subprocess:
            return "nothing (no network, files, environment variables or subprocesses)"
        parts.append("subprocess" if self.subprocess else "no subprocess")
        return "; ".join(parts)

    def _lists(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        return (("network", self.network), ("read", self.read), ("write", self.write), ("env", self.env))

    def allows_host(self, host: str, port: int) -> bool:
        """Whether ``host:port`` is declared. The name is matched as given, before any resolution:
        an IP address is allowed only when declared as one."""
        host = host.strip().lower().rstrip(".")
        for entry in self.network:
            pattern, _, port_pattern = _split_host(entry.lower())
            if fnmatch.fnmatchcase(host, pattern) and (
                not port_pattern or fnmatch.fnmatchcase(str(port), port_pattern)
            ):
                return True
        return False

    def read_paths(self) -> tuple[str, ...]:
        return tuple(_expand(path) for path in self.read)

    def write_paths(self) -> tuple[str, ...]:
        return tuple(_expand(path) for path in self.write)

    def resolved(self) -> Permissions:
        """These permissions with their paths resolved here: what a sandboxed process is sent, since
        ``~`` and ``$NAME`` would mean something else in its environment (its own ``HOME``)."""
        return Permissions(
            network=self.network,
            read=self.read_paths(),
            write=self.write_paths(),
            env=self.env,
            subprocess=self.subprocess,
        )


def _split_host(entry: str) -> tuple[str, str, str]:
    if entry.startswith("["):  # [::1]:8080
        address, _, rest = entry[1:].partition("]")
        return address, ":", rest.removeprefix(":")
    if entry.count(":") == 1:
        return entry.partition(":")
    return entry, "", ""


def _expand(path: str) -> str:
    return os.path.abspath(os.path.expanduser(os.path.expandvars(path)))


def parse_permissions(raw: object, where: str) -> Permissions:
    """``raw`` (a WORKFLOW.md or survey map) as :class:`Permissions`; ``ValueError`` naming the key."""
    if not isinstance(raw, Mapping):
        msg = f"{where}: expected a map with {', '.join(PERMISSION_KEYS)}"
        raise ValueError(msg)
    unknown = sorted(str(key) for key in raw if key not in PERMISSION_KEYS)
    if unknown:
        msg = f"{where}.{unknown[0]}: not a permission (expected one of {', '.join(PERMISSION_KEYS)})"
        raise ValueError(msg)
    values: dict[str, Any] = {}
    for key in PERMISSION_KEYS[:4]:
        value = raw.get(key, [])
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list | tuple) or not all(isinstance(item, str) and item for item in value):
            msg = f"{where}.{key}: expected a list of non-empty strings"
            raise ValueError(msg)
        values[key] = tuple(value)
    subprocess = raw.get("subprocess", False)
    if not isinstance(subprocess, bool):
        msg = f"{where}.subprocess: expected true or false"
        raise ValueError(msg)
    return Permissions(subprocess=subprocess, **values)
