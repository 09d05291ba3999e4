"""Result helpers: exact shapes and message text."""

from lorenz import ToolResult, error_message, tool_failure, tool_success, unsupported_tool_failure


def test_tool_success_wraps_result() -> None:
    """tool_success puts the value under `result` with success true."""
    assert tool_success({"a": 1}).to_dict() == {"success": True, "result": {"a": 1}}


def test_tool_success_without_result_omits_key() -> None:
    """A success with no result has no `result` key and an empty payload."""
    result = tool_success()
    assert result.to_dict() == {"success": True}
    assert result.payload() == {}


def test_tool_failure_shape() -> None:
    """tool_failure nests the message under result.error."""
    assert tool_failure("boom").to_dict() == {
        "success": False,
        "error": "boom",
        "result": {"error": {"message": "boom"}},
    }


def test_tool_failure_details_override_nested_message() -> None:
    """A `message` detail overrides the nested message but not the top-level error."""
    result = tool_failure("m", code=1, message="override")
    assert result.error == "m"
    assert result.result == {"error": {"message": "override", "code": 1}}


def test_unsupported_tool_failure_message() -> None:
    """The unsupported-tool message quotes the name as JSON and lists the supported tools."""
    result = unsupported_tool_failure("x", ["a"])
    assert result.error == 'Unsupported tool: "x".'
    assert result.result == {"error": {"message": 'Unsupported tool: "x".', "supportedTools": ["a"]}}


def test_unsupported_tool_failure_escapes_like_json_stringify() -> None:
    """Quotes and control characters are escaped; non-ASCII stays as is."""
    assert unsupported_tool_failure('t"ü\n', []).error == 'Unsupported tool: "t\\"ü\\n".'


def test_failure_payload_without_result() -> None:
    """A failure built by hand without a result shows its error message as the payload."""
    assert ToolResult(success=False, error="bad").payload() == {"error": {"message": "bad"}}
    assert ToolResult(success=False).payload() == {"error": {"message": "dynamic tool failed"}}


def test_error_message_of_key_error_is_bare() -> None:
    """A KeyError's message is the bare key, not Python's quoted repr."""
    assert error_message(KeyError("x")) == "x"
    assert error_message(ValueError("pack exploded")) == "pack exploded"
