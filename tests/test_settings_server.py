"""The `server:` section."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from lorenz.plugins.registry import TrackerRegistry
from lorenz.settings import ConfigError, ServerSettings, parse_config
from lorenz.settings.model import DEFAULT_MAX_BODY_BYTES


def server(raw: object, env: Mapping[str, str] | None = None) -> ServerSettings:
    return parse_config({"server": raw}, env=env or {}, trackers=TrackerRegistry(), base_dir=Path()).server


def test_defaults() -> None:
    """No `server:` gives loopback:4040, no token, JSON responses, stateless."""
    settings = parse_config({}, env={}, trackers=TrackerRegistry(), base_dir=Path()).server
    assert settings == ServerSettings()
    assert (settings.host, settings.port, settings.mcp_port, settings.token) == ("127.0.0.1", 4040, None, None)
    assert (settings.stateful, settings.json_response, settings.max_body_bytes) == (False, True, DEFAULT_MAX_BODY_BYTES)


def test_blank_host_is_loopback() -> None:
    """`host: ""` becomes 127.0.0.1 (item 84)."""
    assert server({"host": ""}).host == "127.0.0.1"
    assert server({"host": "0.0.0.0"}).host == "0.0.0.0"


@pytest.mark.parametrize(("value", "port"), [(0, 0), (8080, 8080), (65535, 65535), ("4041", 4041), ("0", 0)])
def test_port_accepts_numbers_and_numeric_strings(value: object, port: int) -> None:
    """port takes 0-65535 as a number or a numeric string; 0 means ephemeral."""
    assert server({"port": value}).port == port


@pytest.mark.parametrize("value", ["", 99999, -1, True, 5.9, 4040.0, "4o40", " 80", None, [80]])
def test_port_rejects_everything_else(value: object) -> None:
    """ "", 99999, true and 5.9 are not ports (item 84; 5.9 is not truncated to 5)."""
    with pytest.raises(ConfigError, match=r"^server\.port must be a valid port number \(0-65535\)$"):
        server({"port": value})


def test_mcp_port() -> None:
    """mcp_port 4041 is accepted (camelCase too) (item 84)."""
    assert server({"mcp_port": 4041}).mcp_port == 4041
    assert server({"mcpPort": "4042"}).mcp_port == 4042


@pytest.mark.parametrize("value", [0, 65536, "x", False])
def test_mcp_port_range(value: object) -> None:
    """mcp_port outside 1-65535 is rejected (item 84)."""
    with pytest.raises(ConfigError, match=r"^server\.mcp_port must be a valid port number \(1-65535\)$"):
        server({"mcp_port": value})


def test_unknown_keys_are_listed_in_order() -> None:
    """The section is strict."""
    with pytest.raises(ConfigError, match=r"^server contains unsupported keys: zeta, alpha$"):
        server({"zeta": 1, "host": "h", "alpha": 2})


def test_type_errors_come_before_unknown_keys() -> None:
    """A wrong type is reported before unsupported keys."""
    with pytest.raises(ConfigError, match=r"^server\.host must be a string$"):
        server({"extra": 1, "host": 5})


@pytest.mark.parametrize("raw", [None, [], "x"])
def test_section_must_be_a_map(raw: object) -> None:
    """`server:` must be a map."""
    with pytest.raises(ConfigError, match=r"^server must be a map$"):
        server(raw)


def test_token_from_env_reference_is_recorded() -> None:
    """server.token resolves `$VAR` and lands in Settings.secrets."""
    settings = parse_config(
        {"server": {"token": "$MY_TOKEN"}}, env={"MY_TOKEN": "tok-abc"}, trackers=TrackerRegistry(), base_dir=Path()
    )
    assert settings.server.token == "tok-abc"
    assert "tok-abc" in settings.secrets


def test_token_falls_back_to_lorenz_mcp_token() -> None:
    """Without server.token, LORENZ_MCP_TOKEN is used."""
    assert server({}, env={"LORENZ_MCP_TOKEN": "env-token"}).token == "env-token"
    assert server({"token": "$UNSET"}, env={"LORENZ_MCP_TOKEN": "env-token"}).token == "env-token"
    assert server({"token": "literal-token"}, env={"LORENZ_MCP_TOKEN": "env-token"}).token == "literal-token"


def test_token_must_be_a_string() -> None:
    """A numeric token is not stringified."""
    with pytest.raises(ConfigError, match=r"^server\.token must be a string$"):
        server({"token": 12345})


def test_configured_token_resolving_empty_is_an_error() -> None:
    """A server.token that resolves to nothing fails instead of turning auth off; an unset $VAR is named."""
    with pytest.raises(ConfigError, match=r"^server\.token is set but resolves to an empty value$"):
        server({"token": ""})
    with pytest.raises(ConfigError, match=r"^server\.token: \$MY_MCP_TOKEN is not set$"):
        server({"token": "$MY_MCP_TOKEN"}, env={"MY_MCP_TOKEN": ""})


def test_mcp_host_keys() -> None:
    """allowed_origins/allowed_hosts, stateful, json_response and max_body_bytes are read."""
    settings = server(
        {
            "allowed_origins": ["http://app.example:*"],
            "allowedHosts": ["app.example:8080"],
            "stateful": True,
            "json_response": False,
            "max_body_bytes": 2048,
        }
    )
    assert settings.allowed_origins == ("http://app.example:*",)
    assert settings.allowed_hosts == ("app.example:8080",)
    assert (settings.stateful, settings.json_response, settings.max_body_bytes) == (True, False, 2048)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"stateful": "false"}, r"^server\.stateful must be a boolean$"),
        ({"json_response": 1}, r"^server\.json_response must be a boolean$"),
        ({"allowed_hosts": "abc"}, r"^server\.allowed_hosts must be a list of strings$"),
        ({"allowed_origins": ["ok", 5]}, r"^server\.allowed_origins\.1 must be a string$"),
        ({"max_body_bytes": 0}, r"^server\.max_body_bytes must be a positive integer$"),
        ({"max_body_bytes": 5.9}, r"^server\.max_body_bytes must be a positive integer$"),
        ({"max_body_bytes": "1024"}, r"^server\.max_body_bytes must be a positive integer$"),
        ({"trace_dir": 5}, r"^server\.trace_dir must be a string$"),
    ],
)
def test_mcp_host_key_errors(raw: dict[str, Any], message: str) -> None:
    """No coercion: "false" is not a boolean, 5.9 not an integer, "abc" not a list."""
    with pytest.raises(ConfigError, match=message):
        server(raw)


def test_legacy_path_keys_are_accepted() -> None:
    """trace_dir, issue_store_path and static_dir are accepted strings."""
    assert server({"trace_dir": "/t", "issue_store_path": "~/i", "static_dir": "s"}) == ServerSettings()


def test_limits_and_later_keys_defaults() -> None:
    """Timeouts, result cap, concurrency, logs, policy, workers and isolation have safe defaults."""
    settings = server({})
    assert (settings.tool_timeout_seconds, settings.max_result_bytes, settings.pack_concurrency) == (
        120.0,
        8 * 1024 * 1024,
        16,
    )
    assert (settings.read_timeout_seconds, settings.call_log, settings.access_log) == (10.0, None, False)
    assert (settings.disabled_tools, settings.tokens, settings.workers) == ((), (), 1)
    assert (settings.isolated_packs, settings.pack_memory_mb, settings.pack_processes) == ((), None, 1)


def test_limits_and_later_keys_are_read() -> None:
    """Every key is read, camelCase too; seconds may be fractional."""
    settings = server(
        {
            "toolTimeoutSeconds": 2.5,
            "max_result_bytes": 1000,
            "pack_concurrency": 4,
            "read_timeout_seconds": 3,
            "call_log": "-",
            "call_log_max_bytes": 4096,
            "call_log_keep": 2,
            "access_log": True,
            "disabled_tools": ["jira_create_*"],
            "workers": 2,
            "isolated_packs": ["*"],
            "pack_memory_mb": 256,
            "pack_processes": 2,
        }
    )
    assert (settings.tool_timeout_seconds, settings.read_timeout_seconds) == (2.5, 3.0)
    assert (settings.max_result_bytes, settings.pack_concurrency, settings.call_log) == (1000, 4, "-")
    assert (settings.call_log_max_bytes, settings.call_log_keep, settings.access_log) == (4096, 2, True)
    assert (settings.disabled_tools, settings.workers, settings.isolated_packs) == (("jira_create_*",), 2, ("*",))
    assert (settings.pack_memory_mb, settings.pack_processes) == (256, 2)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"tool_timeout_seconds": 0}, r"^server\.tool_timeout_seconds must be a positive number$"),
        ({"tool_timeout_seconds": "5"}, r"^server\.tool_timeout_seconds must be a positive number$"),
        ({"tool_timeout_seconds": True}, r"^server\.tool_timeout_seconds must be a positive number$"),
        ({"read_timeout_seconds": float("nan")}, r"^server\.read_timeout_seconds must be a positive number$"),
        ({"max_result_bytes": -1}, r"^server\.max_result_bytes must be a positive integer$"),
        ({"workers": 0}, r"^server\.workers must be a positive integer$"),
        ({"pack_memory_mb": None}, r"^server\.pack_memory_mb must be a positive integer$"),
        ({"disabled_tools": "x"}, r"^server\.disabled_tools must be a list of strings$"),
    ],
)
def test_limits_and_later_keys_errors(raw: dict[str, Any], message: str) -> None:
    """No coercion and no zero: each key's error names it."""
    with pytest.raises(ConfigError, match=message):
        server(raw)


