"""The lint rules over any tool provider: each tool spec's name, description, schemas and
annotations; its OAuth scopes (each one RFC 6749 scope token, or no client can ask for it;
:func:`~lorenz.authoring.tool` refuses such a scope when it is made, a plain ``ToolSpec`` does
not); and the pack's resources and prompts (the hooks answer, URIs are URIs, templates have
variables, nothing is declared twice, everything has a description). Template variables against
a params class need no rule: :func:`~lorenz.authoring.resource_template` refuses a mismatch when
it is made."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from lorenz.contracts import PromptSpec, ResourceSpec, ToolProvider, ToolSpec
from lorenz.results import error_message
from lorenz.uri_templates import template_variables

from .diagnostics import Diagnostic, Severity
from .tool import NAME_RE, SCOPE_RE

__all__ = ["auth_rules", "offer_rules", "spec_rules"]

#: What follows the ``{pack}_`` prefix: lowercase snake_case, one segment or more (``comment``,
#: ``read_issue``, ``list_open_issues``). How many is a review matter, not a lint one.
CONVENTION_RE = re.compile(r"^[a-z0-9]+(_[a-z0-9]+)*$")
#: The longest tool name the model APIs agents run on accept (Anthropic's and OpenAI's cap is 64).
PORTABLE_NAME_LENGTH = 64
HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")


def _check_schema(schema: Any, label: str) -> str | None:
    from jsonschema import SchemaError
    from jsonschema.validators import Draft202012Validator, validator_for

    if not isinstance(schema, Mapping):
        return f"{label} is not a JSON object"
    try:
        validator_for(schema, default=Draft202012Validator).check_schema(dict(schema))
    except SchemaError as exc:
        return f"{label} is not valid JSON Schema: {exc.message}"
    if schema.get("type") != "object":
        return f'{label} must have "type": "object" at the root'
    return None


def _loose_objects(schema: Any, where: str) -> Iterator[str]:
    """The places in ``schema`` that accept keys they do not list: ``""`` for the root (always
    checked), `` at properties.order.items`` for a nested object that lists its ``properties``."""
    if not isinstance(schema, Mapping):
        return
    described = where == "" or isinstance(schema.get("properties"), Mapping)
    if described and schema.get("additionalProperties") is not False:
        yield f" at {where.lstrip('.')}" if where else ""
    for key in ("items", "not", "additionalProperties"):
        yield from _loose_objects(schema.get(key), f"{where}.{key}")
    for key in ("properties", "$defs"):
        for name, sub in (schema.get(key) or {}).items():
            yield from _loose_objects(sub, f"{where}.{key}.{name}")
    for key in ("prefixItems", "anyOf", "oneOf", "allOf"):
        for index, sub in enumerate(schema.get(key) or ()):
            yield from _loose_objects(sub, f"{where}.{key}.{index}")


def spec_rules(pack: str, spec: ToolSpec, seen: set[str]) -> Iterable[Diagnostic]:
    def diag(rule: str, severity: Severity, message: str) -> Diagnostic:
        return Diagnostic(rule=rule, severity=severity, message=message, pack=pack, tool=spec.name)

    name = spec.name
    if not isinstance(name, str) or not NAME_RE.match(name):
        yield diag("name-format", "error", f"tool name {name!r} must match {NAME_RE.pattern}")
    if name in seen:
        yield diag("name-unique", "error", f"tool name {name} is declared more than once")
    seen.add(name)
    if not str(name).startswith(f"{pack}_"):
        yield diag("name-prefix", "error", f"tool name {name} must start with the pack prefix {pack}_")
    elif not CONVENTION_RE.match(str(name).removeprefix(f"{pack}_")):
        yield diag(
            "name-convention",
            "warning",
            f"tool name {name} should be lowercase snake_case after the prefix, like {pack}_read_issue",
        )
    if len(str(name)) > PORTABLE_NAME_LENGTH:
        yield diag(
            "name-length",
            "warning",
            f"tool name {name} has {len(str(name))} characters; model APIs refuse names over {PORTABLE_NAME_LENGTH}",
        )
    if not (spec.description or "").strip():
        yield diag("description-required", "error", "the tool has no description")
    problem = _check_schema(spec.input_schema, "inputSchema")
    if problem is not None:
        yield diag("schema-invalid", "error", problem)
    else:
        schema = spec.input_schema
        for where in _loose_objects(schema, ""):
            yield diag(
                "schema-strict",
                "warning",
                f'inputSchema{where} should set "additionalProperties": false so a misspelled argument is refused',
            )
        properties = schema.get("properties") or {}
        undescribed = [key for key, value in properties.items() if not (value or {}).get("description")]
        if undescribed:
            yield diag("describe-on-fields", "warning", f"input fields without a description: {', '.join(undescribed)}")
    if spec.output_schema is not None:
        problem = _check_schema(spec.output_schema, "outputSchema")
        if problem is not None:
            yield diag("schema-invalid", "error", problem)
    annotations = spec.annotations or {}
    for key in HINTS:
        if key in annotations and not isinstance(annotations[key], bool):
            yield diag("annotation-type", "warning", f"annotation {key} must be a boolean")
    if annotations.get("readOnlyHint") is True and "destructiveHint" in annotations:
        yield diag("annotation-coherence", "warning", "readOnlyHint: true makes destructiveHint meaningless; drop it")


def auth_rules(pack: str, spec: ToolSpec) -> Iterator[Diagnostic]:
    """A warning for each scope of ``spec.auth`` that is no scope token (empty, a space, a quote)."""
    for scope in spec.auth:
        if not isinstance(scope, str) or not SCOPE_RE.match(scope):
            yield Diagnostic(
                rule="auth-scope",
                severity="warning",
                pack=pack,
                tool=spec.name,
                message=f"auth scope {scope!r} is no OAuth scope token (no spaces, quotes or backslashes); "
                "a client can never ask for it, so no OAuth caller can reach the tool",
            )


def _specs(pack: ToolProvider, hook: str, kind: type, probe: Any) -> list[Any]:
    method = getattr(pack, hook, None)
    if not callable(method):
        return []
    specs = list(method(probe))
    wrong = [type(spec).__name__ for spec in specs if not isinstance(spec, kind)]
    if wrong:
        raise TypeError(f"{hook} returned a {wrong[0]}, not a {kind.__name__}")
    return specs


def offer_rules(pack: ToolProvider, probe: Any) -> Iterator[Diagnostic]:
    """Every finding about ``pack``'s resources, resource templates and prompts."""
    name = str(getattr(pack, "name", "") or "")
    try:
        resources: list[ResourceSpec] = _specs(pack, "resource_specs", ResourceSpec, probe)
        prompts: list[PromptSpec] = _specs(pack, "prompt_specs", PromptSpec, probe)
    except Exception as exc:
        yield Diagnostic(rule="offers-raised", severity="error", pack=name, message=error_message(exc))
        return
    uris: set[str] = set()
    for spec in resources:
        what = "resource template" if spec.template else "resource"
        if spec.uri in uris:
            yield Diagnostic(rule="offer-unique", severity="error", pack=name, message=f"{what} {spec.uri} twice")
        uris.add(spec.uri)
        if ":" not in spec.uri:
            message = f"{what} {spec.uri!r} is not a URI (no scheme, like 'board://')"
            yield Diagnostic(rule="resource-uri", severity="error", pack=name, message=message)
        if bool(template_variables(spec.uri)) != spec.template:
            wanted = "has no {variables}" if spec.template else "has {variables} but is not a template"
            yield Diagnostic(rule="resource-uri", severity="error", pack=name, message=f"{what} {spec.uri} {wanted}")
        if not (spec.description or "").strip():
            message = f"{what} {spec.uri} has no description"
            yield Diagnostic(rule="offer-description", severity="warning", pack=name, message=message)
    names: set[str] = set()
    for prompt in prompts:
        if prompt.name in names:
            yield Diagnostic(rule="offer-unique", severity="error", pack=name, message=f"prompt {prompt.name} twice")
        names.add(prompt.name)
        if not (prompt.description or "").strip():
            message = f"prompt {prompt.name} has no description"
            yield Diagnostic(rule="offer-description", severity="warning", pack=name, message=message)
        for argument in prompt.arguments:
            if not (argument.description or "").strip():
                message = f"prompt {prompt.name}: argument {argument.name} has no description"
                yield Diagnostic(rule="offer-description", severity="warning", pack=name, message=message)
