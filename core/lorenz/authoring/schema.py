"""JSON Schema (2020-12) generated from attrs classes: strict input schemas, output schemas, and the
widened output schema a tool advertises so an error result still validates against it."""

from __future__ import annotations

import datetime as dt
import enum
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from lorenz.arguments import ArgumentError

__all__ = [
    "DIALECT",
    "SchemaError",
    "camel_case",
    "describe",
    "input_schema",
    "object_schema",
    "output_schema",
    "type_schema",
    "widened_output_schema",
]

DIALECT = "https://json-schema.org/draft/2020-12/schema"

#: Field-metadata keys copied into a property's schema verbatim (besides ``description``).
_PASSTHROUGH_KEYS = ("examples", "minimum", "maximum", "minLength", "maxLength", "pattern", "minItems", "maxItems")


class SchemaError(TypeError):
    """A type that has no JSON Schema (a function, a set of arbitrary objects, ...)."""


def describe(description: str, *, wire: str | None = None, **schema: Any) -> dict[str, Any]:
    """Field metadata: ``attrs.field(metadata=describe("City name, e.g. Oslo.", examples=["Oslo"]))``.

    Extra keywords (``examples``, ``minimum``, ``maxLength``, ...) are copied into the field's schema
    and checked against the input after structuring. Two keywords shape the field itself:
    ``schema={...}`` is its schema verbatim, replacing the one its type gives (no ``default`` is
    added): for a shape the type cannot say (a record kept as a wire dict, a recursive filter);
    ``omit_none=True`` (on an output field with a default) leaves it out of the result when it is
    ``None``, and out of the output schema's ``required``. ``wire="issueId"`` is the field's key on
    the wire (schemas, arguments, results and argument errors) when it differs from the attribute's
    snake_case name.
    """
    return {"description": description, **schema, **({"wire": wire} if wire else {})}


_CAMEL_MARK = "__lorenz_wire_camel__"

C = typing.TypeVar("C", bound=type)


def camel_case(cls: C) -> C:
    """Class decorator, above ``@frozen``: every field's wire key is its attribute name in camelCase
    (``issue_id`` → ``issueId``), as pydantic's ``alias_generator=to_camel`` does; a field's own
    ``describe(wire=...)`` wins. Nested classes decide for themselves."""
    target: type = cls  # attrs.has narrows its argument; the decorator returns the class as given
    if not attrs.has(target):
        msg = f"camel_case: {cls!r} is not an attrs class (put @camel_case above @frozen)"
        raise TypeError(msg)
    setattr(target, _CAMEL_MARK, True)
    return cls


def _camel(name: str) -> str:
    bare = name.lstrip("_")
    first, *rest = bare.split("_")
    return name[: len(name) - len(bare)] + first + "".join(part[:1].upper() + part[1:] for part in rest)


def wire_name(cls: type, field: attrs.Attribute[Any]) -> str:
    """The key ``cls``'s ``field`` has on the wire: its ``describe(wire=...)`` name, else the
    attribute name (in camelCase when ``cls`` is :func:`camel_case`)."""
    explicit = (field.metadata or {}).get("wire")
    if explicit:
        return str(explicit)
    return _camel(field.name) if getattr(cls, _CAMEL_MARK, False) else field.name


def _is_union(tp: Any) -> bool:
    return typing.get_origin(tp) in (typing.Union, types.UnionType)


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if value is None:
        return "null"
    return "string"


def _enum_schema(values: Sequence[Any]) -> dict[str, Any]:
    kinds = sorted({_json_type(value) for value in values})
    schema: dict[str, Any] = {"type": kinds[0] if len(kinds) == 1 else kinds, "enum": list(values)}
    return schema


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    kind = schema.get("type")
    if isinstance(kind, str) and "enum" not in schema:
        return {**schema, "type": [kind, "null"]}
    if isinstance(kind, str) and "enum" in schema:
        return {**schema, "type": [kind, "null"], "enum": [*schema["enum"], None]}
    return {"anyOf": [schema, {"type": "null"}]}


