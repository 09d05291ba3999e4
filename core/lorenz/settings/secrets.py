"""Secret resolution: whole-value ``$VAR`` references, provider env fallbacks and ``op://``.

Secrets are never echoed: the 1Password errors name neither the reference nor ``op``'s output.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping

from lorenz.redact import MIN_SECRET_LENGTH, is_secret_key

from .errors import ConfigError

__all__ = [
    "MIN_SECRET_LENGTH",
    "OP_TIMEOUT_ENV",
    "SecretRecorder",
    "is_secret_key",
    "read_op_reference",
    "resolve_configured_secret",
    "resolve_env_reference",
    "unset_reference",
]

OP_TIMEOUT_ENV = "LORENZ_SECRET_RESOLUTION_TIMEOUT_MS"
DEFAULT_OP_TIMEOUT_MS = 30_000
OP_PREFIX = "op://"

_ENV_REFERENCE = re.compile(r"^\$([A-Za-z_][A-Za-z0-9_]*)$")
_OP_ENV_NAMES = frozenset(
    {
        "HOME",
        "LOGNAME",
        "PATH",
        "SHELL",
        "TMPDIR",
        "USER",
        "XDG_CACHE_HOME",
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "XDG_STATE_HOME",
    }
)
_OP_TIMEOUT = (
    "Timed out resolving 1Password reference after {ms}ms; check 1Password CLI sign-in, "
    "network access, and vault permissions."
)
_OP_MISSING = (
    "1Password CLI (op) is required to resolve op:// references but was not found. "
    "Install it from https://developer.1password.com/docs/cli/get-started - it cannot be managed by mise."
)
_OP_FAILED = (
    "Failed to resolve 1Password reference; check the redacted op:// reference, vault access, and 1Password sign-in."
)


class SecretRecorder:
    """Collects resolved secrets (of at least :data:`MIN_SECRET_LENGTH` chars) for redaction."""

    def __init__(self) -> None:
        self._secrets: set[str] = set()

    def __call__(self, secret: str | None) -> None:
        if secret is not None and len(secret) >= MIN_SECRET_LENGTH:
            self._secrets.add(secret)

    def frozen(self) -> frozenset[str]:
        return frozenset(self._secrets)


def resolve_env_reference(value: str, env: Mapping[str, str]) -> str:
    """``env[NAME]`` (or ``""``) when the *whole* value is ``$NAME``; anything else unchanged."""
    match = _ENV_REFERENCE.match(value)
    if match is None:
        return value
    return env.get(match.group(1)) or ""


def unset_reference(value: object, env: Mapping[str, str]) -> str | None:
    """``NAME`` when ``value`` is a whole-value ``$NAME`` reference that resolves to nothing in ``env``."""
    match = _ENV_REFERENCE.match(value) if isinstance(value, str) else None
    if match is None or env.get(match.group(1)):
        return None
    return match.group(1)


def resolve_configured_secret(
    value: str | None,
    env: Mapping[str, str],
    *,
    fallback_env_name: str | None = None,
    register: Callable[[str], object] | None = None,
) -> str | None:
    """Resolve a configured credential.

    ``$VAR`` is substituted; an unset value, or one that resolves to ``""``, falls back to the
    non-empty ``env[fallback_env_name]``; an ``op://`` result is read with ``op read``. A
    resolved secret of at least 3 chars is passed to ``register`` (e.g. a :class:`SecretRecorder`).
    Raises :class:`ConfigError` when 1Password cannot resolve a reference.
    """
    secret, _ = resolve_secret_source(value, env, fallback_env_name=fallback_env_name)
    if register is not None and secret is not None and len(secret) >= MIN_SECRET_LENGTH:
        register(secret)
    return secret


def resolve_secret_source(
    value: str | None, env: Mapping[str, str], *, fallback_env_name: str | None = None
) -> tuple[str | None, bool]:
    """Like :func:`resolve_configured_secret`, also telling whether 1Password supplied the value."""
    fallback = (env.get(fallback_env_name) or None) if fallback_env_name else None
    if value is None:
        candidate = fallback
    else:
        resolved = resolve_env_reference(value, env)
        candidate = resolved if resolved != "" else fallback
    if candidate is not None and candidate.startswith(OP_PREFIX):
        return read_op_reference(candidate, env), True
    return candidate, False


def read_op_reference(reference: str, env: Mapping[str, str]) -> str:
    """``op read <reference>`` with a whitelisted environment and a timeout; stdout trimmed."""
    import subprocess  # only for op:// references: plugins import this module while registering

    timeout_ms = _op_timeout_ms(env)
    try:
        completed = subprocess.run(
            ["op", "read", reference],  # `op` is found on the child env's PATH
            env=_op_env(env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout_ms / 1000,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise ConfigError(_OP_TIMEOUT.format(ms=timeout_ms)) from None
    except FileNotFoundError:
        raise ConfigError(_OP_MISSING) from None
    except OSError:
        raise ConfigError(_OP_FAILED) from None
    if completed.returncode != 0:
        raise ConfigError(_OP_FAILED)
    return completed.stdout.strip()


def _op_env(env: Mapping[str, str]) -> dict[str, str]:
    def allowed(name: str) -> bool:
        return name in _OP_ENV_NAMES or name.startswith("OP_")

    child = {name: value for name, value in os.environ.items() if allowed(name)}
    child.update({name: value for name, value in env.items() if allowed(name)})
    return child


def _op_timeout_ms(env: Mapping[str, str]) -> int:
    raw = env.get(OP_TIMEOUT_ENV, os.environ.get(OP_TIMEOUT_ENV, ""))
    if raw.isascii() and raw.isdigit() and int(raw) > 0:
        return int(raw)
    return DEFAULT_OP_TIMEOUT_MS
