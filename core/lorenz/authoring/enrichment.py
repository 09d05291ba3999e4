"""Enrichment: agent-facing context a tool adds beside its output on success — how the server read
the input (``echo``), the true total before a limit (``total``), a ``notice`` (why a result is empty,
what to try) and the fields of the tool's ``enrichment`` class. Set through ``ctx.enrich``; merged
into ``structuredContent`` and mirrored as ``name: value`` lines after the text; dropped on failure."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import attrs

from .schema import SchemaError, object_schema, wire_name
from .structure import unstructure

__all__ = ["BUILTIN_FIELDS", "Enrich", "EnrichmentSpec", "enrichment_spec"]

#: The fields every enrichment has (``ctx.enrich.echo/total/notice``), by wire name, in wire order.
BUILTIN_FIELDS: Mapping[str, Mapping[str, Any]] = {
    "notice": {
        "type": "string",
        "description": "A note for the agent about this result, e.g. why it is empty and what to try next.",
    },
    "echo": {"description": "The query or input as the server read it."},
    "total": {"type": "integer", "minimum": 0, "description": "The true total before any limit was applied."},
}


@attrs.frozen(kw_only=True)
class EnrichmentSpec:
    """A tool's enrichment fields: their schemas (wire order: built-ins, then the class's fields)
    and a validator per field, compiled when the field is first set."""

    tool: str
    properties: Mapping[str, Mapping[str, Any]]
    _validators: dict[str, Any] = attrs.field(factory=dict, repr=False, alias="_validators")

    def validator(self, name: str) -> Any:
        """The validator of field ``name`` (:class:`lorenz.toolcall.schemas.Validator`); ``None`` for
        a field not declared."""
        validator = self._validators.get(name)
        if validator is None and name in self.properties:
            from lorenz.toolcall.schemas import validator_of  # jsonschema: only when an output is checked

            validator = self._validators[name] = validator_of(dict(self.properties[name]))
        return validator

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.properties)

    def widen(self, schema: Mapping[str, Any]) -> dict[str, Any]:
        """``schema`` (a tool's widened output schema) with the enrichment fields as optional properties."""
        properties = dict(schema["properties"])
        error = properties.pop("error", None)  # kept last: the success fields, the enrichment, the failure
        properties.update({name: dict(sub) for name, sub in self.properties.items()})
        if error is not None:
            properties["error"] = error
        return {**schema, "properties": properties}


def enrichment_spec(
    tool: str, enrichment: type | bool | tuple[str, ...] | None, output: type | None
) -> EnrichmentSpec | None:
    """The spec of ``tool(..., enrichment=...)``: ``None``/``False`` is none, ``True`` the built-ins
    only, a tuple of built-in names just those (``("echo", "notice")`` for an output that has its own
    ``total``), an attrs class the built-ins plus its fields. Raises ``ValueError`` naming a clash."""
    if enrichment is None or enrichment is False:
        return None
    if output is None:
        msg = f"tool {tool} has enrichment but no output class (enrichment is merged into the output object)"
        raise ValueError(msg)
    properties: dict[str, Mapping[str, Any]] = dict(BUILTIN_FIELDS)
    if isinstance(enrichment, tuple):
        unknown = [name for name in enrichment if name not in BUILTIN_FIELDS]
        if unknown:
            known = ", ".join(BUILTIN_FIELDS)
            msg = f"tool {tool}: {', '.join(map(repr, unknown))} not built-in enrichment fields ({known})"
            raise ValueError(msg)
        properties = {name: schema for name, schema in BUILTIN_FIELDS.items() if name in enrichment}
    elif enrichment is not True:
        if not (isinstance(enrichment, type) and attrs.has(enrichment)):
            msg = f"tool {tool}: enrichment must be an attrs class or True, not {enrichment!r}"
            raise TypeError(msg)
        declared = object_schema(enrichment, strict=False)["properties"]
        for name, schema in declared.items():
            if name in BUILTIN_FIELDS:
                msg = (
                    f"tool {tool}: enrichment field {name!r} of {enrichment.__name__} is a built-in enrichment "
                    f"field (ctx.enrich.{name}); remove it from {enrichment.__name__}"
                )
                raise ValueError(msg)
            schema = dict(schema)
            schema.pop("default", None)  # never filled in: an unset field is absent
            properties[name] = schema
    outputs = {wire_name(output, field) for field in attrs.fields(output)}
    for name in properties:
        if name == "error":
            msg = f"tool {tool}: enrichment field 'error' is reserved for the failure envelope"
            raise SchemaError(msg)
        if name in outputs:
            source = "a built-in enrichment field" if name in BUILTIN_FIELDS else "an enrichment field"
            msg = (
                f"tool {tool}: {output.__name__}.{name} clashes with {source} of the same name; "
                "enrichment keys must be disjoint from the output's fields (rename one of them)"
            )
            raise ValueError(msg)
    return EnrichmentSpec(tool=tool, properties=properties)


class Enrich:
    """``ctx.enrich``: what a handler adds for the agent on success.

    ``echo(value)``, ``total(n)``, ``notice(text)`` (each call adds a line) and
    ``set(field=value, ...)`` for the fields of the tool's ``enrichment`` class. A field the tool
    does not declare, or a value its schema refuses, raises at once (a programming error).
    """

    __slots__ = ("_spec", "_tool", "_values")

    def __init__(self, spec: EnrichmentSpec | None, tool: str) -> None:
        self._spec = spec
        self._tool = tool
        self._values: dict[str, Any] = {}

    def echo(self, value: Any) -> None:
        """How the server read the query or input (a string, or any JSON value)."""
        self.set(echo=value)

    def total(self, n: int) -> None:
        """The true total before ``limit`` cut the result."""
        self.set(total=n)

    def notice(self, text: str) -> None:
        """A note for the agent: why the result is empty, what to try. Notices add up, one per line."""
        if not isinstance(text, str):
            msg = f"ctx.enrich.notice() takes a str, not {type(text).__name__}"
            raise TypeError(msg)
        previous = self._values.get("notice")
        self.set(notice=text if previous is None else f"{previous}\n{text}")

    def set(self, **fields: Any) -> None:
        """Set declared enrichment fields by name: ``ctx.enrich.set(effective_query="oslo")``."""
        spec = self._spec
        if spec is None:
            msg = (
                f"tool {self._tool} declares no enrichment; "
                "pass enrichment=True (or an attrs class) to tool(...) to use ctx.enrich"
            )
            raise ValueError(msg)
        for name, value in fields.items():
            validator = spec.validator(name)
            if validator is None:
                declared = ", ".join(spec.names)
                msg = f"tool {self._tool} declares no enrichment field {name!r} (declared: {declared})"
                raise ValueError(msg)
            data = unstructure(value)
            problem = None if validator.is_valid(data) else next(iter(validator.iter_errors(data)), None)
            if problem is not None:
                msg = f"tool {self._tool}: enrichment field {name!r}: {problem.message}"
                raise TypeError(msg)
            self._values[name] = data

    @property
    def fields(self) -> tuple[str, ...]:
        """The fields this tool declares (empty without enrichment), in wire order."""
        return self._spec.names if self._spec is not None else ()

    @property
    def values(self) -> dict[str, Any]:
        """What was set, in wire order."""
        return {name: self._values[name] for name in self.fields if name in self._values}

    def merge(self, data: Any, text: str) -> tuple[Any, str]:
        """``data`` and ``text`` of a successful output with the enrichment added."""
        values = self.values
        if not values or not isinstance(data, dict):
            return data, text
        return {**data, **values}, f"{text}\n\n{mirror(values)}" if text else mirror(values)


def mirror(values: Mapping[str, Any]) -> str:
    """The text lines of an enrichment: ``name: value`` (strings as they are, other values as JSON;
    a second line of a value indented)."""
    lines = []
    for name, value in values.items():
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        lines.append(f"{name}: " + shown.replace("\n", "\n  "))
    return "\n".join(lines)