def type_schema(tp: Any, *, strict: bool) -> dict[str, Any]:
    """The JSON Schema of one Python type (``strict``: nested objects forbid unknown keys)."""
    if tp is Any or tp is object:
        return {}
    if tp is type(None) or tp is None:
        return {"type": "null"}
    if tp is bool:
        return {"type": "boolean"}
    if tp is int:
        return {"type": "integer"}
    if tp is float:
        return {"type": "number"}
    if tp is str:
        return {"type": "string"}
    if tp is dt.datetime:
        return {"type": "string", "format": "date-time"}
    if tp is dt.date:
        return {"type": "string", "format": "date"}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return _enum_schema([member.value for member in tp])
    if isinstance(tp, type) and attrs.has(tp):
        return object_schema(tp, strict=strict)
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Annotated:
        return type_schema(args[0], strict=strict)
    if origin is typing.Literal:
        return _enum_schema(args)
    if _is_union(tp):
        members = [arg for arg in args if arg is not type(None)]
        inner = (
            type_schema(members[0], strict=strict)
            if len(members) == 1
            else {"anyOf": [type_schema(arg, strict=strict) for arg in members]}
        )
        return _nullable(inner) if len(members) < len(args) else inner
    if origin in (list, tuple, set, frozenset, Sequence):
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            if not args:
                return {"type": "array"}
            return {
                "type": "array",
                "prefixItems": [type_schema(arg, strict=strict) for arg in args],
                "minItems": len(args),
                "maxItems": len(args),
            }
        item = args[0] if args else Any
        return {"type": "array", "items": type_schema(item, strict=strict)}
    if origin in (dict, Mapping):
        value = args[1] if len(args) == 2 else Any
        return {"type": "object", "additionalProperties": type_schema(value, strict=strict)}
    if tp in (list, tuple):
        return {"type": "array"}
    if tp is dict:
        return {"type": "object"}
    msg = f"no JSON Schema for type {tp!r}"
    raise SchemaError(msg)


def _resolved_fields(cls: type) -> tuple[attrs.Attribute[Any], ...]:
    attrs.resolve_types(cls)
    return tuple(attrs.fields(cls))


def _required(field: attrs.Attribute[Any]) -> bool:
    return field.default is attrs.NOTHING


def object_schema(cls: type, *, strict: bool, all_required: bool = False) -> dict[str, Any]:
    """The object schema of an attrs class: one property per field (its ``metadata`` description and
    passthrough keywords), ``required`` for fields without a default (every field if
    ``all_required``), and ``additionalProperties: false`` when ``strict``."""
    if not (isinstance(cls, type) and attrs.has(cls)):
        msg = f"{cls!r} is not an attrs class"
        raise SchemaError(msg)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for field in _resolved_fields(cls):
        name = wire_name(cls, field)
        metadata = field.metadata or {}
        # A field whose wire shape its Python type cannot say names that shape itself.
        override = metadata.get("schema")
        schema = dict(override) if isinstance(override, Mapping) else dict(type_schema(field.type, strict=strict))
        if metadata.get("description"):
            schema["description"] = str(metadata["description"])
        for key in _PASSTHROUGH_KEYS:
            if key in metadata:
                schema[key] = metadata[key]
        if (
            not isinstance(override, Mapping)
            and not all_required
            and not _required(field)
            and not isinstance(field.default, attrs.Factory)  # type: ignore[arg-type]
        ):
            default = field.default
            if default is None or isinstance(default, str | int | float | bool):
                schema["default"] = default
            elif isinstance(default, enum.Enum):
                schema["default"] = default.value
        properties[name] = schema
        if metadata.get("omit_none") and not _required(field):
            continue  # may be absent from the output: see ``omit_none``
        if all_required or _required(field):
            required.append(name)
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        out["required"] = required
    if strict:
        out["additionalProperties"] = False
    doc = (cls.__doc__ or "").strip()
    if doc and not doc.startswith(f"{cls.__name__}("):  # attrs' generated repr-like doc is noise
        out["description"] = doc.split("\n\n")[0].replace("\n", " ")
    return out


def input_schema(cls: type) -> dict[str, Any]:
    """The advertised ``inputSchema``: strict at every level, stamped with the 2020-12 dialect."""
    return {"$schema": DIALECT, **object_schema(cls, strict=True)}


