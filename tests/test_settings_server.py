"""The `server:` section (core.md §7.7, §11.8 item 84, and the MCP host's keys)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from lorenz.registry import TrackerRegistry
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
    """A server.token that resolves to nothing fails instead of turning auth off."""
    for raw in ("$MY_MCP_TOKEN", ""):
        with pytest.raises(ConfigError, match=r"^server\.token is set but resolves to an empty value$"):
            server({"token": raw}, env={"MY_MCP_TOKEN": ""})


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
