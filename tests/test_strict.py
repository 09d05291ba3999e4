"""The shared strict cattrs converter and its flat problem list (lorenz.strict)."""

from __future__ import annotations

from typing import Any

import pytest
from attrs import Factory, frozen
from cattrs.errors import ClassValidationError, ForbiddenExtraKeysError

import lorenz
from lorenz.arguments import ArgumentError
from lorenz.authoring import structure as authoring_structure
from lorenz.strict import Key, Problem, WrongType, flatten_errors, make_strict_converter


@frozen
class Inner:
    x: float


@frozen
class Outer:
    name: str
    count: int = 0
    on: bool = False
    tags: tuple[str, ...] = ()
    inner: tuple[Inner, ...] = ()
    scores: dict[str, int] = Factory(dict)


def problems(value: Any) -> list[Problem]:
    converter = make_strict_converter(forbid_extra_keys=True)
    with pytest.raises(ClassValidationError) as caught:
        converter.structure(value, Outer)
    return flatten_errors(caught.value)


@pytest.mark.parametrize(
    ("value", "kind", "expected"),
    [
        ("5", int, "integer"),
        (5.9, int, "integer"),
        (True, int, "integer"),
        (5, str, "string"),
        ("false", bool, "boolean"),
        (1, bool, "boolean"),
        ("1.5", float, "number"),
        ("abc", tuple[str, ...], "array"),
        (b"ab", list[str], "array"),
        ({"a": 1}, tuple[str, ...], "array"),
    ],
)
def test_primitives_and_sequences_are_never_coerced(value: Any, kind: Any, expected: str) -> None:
    """A value of another JSON type fails with WrongType naming the expected type; bool is not an int."""
    with pytest.raises(WrongType) as caught:
        make_strict_converter(forbid_extra_keys=False).structure(value, kind)
    assert caught.value.expected == expected


def test_an_int_is_a_float() -> None:
    """An integer is accepted where a number is expected and comes back as a float."""
    value = make_strict_converter(forbid_extra_keys=False).structure(3, float)
    assert value == 3.0 and type(value) is float


def test_flatten_errors_gives_every_problem_with_its_path() -> None:
    """Attribute names, list indexes and mapping keys make up each problem's path, extra keys first."""
    found = problems({"name": 1, "zz": 0, "tags": ["a", 2], "inner": [{"x": "1"}], "scores": {"a": "b"}})
    assert [problem.path for problem in found] == [(), ("name",), ("tags", 1), ("inner", 0, "x"), ("scores", "a")]
    assert isinstance(found[0].error, ForbiddenExtraKeysError)
    assert str(found[1].error) == "expected string, got integer"
    assert isinstance(found[4].path[1], Key) and not isinstance(found[3].path[2], Key)


def test_extra_keys_pass_when_not_forbidden() -> None:
    """With forbid_extra_keys=False an unknown key is no problem."""
    converter = make_strict_converter(forbid_extra_keys=False)
    assert converter.structure({"name": "a", "zz": 1}, Outer) == Outer(name="a")


def test_a_missing_key_is_a_key_error_at_its_attribute() -> None:
    """A required attribute that is absent is a KeyError problem at that attribute."""
    (problem,) = problems({})
    assert problem.path == ("name",) and isinstance(problem.error, KeyError)


def test_one_argument_error_class_carries_problems() -> None:
    """Typed packs and hand-written packs raise the same ArgumentError; it lists its problems."""
    assert authoring_structure.ArgumentError is ArgumentError is lorenz.ArgumentError
    error = ArgumentError("a: required", "b: expected string, got integer")
    assert error.problems == ["a: required", "b: expected string, got integer"]
    assert str(error) == "a: required; b: expected string, got integer"
    assert ArgumentError("'issueId' is required").problems == ["'issueId' is required"]