def output_schema(cls: type) -> dict[str, Any]:
    """The schema a successful result matches exactly: every field present (``None`` as ``null``)."""
    return object_schema(cls, strict=False, all_required=True)


def _error_envelope(reasons: Sequence[tuple[str, str]]) -> dict[str, Any]:
    reason: dict[str, Any] = {"type": "string", "description": "Stable identifier of the failure mode."}
    if reasons:
        reason["examples"] = [name for name, _ in reasons]
        reason["description"] += " Declared: " + "; ".join(f"{name}: {when}" for name, when in reasons)
    return {
        "type": "object",
        "description": "Present only on a failed call (isError: true).",
        "properties": {
            "message": {"type": "string"},
            "reason": reason,
            "retryable": {"type": "boolean"},
            "recovery": {"type": "string", "description": "What to do next."},
            "code": {"type": "integer", "description": "JSON-RPC-style code of the failure mode, when it has one."},
            "retryAfter": {"type": "number", "description": "Seconds to wait before retrying, when known."},
        },
        "required": ["message"],
    }


def widened_output_schema(cls: type, reasons: Sequence[tuple[str, str]] = ()) -> dict[str, Any]:
    """The ``outputSchema`` a tool advertises: the success object, or ``{"error": {...}}``.

    Success fields are optional at the root and their ``required`` list moves into an ``anyOf``
    branch, so a client validating ``structuredContent`` without looking at ``isError`` accepts
    both; the root stays ``type: object`` (a bare root ``anyOf`` is rewritten by some clients).
    """
    success = output_schema(cls)
    if "error" in success["properties"]:
        msg = f"{cls.__name__} declares a field named 'error', reserved for the failure envelope"
        raise SchemaError(msg)
    required = success.pop("required", [])
    success["properties"]["error"] = _error_envelope(reasons)
    success_branch: dict[str, Any] = {"type": "object", "not": {"type": "object", "required": ["error"]}}
    if required:
        success_branch["required"] = required
    success["anyOf"] = [success_branch, {"type": "object", "required": ["error"]}]
    return {"$schema": DIALECT, **success}


_KEYWORDS = ("minimum", "maximum", "minLength", "maxLength", "pattern", "minItems", "maxItems")


def _constraints(schema: Any) -> dict[str, Any]:
    """The part of ``schema`` that carries keyword constraints (types, keys and enums are already
    checked by structuring), so validating a call costs only what the constraints need."""
    if not isinstance(schema, Mapping):
        return {}
    out: dict[str, Any] = {key: schema[key] for key in _KEYWORDS if key in schema}
    properties = {name: _constraints(sub) for name, sub in (schema.get("properties") or {}).items()}
    properties = {name: sub for name, sub in properties.items() if sub}
    if properties:
        out["properties"] = properties
    items = _constraints(schema.get("items"))
    if items:
        out["items"] = items
    if any(_constraints(branch) for branch in schema.get("anyOf") or ()):
        out["anyOf"] = schema["anyOf"]
    return out


@attrs.define
class KeywordCheck:
    """The keyword constraints of an input schema that structuring does not check (``minimum``,
    ``maxLength``, ...), compiled on the first check, not when a pack is imported: checked by
    ``jsonschema-rs``, worded by ``jsonschema`` when it refuses."""

    constraints: Mapping[str, Any]
    _validator: Any = None

    def check(self, value: Any) -> None:
        """Raise :class:`ArgumentError` naming each key that breaks a constraint."""
        if self._validator is None:
            from lorenz.toolcall.schemas import validator_of  # jsonschema: listing tools never loads it

            self._validator = validator_of(self.constraints)  # native first: ~1 µs, not ~30
        if self._validator.is_valid(value):
            return
        from lorenz.toolcall.schemas import schema_problems  # a refusal only

        problems = schema_problems(self._validator.iter_errors(value))
        if problems:
            raise ArgumentError(*problems)


def keyword_check(schema: Mapping[str, Any]) -> KeywordCheck | None:
    """The check of ``schema``'s keyword constraints, ``None`` when it has none."""
    constraints = _constraints(schema)
    return KeywordCheck(constraints) if constraints else None
