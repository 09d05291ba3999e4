"""Tool-argument helpers: ``lorenz.arguments``."""

from __future__ import annotations

from typing import Any

import pytest

import lorenz
from lorenz.arguments import ArgumentError, as_arguments, optional_str, require_str
from lorenz.results import error_message


def test_as_arguments_keeps_a_mapping() -> None:
    """A mapping input is the arguments, unchanged."""
    args = {"issueId": "A-1"}
    assert as_arguments(args) is args


@pytest.mark.parametrize("value", [None, "A-1", ["issueId"], 3, b"{}"])
def test_as_arguments_treats_other_input_as_empty(value: object) -> None:
    """An input that is not a mapping counts as no arguments."""
    assert dict(as_arguments(value)) == {}


def test_as_arguments_empty_result_is_read_only() -> None:
    """The shared empty arguments cannot be written to by one call and seen by the next."""
    args: Any = as_arguments(None)
    with pytest.raises(TypeError):
        args["issueId"] = "A-1"


def test_require_str_returns_the_value_as_given() -> None:
    """A non-blank string comes back untrimmed."""
    assert require_str({"body": "  hi \n"}, "body") == "  hi \n"


@pytest.mark.parametrize("args", [{}, {"issueId": None}, {"issueId": ""}, {"issueId": " \t"}, {"issueId": 7}])
def test_require_str_rejects_absent_blank_and_non_string(args: dict[str, Any]) -> None:
    """Absent, None, blank and non-string values all fail with "'<key>' is required"."""
    with pytest.raises(ArgumentError) as caught:
        require_str(args, "issueId")
    assert error_message(caught.value) == "'issueId' is required"


def test_argument_error_is_a_value_error() -> None:
    """Code that catches ValueError also catches argument errors."""
    with pytest.raises(ValueError, match="'title' is required"):
        require_str({}, "title")


@pytest.mark.parametrize("args", [{}, {"body": None}, {"body": ""}, {"body": "  "}, {"body": 3}, {"body": ["x"]}])
def test_optional_str_lenient_treats_anything_but_text_as_absent(args: dict[str, Any]) -> None:
    """By default absent, None, blank and non-string values all give None."""
    assert optional_str(args, "body") is None


def test_optional_str_returns_a_string_as_given() -> None:
    """A non-blank string comes back untrimmed in either mode."""
    assert optional_str({"body": " x "}, "body") == " x "
    assert optional_str({"body": " x "}, "body", strict=True) == " x "


@pytest.mark.parametrize("args", [{}, {"plan": None}])
def test_optional_str_strict_absent_is_none(args: dict[str, Any]) -> None:
    """With strict=True an absent or None value is still None."""
    assert optional_str(args, "plan", strict=True) is None


def test_optional_str_strict_keeps_a_blank_string() -> None:
    """With strict=True a blank string is a value (e.g. one that clears a field)."""
    assert optional_str({"plan": ""}, "plan", strict=True) == ""


@pytest.mark.parametrize("value", [3, True, ["x"], {"a": 1}])
def test_optional_str_strict_rejects_a_non_string(value: object) -> None:
    """With strict=True a non-string value fails with "'<key>' must be a string"."""
    with pytest.raises(ArgumentError) as caught:
        optional_str({"plan": value}, "plan", strict=True)
    assert error_message(caught.value) == "'plan' must be a string"


def test_helpers_are_exported_from_lorenz() -> None:
    """Pack authors import the helpers from the top-level package."""
    assert lorenz.require_str is require_str
    assert lorenz.optional_str is optional_str
    assert lorenz.as_arguments is as_arguments
    assert lorenz.ArgumentError is ArgumentError
    assert {"ArgumentError", "as_arguments", "require_str", "optional_str"} <= set(lorenz.__all__)
