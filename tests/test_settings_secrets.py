"""Secret resolution: `$VAR`, env fallbacks and 1Password `op://`."""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from lorenz.contracts import TrackerContext
from lorenz.plugins.registry import TrackerRegistry
from lorenz.settings import ConfigError, Settings, parse_config, resolve_configured_secret, resolve_env_reference
from lorenz.settings.secrets import SecretRecorder, is_secret_key

FAILED = (
    "Failed to resolve 1Password reference; check the redacted op:// reference, vault access, and 1Password sign-in."
)

FAKE_OP = """#!/bin/sh
[ "$1" = read ] || exit 2
case "$2" in
  op://vault/item/ok) printf '  op-resolved-secret \\n' ;;
  op://vault/linear/key) echo lin-from-op ;;
  op://vault/item/env) env | sort | tr '\\n' ';' ;;
  op://vault/item/slow) exec sleep 5 ;;
  *) echo "cannot read $2" >&2; echo "partial $2"; exit 1 ;;
esac
"""


@pytest.fixture
def op_env(tmp_path: Path) -> dict[str, str]:
    """An env whose PATH finds a fake `op` first."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "op"
    script.write_text(FAKE_OP, encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return {"PATH": f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin"}


def test_env_reference_whole_value_only() -> None:
    """Only a whole `$NAME` is substituted; `${A}`, `x$K` and ` $A` stay as they are."""
    env = {"A": "alpha", "K": "kay"}
    assert resolve_env_reference("$A", env) == "alpha"
    assert resolve_env_reference("$MISSING", env) == ""
    for literal in ("${A}", "x$K", " $A", "$1A", "plain"):
        assert resolve_env_reference(literal, env) == literal


def test_empty_reference_falls_back() -> None:
    """An empty `$VAR` falls back to the provider variable (item 66)."""
    env = {"EMPTY_TOKEN": "", "PROVIDER_TOKEN": "fallback-token"}
    assert resolve_configured_secret("$EMPTY_TOKEN", env, fallback_env_name="PROVIDER_TOKEN") == "fallback-token"


def test_unset_value_uses_fallback() -> None:
    """No configured value uses the fallback variable (item 66)."""
    assert (
        resolve_configured_secret(None, {"PROVIDER_TOKEN": "fallback-token"}, fallback_env_name="PROVIDER_TOKEN")
        == "fallback-token"
    )


def test_literal_and_missing_values() -> None:
    """A literal is kept; nothing configured and no fallback gives None (item 66)."""
    assert resolve_configured_secret("literal-token", {}) == "literal-token"
    assert resolve_configured_secret(None, {}) is None
    assert resolve_configured_secret("$UNSET", {}, fallback_env_name="ALSO_UNSET") is None
    assert resolve_configured_secret(None, {"EMPTY": ""}, fallback_env_name="EMPTY") is None


def test_register_receives_secrets_of_three_chars_or_more() -> None:
    """register is called with resolved secrets; shorter ones are not recorded (item 66)."""
    recorder = SecretRecorder()
    resolve_configured_secret("$T", {"T": "tok-123"}, register=recorder)
    resolve_configured_secret("ab", {}, register=recorder)
    resolve_configured_secret(None, {}, register=recorder)
    assert recorder.frozen() == frozenset({"tok-123"})


def test_op_reference_is_read_and_trimmed(op_env: dict[str, str]) -> None:
    """An op:// value is resolved with `op read` and its output trimmed."""
    assert resolve_configured_secret("op://vault/item/ok", op_env) == "op-resolved-secret"


def test_op_reference_via_env_fallback(op_env: dict[str, str]) -> None:
    """A provider fallback holding an op:// reference is resolved and recorded (item 63)."""

    class Linear:
        kind = "linear"
        env_fallbacks: Mapping[str, str] = {"api_key": "LINEAR_API_KEY"}

        def create_client(self, settings: Settings, context: TrackerContext) -> Any:
            raise NotImplementedError

    trackers = TrackerRegistry()
    trackers.register(Linear())
    env = {**op_env, "LINEAR_API_KEY": "op://vault/linear/key"}
    settings = parse_config({"tracker": {"kind": "linear"}}, env=env, trackers=trackers, base_dir=Path())
    assert settings.tracker.api_key == "lin-from-op"
    assert "lin-from-op" in settings.secrets