def test_scoped_tokens_resolve_and_are_secret() -> None:
    """server.tokens entries resolve `$VAR`, default to all tools, get a name, and are redacted."""
    settings = parse_config(
        {"server": {"tokens": [{"token": "$CI_TOKEN", "tools": ["local_query"], "name": "ci"}, {"token": "lit-tok"}]}},
        env={"CI_TOKEN": "ci-secret-1"},
        trackers=TrackerRegistry(),
        base_dir=Path(),
    )
    first, second = settings.server.tokens
    assert (first.token, first.name, first.tools) == ("ci-secret-1", "ci", ("local_query",))
    assert (second.token, second.name, second.tools) == ("lit-tok", "token-1", ("*",))
    assert {"ci-secret-1", "lit-tok"} <= settings.secrets
    assert "ci-secret-1" not in repr(settings.server)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ([{"token": "$UNSET_TOKEN"}], r"^server\.tokens\.0\.token: \$UNSET_TOKEN is not set$"),
        ([{"token": " "}], r"^server\.tokens\.0\.token is set but resolves to an empty value$"),
        ([{"tokn": "a-b-c"}], r'^server\.tokens\.0 contains unsupported keys: tokn \(did you mean "token"\?\)$'),
        ([{"name": "x"}], r"^server\.tokens\.0\.token is required$"),
        ([{"token": "a-b-c", "name": "x"}, {"token": "d-e-f", "name": "x"}], r"^server\.tokens\.1\.name 'x' is used"),
        ([{"token": "a-b-c", "scopes": []}], r"^server\.tokens\.0 contains unsupported keys: scopes$"),
    ],
)
def test_scoped_token_errors(raw: object, message: str) -> None:
    """A scoped token never silently turns into no token, and its errors name the entry."""
    with pytest.raises(ConfigError, match=message):
        server({"tokens": raw})


def test_the_fast_path_switch() -> None:
    """``server.fast_path`` is on by default; the setting or ``LORENZ_FAST_PATH=0`` turns it off."""
    assert server({}).fast_path is True
    assert server({"fast_path": False}).fast_path is False
    assert server({"fastPath": True}, env={"LORENZ_FAST_PATH": "off"}).fast_path is False
    assert server({}, env={"LORENZ_FAST_PATH": "1"}).fast_path is True
    with pytest.raises(ConfigError, match=r"^server\.fast_path must be a boolean$"):
        server({"fast_path": "no"})
