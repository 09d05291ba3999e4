"""JSON Schema (as OpenAPI writes it) → attrs fields and classes for a generated module: a Python type,
a default, and ``describe(...)`` with the keywords the kit checks (enum, bounds, lengths, pattern,
format). An object with properties becomes a class of its own (named after its component, else after
its owner and key; the same schema reusing its class), an array of them a ``list`` of it; what a
type cannot say (combinators, maps, a schema cut at a ``$ref`` cycle) is kept verbatim as
``describe(schema=...)`` over ``list[Any]`` / ``dict[str, Any]`` / ``Any``."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from attrs import frozen

from .emit import Call, Expr, Raw, call, docstring, lit, quoted, statement
from .load import REF_MARK
from .names import class_name, snake

__all__ = ["Field", "Model", "Models", "json_schema"]

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
_OPENAPI_ONLY = frozenset(
    {"nullable", "discriminator", "xml", "externalDocs", "example", "readOnly", "writeOnly", REF_MARK}
)
_COMBINATORS = ("oneOf", "anyOf", "not")
#: How deep objects nest as classes; deeper ones stay open objects (their schema kept verbatim).
MAX_NESTING = 6
#: Names a class body calls, or its annotations name (resolved with the class's own names first):
#: a field named like one would shadow it.
_CLASS_BODY = frozenset({"field", "describe", "list", "dict", "str", "int", "float", "bool"})
MAX_CLASS_NAME = 48
MAX_FIELD_NAME = 40


@frozen(kw_only=True)
class Field:
    name: str  # the attribute
    wire: str  # the key the API uses
    annotation: str
    default: str | None  # Python source; None: required
    describe: Call  # the describe(...) call


@frozen(kw_only=True)
class Model:
    name: str  # the class name
    doc: str
    fields: tuple[Field, ...]
    uses: tuple[str, ...]  # the classes its fields name

    def source(self) -> str:
        """The ``@frozen(kw_only=True)`` class's source."""
        lines = ["@frozen(kw_only=True)\n", f"class {self.name}:\n", docstring(self.doc)]
        if self.fields:
            lines.append("\n")
        for f in self.fields:
            keywords: dict[str, Expr] = {"default": Raw(f.default)} if f.default is not None else {}
            lines.append(
                statement(f"{f.name}: {f.annotation} = ", call("field", **keywords, metadata=f.describe), "    ")
            )
        return "".join(lines)


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
    if not rest and isinstance(schema.get("properties"), Mapping):
        rest = ["object"]
    return (rest[0] if len(rest) == 1 else None), nullable


