"""The fields of an elicitation form (its ``requestedSchema``, MCP's flat subset of JSON Schema), as
``lorenz call`` answers them: a typed value from what the user typed (:func:`parse_typed`), a check
of an ``--answer``'s content (:func:`problems`), and what ``--yes`` accepts (:func:`confirmation`)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from attrs import frozen

from lorenz.settings.suggest import did_you_mean

__all__ = ["Field", "confirmation", "example", "fields_of", "parse_typed", "printable", "problems"]

Kind = Literal["boolean", "integer", "number", "string", "choice", "choices"]

_NO_DEFAULT: Any = object()
_YES = ("y", "yes", "true", "1")
_NO = ("n", "no", "false", "0")


def printable(text: object) -> str:
    """``text`` with every character that does not print (an escape sequence, a line break) as a
    space: what a server sends reaches the terminal as words, never as commands to it."""
    return " ".join("".join(char if char.isprintable() else " " for char in str(text)).split())


@frozen(kw_only=True)
class Field:
    """One field of a form: its name, what it holds, and what the user is told about it."""

    name: str
    kind: Kind
    required: bool
    title: str | None = None
    description: str | None = None
    default: Any = _NO_DEFAULT
    #: (value, label) of a choice or a multiple choice
    choices: tuple[tuple[str, str], ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    min_length: int | None = None
    max_length: int | None = None

    @property
    def has_default(self) -> bool:
        return self.default is not _NO_DEFAULT

    def type_name(self) -> str:
        values = ", ".join(printable(value) for value, _ in self.choices)
        if self.kind == "choice":
            return f"one of {values}"
        if self.kind == "choices":
            return f"a list of {values}" if values else "a list of strings"
        return {"boolean": "a boolean", "integer": "an integer", "number": "a number"}.get(self.kind, "a string")


def _choices(schema: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """A single or multiple choice's (value, label) pairs: ``enum`` (with the legacy ``enumNames``),
    or ``oneOf``/``anyOf`` of ``{"const", "title"}``."""
    if isinstance(schema.get("enum"), list):
        values = [str(value) for value in schema["enum"]]
        names = schema.get("enumNames")
        labels = [str(name) for name in names] if isinstance(names, list) and len(names) == len(values) else values
        return tuple(zip(values, labels, strict=True))
    options = schema.get("oneOf") or schema.get("anyOf") or ()
    return tuple(
        (str(option["const"]), str(option.get("title") or option["const"]))
        for option in options
        if isinstance(option, Mapping) and "const" in option
    )


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def fields_of(schema: Any) -> list[Field]:
    """The fields of a ``requestedSchema``, in its order; a property of a type no form holds is a
    string field (the tool checks the answer it gets)."""
    if not isinstance(schema, Mapping) or not isinstance(schema.get("properties"), Mapping):
        return []
    listed = schema.get("required")
    required = [str(name) for name in listed] if isinstance(listed, list) else []
    fields = []
    for name, raw in schema["properties"].items():
        prop: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
        kind: Kind = "string"
        choices: tuple[tuple[str, str], ...] = ()
        if prop.get("type") == "array":
            items = prop.get("items")
            choices = _choices(items) if isinstance(items, Mapping) else ()
            kind = "choices"
        elif prop.get("type") in ("boolean", "integer", "number"):
            kind = prop["type"]
        else:
            choices = _choices(prop)
            kind = "choice" if choices else "string"
        text = {
            key: printable(prop[key]) if isinstance(prop.get(key), str) else None for key in ("title", "description")
        }
        lengths = {key: prop.get(key) if isinstance(prop.get(key), int) else None for key in ("minLength", "maxLength")}
        fields.append(
            Field(
                name=str(name),
                kind=kind,
                required=name in required,
                title=text["title"],
                description=text["description"],
                default=prop["default"] if "default" in prop and prop["default"] is not None else _NO_DEFAULT,
                choices=choices,
                minimum=_number(prop.get("minimum")),
                maximum=_number(prop.get("maximum")),
                min_length=lengths["minLength"],
                max_length=lengths["maxLength"],
            )
        )
    return fields


def problem(field: Field, value: Any) -> str | None:
    """Why ``value`` does not fit ``field``, or ``None``."""
    name = printable(field.name)  # a server's key: words in a message, never escape sequences
    wrong = f"{name} must be {field.type_name()}, not {_json(value)}"
    if field.kind == "boolean":
        return None if isinstance(value, bool) else wrong
    if field.kind in ("integer", "number"):
        number = _number(value)
        if number is None or not math.isfinite(number) or (field.kind == "integer" and not isinstance(value, int)):
            return wrong
        if field.minimum is not None and number < field.minimum:
            return f"{name} must be at least {field.minimum:g}, not {_json(value)}"
        if field.maximum is not None and number > field.maximum:
            return f"{name} must be at most {field.maximum:g}, not {_json(value)}"
        return None
    values = [choice for choice, _ in field.choices]
    if field.kind == "choices":
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            return wrong
        return wrong if values and any(item not in values for item in value) else None
    if not isinstance(value, str) or (field.kind == "choice" and value not in values):
        return wrong
    if field.min_length is not None and len(value) < field.min_length:
        return f"{name} must be at least {field.min_length} characters long"
    if field.max_length is not None and len(value) > field.max_length:
        return f"{name} must be at most {field.max_length} characters long"
    return None


def problems(fields: Sequence[Field], content: Any) -> list[str]:
    """What is wrong with a form's ``content`` (an ``--answer``): not an object, a field it does not
    have (with the closest name), a required field missing, a value of the wrong type."""
    if not isinstance(content, Mapping):
        return [f"the answer must be a JSON object of the form's fields, not {_json(content)}"]
    names = [field.name for field in fields]
    found = [f"the form has no field {key!r}{did_you_mean(key, names)}" for key in content if key not in names]
    for field in fields:
        if field.name in content:
            found += [why for why in [problem(field, content[field.name])] if why]
        elif field.required:
            found.append(f"{printable(field.name)} is required ({field.type_name()})")
    return found


def confirmation(fields: Sequence[Field]) -> dict[str, Any] | None:
    """What ``--yes`` answers a form: each boolean true, every other field its default; ``None`` when a
    field has neither (a form that asks for more than a yes)."""
    content: dict[str, Any] = {}
    for field in fields:
        if field.kind == "boolean":
            content[field.name] = True
        elif field.has_default:
            content[field.name] = field.default
        elif field.required:
            return None
    return content


def example(fields: Sequence[Field]) -> dict[str, Any]:
    """The smallest answer that fits, for the message that says which flag to pass: each required
    field, a boolean true, a choice its first, anything else a placeholder."""
    placeholders = {"boolean": True, "integer": 0, "number": 0, "string": "...", "choices": []}
    return {
        field.name: field.choices[0][0] if field.kind == "choice" else placeholders[field.kind]
        for field in fields
        if field.required
    }


def parse_typed(field: Field, text: str) -> Any:
    """The value the user typed for ``field`` (a choice by its number or its value; several, comma
    separated); ``ValueError`` saying what is expected."""
    text = text.strip()
    if field.kind == "boolean":
        if text.lower() in _YES:
            return True
        if text.lower() in _NO:
            return False
        raise ValueError("answer y or n")
    value: Any
    if field.kind == "choices":
        parts = [part.strip() for part in text.split(",") if part.strip()]
        value = [_pick(field, part) for part in parts] if field.choices else parts
    elif field.kind == "choice":
        value = _pick(field, text)
    elif field.kind == "integer":
        try:
            value = int(text)
        except ValueError:
            raise ValueError("type a whole number") from None
    elif field.kind == "number":
        try:
            value = float(text)
        except ValueError:
            raise ValueError("type a number") from None
    else:
        value = text
    why = problem(field, value)
    if why is not None:
        raise ValueError(why)
    return value


def _pick(field: Field, text: str) -> str:
    if text.isdigit() and 1 <= int(text) <= len(field.choices):
        return field.choices[int(text) - 1][0]
    for value, label in field.choices:
        if text in (value, label):
            return value
    raise ValueError(f"choose 1-{len(field.choices)}, or type a value")


def _json(value: Any) -> str:
    import json

    return printable(json.dumps(value, ensure_ascii=False, default=str))