def test_op_assignee_is_recorded(op_env: dict[str, str]) -> None:
    """An assignee is recorded as a secret only when it came from 1Password."""
    trackers = TrackerRegistry()
    literal = parse_config({"tracker": {"assignee": "someone"}}, env={}, trackers=trackers, base_dir=Path())
    assert literal.secrets == frozenset()
    via_op = parse_config(
        {"tracker": {"assignee": "op://vault/item/ok"}}, env=op_env, trackers=trackers, base_dir=Path()
    )
    assert via_op.tracker.assignee == "op-resolved-secret"
    assert via_op.secrets == frozenset({"op-resolved-secret"})


def test_op_missing(tmp_path: Path) -> None:
    """Without `op` on PATH the message explains how to install it (item 65)."""
    env = {"PATH": str(tmp_path)}
    with pytest.raises(ConfigError, match=r"^1Password CLI \(op\) is required.*cannot be managed by mise\.$") as info:
        resolve_configured_secret("op://vault/item/ok", env)
    assert info.value.__cause__ is None
    assert info.value.__suppress_context__


def test_op_failure_leaks_nothing(op_env: dict[str, str]) -> None:
    """A failing `op` gives the fixed message without reference, output or cause (item 65)."""
    with pytest.raises(ConfigError) as info:
        resolve_configured_secret("op://vault/secret-name/field", op_env)
    assert str(info.value) == FAILED
    assert "secret-name" not in str(info.value)
    assert info.value.__cause__ is None
    assert info.value.__context__ is None or info.value.__suppress_context__


def test_op_timeout(op_env: dict[str, str]) -> None:
    """LORENZ_SECRET_RESOLUTION_TIMEOUT_MS bounds `op read` (item 65)."""
    env = {**op_env, "LORENZ_SECRET_RESOLUTION_TIMEOUT_MS": "100"}
    with pytest.raises(ConfigError, match=r"^Timed out resolving 1Password reference after 100ms; "):
        resolve_configured_secret("op://vault/item/slow", env)


def test_op_child_env_is_whitelisted(op_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """`op` sees the whitelisted and OP_* variables only, the given env overlaying the process env (item 65)."""
    monkeypatch.setenv("OP_PROCESS_LEVEL", "from-process")
    monkeypatch.setenv("LEAKY_PROCESS_SECRET", "nope")
    env = {**op_env, "OP_SESSION_x": "session", "HOME": "/home/fake", "LINEAR_API_KEY": "nope", "USER": "u"}
    child = resolve_configured_secret("op://vault/item/env", env) or ""
    variables = dict(item.split("=", 1) for item in child.split(";") if item)
    assert variables["OP_SESSION_x"] == "session"
    assert variables["OP_PROCESS_LEVEL"] == "from-process"
    assert variables["HOME"] == "/home/fake"
    assert variables["USER"] == "u"
    assert "LINEAR_API_KEY" not in variables
    assert "LEAKY_PROCESS_SECRET" not in variables


def test_env_reference_to_op_is_resolved(op_env: dict[str, str]) -> None:
    """`$VAR` holding an op:// reference is read through 1Password too."""
    assert resolve_configured_secret("$REF", {**op_env, "REF": "op://vault/item/ok"}) == "op-resolved-secret"


@pytest.mark.parametrize(
    ("key", "secret"),
    [
        ("api_key", True),
        ("apiKey", True),
        ("API-KEY", True),
        ("authorization", True),
        ("refresh_token", True),
        ("botToken", True),
        ("db_password", True),
        ("client_secret", True),
        ("endpoint", False),
        ("path", False),
        ("id_prefix", False),
    ],
)
def test_secret_looking_keys(key: str, secret: bool) -> None:
    """Keys naming credentials are recognised case-insensitively."""
    assert is_secret_key(key) is secret


def test_resolved_op_secret_is_redacted(op_env: dict[str, str]) -> None:
    """A secret resolved while parsing is redacted as [REDACTED] in diagnostics (item 65)."""
    from lorenz.redact import redact_text

    settings = parse_config(
        {"tracker": {"api_key": "op://vault/item/ok"}}, env=op_env, trackers=TrackerRegistry(), base_dir=Path()
    )
    assert redact_text("got op-resolved-secret back", settings.secrets) == "got [REDACTED] back"
