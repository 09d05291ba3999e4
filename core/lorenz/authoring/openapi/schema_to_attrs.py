"""JSON Schema (as OpenAPI writes it) → the source of attrs fields for a generated tool: a Python
type, a default, and ``describe(...)`` with the keywords the kit checks (enum, bounds, lengths,
pattern, format). What a field type cannot say (arrays, objects, combinators) is kept verbatim as
``describe(schema=...)`` over ``list[Any]`` / ``dict[str, Any]`` / ``Any``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from attrs import frozen

from .names import class_name, snake

__all__ = ["Field", "Model", "json_schema", "model_source", "object_fields"]

_SCALARS = {"string": "str", "integer": "int", "number": "float", "boolean": "bool"}
_CHECKED = (
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minItems",
    "maxItems",
)
#: OpenAPI's own keywords, not JSON Schema's (``nullable`` is rewritten as a ``"null"`` type).
_OPENAPI_ONLY = frozenset({"nullable", "discriminator", "xml", "externalDocs", "example", "readOnly", "writeOnly"})


@frozen(kw_only=True)
class Field:
    name: str  # the attribute
    wire: str  # the key the API uses
    annotation: str
    default: str | None  # Python source; None: required
    describe: str  # the describe(...) call's source


@frozen(kw_only=True)
class Model:
    name: str
    doc: str
    fields: tuple[Field, ...]


def json_schema(schema: Any) -> Any:
    """``schema`` as JSON Schema 2020-12: OpenAPI 3.0's ``nullable`` as a ``"null"`` type, ``example``
    as ``examples``, OpenAPI-only keywords dropped."""
    if isinstance(schema, list):
        return [json_schema(item) for item in schema]
    if not isinstance(schema, Mapping):
        return schema
    out = {key: json_schema(value) for key, value in schema.items() if key not in _OPENAPI_ONLY}
    if schema.get("nullable") is True and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    if "example" in schema and "examples" not in out:
        out["examples"] = [schema["example"]]
    return out


def _types(schema: Mapping[str, Any]) -> tuple[str | None, bool]:
    """The one non-null JSON type of ``schema`` (or ``None``) and whether it admits null."""
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if kind else []
    nullable = "null" in kinds or schema.get("nullable") is True
    rest = [k for k in kinds if k != "null"]
    return (rest[0] if len(rest) == 1 else None), nullable


def _field(key: str, schema: Any, *, required: bool, note: str | None = None, taken: set[str] | None = None) -> Field:
    """The field for the API's ``key``; its attribute name not yet in ``taken`` (then added)."""
    schema = schema if isinstance(schema, Mapping) else {}
    kind, nullable = _types(schema)
    text = (note or schema.get("description") or schema.get("title") or "").strip()
    text = " ".join(text.split()) or f"The API's {key!r} value."
    keywords: dict[str, Any] = {}
    if kind in _SCALARS and not any(k in schema for k in ("oneOf", "anyOf", "allOf", "not")):
        annotation = _SCALARS[kind]
        keywords = {k: schema[k] for k in _CHECKED if k in schema and k != "enum"}
        values = [v for v in schema.get("enum") or () if v is not None]
        if values and all(isinstance(v, str | int) and not isinstance(v, bool) for v in values):
            annotation = f"Literal[{', '.join(map(repr, values))}]"  # the kit advertises it as an enum
    else:
        annotation = {"array": "list[Any]", "object": "dict[str, Any]"}.get(kind or "", "Any")
        keywords = {"schema": json_schema(schema)}
    if "examples" not in keywords and "example" in schema:
        keywords["examples"] = [schema["example"]]
    default: str | None = None
    if not required:
        if "default" in schema and schema["default"] is not None and kind in _SCALARS:
            default = repr(schema["default"])
        else:
            default = "None"
    if (nullable or default == "None") and annotation != "Any":
        annotation += " | None"
        if "schema" in keywords and not nullable:  # a verbatim schema must admit the default
            keywords["schema"] = {"anyOf": [keywords["schema"], {"type": "null"}]}
    name = snake(key)
    while taken is not None and name in taken:
        name += "_"
    if taken is not None:
        taken.add(name)
    args = [repr(text), *(f"{k}={v!r}" for k, v in keywords.items())]
    if name != key:
        args.append(f"wire={key!r}")
    return Field(name=name, wire=key, annotation=annotation, default=default, describe=f"describe({', '.join(args)})")


def object_fields(schema: Any, *, taken: set[str] | None = None) -> list[Field] | None:
    """The fields of an object schema with ``properties``; ``None`` for any other shape."""
    if not isinstance(schema, Mapping) or not isinstance(schema.get("properties"), Mapping):
        return None
    if any(k in schema for k in ("oneOf", "anyOf")):
        return None
    required = set(schema.get("required") or ())
    taken = set() if taken is None else taken
    return [_field(str(key), sub, required=key in required, taken=taken) for key, sub in schema["properties"].items()]


def parameter_field(parameter: Mapping[str, Any], taken: set[str]) -> Field:
    """The field for one path/query/header parameter."""
    schema = parameter.get("schema") or {}
    required = bool(parameter.get("required"))
    return _field(str(parameter["name"]), schema, required=required, note=parameter.get("description"), taken=taken)


def wrapper_field(key: str, schema: Any, text: str, *, required: bool = True) -> Field:
    """A field holding a whole JSON value (a list, or a body no class can say)."""
    return _field(key, schema if isinstance(schema, Mapping) and schema else {}, required=required, note=text)


def model_source(model: Model) -> str:
    """The ``@frozen(kw_only=True)`` class's source."""
    lines = ["@frozen(kw_only=True)", f"class {class_name(model.name)}:", f'    """{model.doc}"""']
    if model.fields:
        lines.append("")
    for field in model.fields:
        default = f"default={field.default}, " if field.default is not None else ""
        lines.append(f"    {field.name}: {field.annotation} = field({default}metadata={field.describe})")
    return "\n".join(lines) + "\n"