def _merged(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    """An ``allOf`` of objects as one object: their properties and ``required`` together."""
    parts = schema.get("allOf")
    if not isinstance(parts, list) or not all(isinstance(p, Mapping) for p in parts):
        return schema
    parts = [_merged(p) for p in parts]
    if not all(_types(p)[0] in ("object", None) and not any(k in p for k in _COMBINATORS) for p in parts):
        return schema
    out = {key: value for key, value in schema.items() if key != "allOf"}
    properties: dict[str, Any] = {}
    required: list[str] = []
    for part in [*parts, schema]:
        properties |= dict(part.get("properties") or {})
        required += [str(r) for r in part.get("required") or () if r not in required]
        for key in ("description", "title", REF_MARK):
            if part.get(key) and not out.get(key):
                out[key] = part[key]
    out["type"] = "object"
    out |= {"properties": properties} if properties else {}
    return out | ({"required": required} if required else {})


def _text(schema: Mapping[str, Any], fallback: str) -> str:
    text = str(schema.get("description") or schema.get("title") or "").strip()
    return " ".join(text.split()) or fallback


class Models:
    """The classes of one generated module, each named once and in the order they can be defined
    (a class after the classes its fields name)."""

    def __init__(self, taken: set[str]) -> None:
        self.taken = taken  # every name the module binds
        self.models: list[Model] = []
        self._by_schema: dict[str, str] = {}
        #: Fields for a request (``readOnly`` properties left out), else for an answer (``writeOnly`` ones).
        self.request = False

    def add(self, name: str, doc: str, fields: list[Field]) -> Model:
        """A class of a name not yet taken (``name``, else ``name2``, ...)."""
        name = self._free(name)
        classes = {m.name for m in self.models}
        uses = tuple(dict.fromkeys(u for f in fields for u in _named(f.annotation, classes)))
        model = Model(name=name, doc=doc, fields=tuple(fields), uses=uses)
        self.models.append(model)
        return model

    def _free(self, name: str) -> str:
        name = name[:MAX_CLASS_NAME]
        found, n = name, 2
        while found in self.taken:
            found, n = f"{name}{n}", n + 1
        self.taken.add(found)
        return found

    def object_fields(
        self, schema: Any, owner: str, *, taken: set[str] | None = None, depth: int = 0
    ) -> list[Field] | None:
        """The fields of an object schema with ``properties``; ``None`` for any other shape."""
        if not isinstance(schema, Mapping):
            return None
        schema = _merged(schema)
        if not isinstance(schema.get("properties"), Mapping) or any(k in schema for k in _COMBINATORS):
            return None
        required = set(schema.get("required") or ())
        taken = set() if taken is None else taken
        other_side = "readOnly" if self.request else "writeOnly"
        return [
            self.field(str(key), sub, owner=owner, required=key in required, taken=taken, depth=depth)
            for key, sub in schema["properties"].items()
            if not (isinstance(sub, Mapping) and _merged(sub).get(other_side) is True)
        ]

    def _class_of(self, schema: Mapping[str, Any], owner: str, key: str, depth: int) -> str | None:
        """The class for an object schema with properties (made now, or one made before for the same schema)."""
        identity = json.dumps(json_schema(schema), sort_keys=True, default=str)
        if any(isinstance(p, Mapping) and ("readOnly" in p or "writeOnly" in p) for p in schema["properties"].values()):
            identity = f"{self.request}:{identity}"  # a request's class and an answer's differ
        if identity in self._by_schema:
            return self._by_schema[identity]
        ref = schema.get(REF_MARK)
        name = class_name(str(ref)) if ref else owner + class_name(key)
        fields = self.object_fields(schema, name, depth=depth)
        if fields is None:
            return None
        model = self.add(name, _text(schema, f"A {ref}." if ref else f"The API's {key!r} object."), fields)
        self._by_schema[identity] = model.name
        return model.name

    def _type(self, key: str, schema: Mapping[str, Any], owner: str, depth: int) -> tuple[str, dict[str, Any]]:
        """The annotation for ``schema`` (not yet optional) and the keywords ``describe`` needs."""
        schema = _merged(schema)
        kind, _ = _types(schema)
        plain = not any(k in schema for k in _COMBINATORS)
        if kind in _SCALARS and plain:
            keywords = {k: schema[k] for k in _CHECKED if k in schema}
            values = [v for v in schema.get("enum") or () if v is not None]
            if values and all(isinstance(v, str | int) and not isinstance(v, bool) for v in values):
                return f"Literal[{', '.join(_literal(v) for v in values)}]", keywords  # advertised as an enum
            return _SCALARS[kind], keywords
        if kind == "object" and plain and depth < MAX_NESTING and schema.get("properties"):
            found = self._class_of(schema, owner, key, depth + 1)
            if found is not None:
                return found, {}
        items = schema.get("items")
        if kind == "array" and plain and isinstance(items, Mapping):
            inner, keywords = self._type(f"{key}_item", items, owner, depth)
            if not keywords or set(keywords) == {"format"}:
                nullable = _types(items)[1] and inner != "Any"
                bounds = {k: schema[k] for k in ("minItems", "maxItems") if k in schema}
                return f"list[{inner}{' | None' if nullable else ''}]", bounds
        return {"array": "list[Any]", "object": "dict[str, Any]"}.get(kind or "", "Any"), {
            "schema": json_schema(schema)
        }

    def field(
        self,
        key: str,
        schema: Any,
        *,
        owner: str,
        required: bool,
        taken: set[str],
        note: str | None = None,
        depth: int = 0,
    ) -> Field:
        """The field for the API's ``key``; its attribute name not yet in ``taken`` (then added)."""
        schema = schema if isinstance(schema, Mapping) else {}
        merged = _merged(schema)
        kind, nullable = _types(merged)
        text = " ".join((note or "").split()) or _text(merged, f"The API's {key!r} value.")
        annotation, keywords = self._type(key, schema, owner, depth)
        if "examples" not in keywords and "example" in schema:
            keywords["examples"] = [schema["example"]]
        default: str | None = None
        if not required:
            default = "None"
            if schema.get("default") is not None and kind in _SCALARS and "schema" not in keywords:
                default = _literal(schema["default"]) if isinstance(schema["default"], str) else repr(schema["default"])
        if (nullable or default == "None") and annotation != "Any":
            annotation += " | None"
            if "schema" in keywords and not nullable:  # a verbatim schema must admit the default
                keywords["schema"] = {"anyOf": [keywords["schema"], {"type": "null"}]}
        name = snake(key)
        name = snake(name[:MAX_FIELD_NAME]) if len(name) > MAX_FIELD_NAME else name
        name = name + "_" if name in _CLASS_BODY else name
        while name in taken:
            name += "_"
        taken.add(name)
        if name != key:
            keywords["wire"] = key
        return Field(
            name=name,
            wire=key,
            annotation=annotation,
            default=default,
            describe=call("describe", lit(text), **{k: lit(v) for k, v in keywords.items()}),
        )

    def parameter_field(self, parameter: Mapping[str, Any], owner: str, taken: set[str]) -> Field:
        """The field for one path/query/header parameter."""
        schema = parameter.get("schema") or {}
        required = bool(parameter.get("required"))
        note = parameter.get("description")
        return self.field(str(parameter["name"]), schema, owner=owner, required=required, taken=taken, note=note)

    def wrapper_field(self, key: str, schema: Any, text: str, owner: str, *, required: bool = True) -> Field:
        """A field holding a whole JSON value (a list, or a body no class can say)."""
        schema = schema if isinstance(schema, Mapping) and schema else {}
        return self.field(key, schema, owner=owner, required=required, taken=set(), note=text)


def _literal(value: Any) -> str:
    return quoted(value) if isinstance(value, str) else repr(value)


def _named(annotation: str, names: set[str]) -> list[str]:
    return [word for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", annotation) if word in names]
