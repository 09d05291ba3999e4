"""``tools.mcp`` options: one upstream (command or url), string maps, ``$VAR`` references; and the
pass-through of tools and results."""

from __future__ import annotations

import re
from typing import Any

import pytest

from lorenz_mcp.convert import tool_result, tool_spec
from lorenz_mcp.options import parse_options, resolve_references, unset_references


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({}, "tools.mcp needs command"),
        ({"command": ["x"], "url": "http://127.0.0.1:1/mcp"}, "not both"),
        ({"command": "npx server"}, "tools.mcp.command must be a non-empty list"),
        ({"command": []}, "tools.mcp.command must be a non-empty list"),
        ({"command": ["x", 3]}, "tools.mcp.command must be a non-empty list of non-empty strings"),
        ({"url": "ftp://host/mcp"}, "tools.mcp.url must be an http(s) URL"),
        ({"command": ["x"], "env": ["A=b"]}, "tools.mcp.env must be a map of strings to strings"),
        ({"url": "http://h/mcp", "headers": {"X": 1}}, "tools.mcp.headers must be a map of strings to strings"),
        ({"command": ["x"], "headers": {"X": "y"}}, "tools.mcp.headers only applies to a url upstream"),
        ({"url": "http://h/mcp", "env": {"X": "y"}}, "tools.mcp.env only applies to a command upstream"),
        ({"command": ["x"], "start_timeout_seconds": 0}, "tools.mcp.start_timeout_seconds must be a number"),
        ({"command": ["x"], "comand": ["y"]}, 'tools.mcp.comand is not supported (did you mean "command"?)'),
        ({"command": ["x"], "sandbox": "yes"}, "tools.mcp.sandbox must be true or false"),
        ({"url": "http://h/mcp", "sandbox": True}, "tools.mcp.sandbox only applies to a command upstream"),
    ],
)
def test_bad_options_name_the_key(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_options(options)


def test_options_key_tells_upstreams_apart() -> None:
    one = parse_options({"command": ["uvx", "mcp-server-time"]})
    two = parse_options({"command": ["uvx", "mcp-server-git"]})
    assert one.key != two.key and one.key == parse_options({"command": ["uvx", "mcp-server-time"]}).key


def test_a_sandboxed_server_is_its_own_upstream() -> None:
    plain = parse_options({"command": ["uvx", "mcp-server-time"]})
    sandboxed = parse_options({"command": ["uvx", "mcp-server-time"], "sandbox": True})
    assert sandboxed.sandbox is True and plain.sandbox is False and plain.key != sandboxed.key


def test_references_resolve_inside_values_and_unset_ones_are_named() -> None:
    environ = {"VENDOR_TOKEN": "abc123"}
    assert resolve_references("Bearer $VENDOR_TOKEN", environ) == "Bearer abc123"
    assert resolve_references("${VENDOR_TOKEN}x", environ) == "abc123x"
    options = parse_options({"url": "http://h/mcp", "headers": {"Authorization": "Bearer $MISSING"}})
    assert unset_references(options, environ) == ["tools.mcp.headers.Authorization: $MISSING is not set"]


def test_tools_and_results_pass_through() -> None:
    wire = {
        "name": "get-tiny-image",
        "title": "Tiny",
        "description": "An image",
        "inputSchema": {"type": "object", "properties": {}},
        "outputSchema": {"type": "object"},
        "annotations": {"readOnlyHint": True},
    }
    spec = tool_spec(wire)
    assert spec.to_wire() == wire
    image = {"type": "image", "data": "aGk=", "mimeType": "image/png"}
    result = tool_result([{"type": "text", "text": "here"}, image], {"n": 1}, False)
    assert result.success and result.result == {"n": 1} and result.content == ({"type": "text", "text": "here"}, image)
    failed = tool_result([{"type": "text", "text": "bad zone"}], None, True)
    assert not failed.success and failed.error == "bad zone" and failed.result == "bad zone"


def test_stdio_lines_over_the_cap_answer_their_request_with_the_caps_error() -> None:
    from mcp_types import JSONRPCError, JSONRPCResponse

    from lorenz_mcp.limits import Lines

    lines = Lines(200, lambda: "test")
    padding = "x" * 500
    # Written result-first with the id last (as the TypeScript SDK does), then id-first, then a
    # notification too big to relay, then one that fits; fed in small chunks.
    stream = (
        f'{{"result":{{"content":[{{"type":"text","text":"{padding}"}}]}},"jsonrpc":"2.0","id":7}}\n'
        f'{{"jsonrpc":"2.0","id":"req-8","result":{{"text":"{padding}"}}}}\n'
        f'{{"jsonrpc":"2.0","method":"notifications/message","params":{{"data":"{padding}"}}}}\n'
        '{"jsonrpc":"2.0","id":9,"result":{}}\n'
    ).encode()
    found = [item for start in range(0, len(stream), 64) for item in lines.feed(stream[start : start + 64])]
    messages = [item.message for item in found]
    assert [type(message) for message in messages] == [JSONRPCError, JSONRPCError, JSONRPCResponse]
    assert [message.id for message in messages] == [7, "req-8", 9]
    assert "more than 200 bytes (server.max_result_bytes)" in messages[0].error.message  # type: ignore[union-attr]
