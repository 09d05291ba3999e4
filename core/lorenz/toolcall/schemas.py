"""JSON Schema checks shared by the CLI and the MCP host: compiled once, cached by schema, and
their errors worded as :class:`~lorenz.arguments.ArgumentProblem`\\ s."""

from __future__ import annotations

import itertools
import json
import logging
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from lorenz.arguments import ArgumentProblem, invalid_arguments, must_be_one_of, must_be_type, unrecognized_key
from lorenz.results import ToolResult
from lorenz.settings.suggest import did_you_mean

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

__all__ = ["Validator", "compile_schema", "schema_problems", "validate_arguments", "validator_of"]

logger = logging.getLogger("lorenz")


class Validator:
    """A compiled JSON Schema: checked natively (``jsonschema-rs``, ~1 µs) and, only when that check
    fails, by ``jsonschema`` (the reference implementation, ~25 µs even for a small schema), whose
    errors word the refusal. An instance either accepts is valid."""

    __slots__ = ("checker", "native")

    def __init__(self, checker: Any, native: Any | None) -> None:
        self.checker = checker
        self.native = native

    def is_valid(self, instance: Any) -> bool:
        if self.native is not None:
            try:
                if self.native.is_valid(instance):
                    return True
            except Exception:  # a value it cannot take as JSON: the reference decides
                pass
        return bool(self.checker.is_valid(instance))

    def iter_errors(self, instance: Any) -> Iterable[ValidationError]:
        errors: Iterable[ValidationError] = self.checker.iter_errors(instance)
        return errors


_VALIDATORS: dict[str, Validator | None] = {}
_VALIDATORS_LOCK = threading.Lock()


def compile_schema(schema: Mapping[str, Any] | None) -> Validator | None:
    """A compiled JSON Schema validator, cached by the schema's canonical JSON (so a reload that
    keeps a tool's schema reuses it); ``None`` for no schema or a schema that is itself invalid."""
    if schema is None:
        return None
    from jsonschema import SchemaError
    from jsonschema.validators import Draft202012Validator, validator_for

    key = json.dumps(schema, sort_keys=True, default=str)
    with _VALIDATORS_LOCK:
        if key in _VALIDATORS:
            return _VALIDATORS[key]
    cls = validator_for(schema, default=Draft202012Validator)
    validator: Validator | None
    try:
        cls.check_schema(dict(schema))
        validator = validator_of(schema)
    except SchemaError as exc:
        logger.warning("lorenz: ignoring an invalid JSON Schema: %s", exc.message)
        validator = None
    with _VALIDATORS_LOCK:
        _VALIDATORS[key] = validator
    return validator


def validator_of(schema: Mapping[str, Any]) -> Validator:
    """A :class:`Validator` of ``schema`` as given (not checked against its meta-schema, not cached)."""
    from jsonschema.validators import Draft202012Validator, validator_for
    from referencing import Registry

    cls = validator_for(schema, default=Draft202012Validator)
    # An explicit (empty) registry: without one, jsonschema fetches a remote ``$ref`` itself.
    return Validator(cls(schema, registry=Registry()), _native(schema))


def _native(schema: Mapping[str, Any]) -> Any | None:
    """The native validator, or ``None`` when it cannot take the schema (the reference then
    checks alone). Offline: a remote ``$ref`` is never fetched; formats are not asserted, as the
    reference does not assert them."""
    try:
        import jsonschema_rs

        return jsonschema_rs.validator_for(dict(schema), validate_formats=False, offline=True)
    except Exception:
        return None


#: Schema problems named in one refusal.
MAX_REPORTED_PROBLEMS = 10


def validate_arguments(tool: str, arguments: Any, validator: Validator | None) -> ToolResult | None:
    """``None`` when ``arguments`` fit the tool's ``inputSchema``; else the
    :func:`~lorenz.arguments.invalid_arguments` failure naming every key at fault."""
    if validator is None or validator.is_valid(arguments):
        return None
    # The first few problems say what to fix; collecting every error of a huge argument would cost
    # seconds and make a message nobody reads.
    problems = schema_problems(itertools.islice(validator.iter_errors(arguments), MAX_REPORTED_PROBLEMS))
    return invalid_arguments(tool, problems) if problems else None


def schema_problems(errors: Iterable[ValidationError]) -> list[ArgumentProblem]:
    """``jsonschema`` errors as :class:`~lorenz.arguments.ArgumentProblem`\\ s in short words;
    unknown keys first (a misspelled key usually explains a missing one)."""
    found = list(errors)
    # an enum already says what the value must be: its type error would only repeat it
    listed = {tuple(error.absolute_path) for error in found if error.validator in ("enum", "const")}
    found = [e for e in found if not (e.validator == "type" and tuple(e.absolute_path) in listed)]
    found.sort(key=lambda error: error.validator != "additionalProperties")
    return [problem for error in found for problem in _problems(error)]


def _types(kind: Any) -> list[str]:
    return [kind] if isinstance(kind, str) else list(kind)


def _count(n: Any, noun: str) -> str:
    return f"{json.dumps(n)} {noun}{'' if n == 1 else 's'}"


# Each keyword's message from its value in the schema.
_MESSAGES: dict[str, Callable[[Any], str]] = {
    "type": lambda kind: must_be_type(_types(kind)),
    "enum": must_be_one_of,
    "const": lambda value: must_be_one_of([value]),
    "minLength": lambda n: "must not be empty" if n == 1 else f"must be at least {_count(n, 'character')} long",
    "maxLength": lambda n: f"must be at most {_count(n, 'character')} long",
    "minimum": lambda n: f"must be at least {json.dumps(n)}",
    "maximum": lambda n: f"must be at most {json.dumps(n)}",
    "exclusiveMinimum": lambda n: f"must be greater than {json.dumps(n)}",
    "exclusiveMaximum": lambda n: f"must be less than {json.dumps(n)}",
    "multipleOf": lambda n: f"must be a multiple of {json.dumps(n)}",
    "minItems": lambda n: "must not be empty" if n == 1 else f"must have at least {_count(n, 'item')}",
    "maxItems": lambda n: f"must have at most {_count(n, 'item')}",
    "uniqueItems": lambda _: "must not contain duplicate items",
    "minProperties": lambda n: "must not be empty" if n == 1 else f"must have at least {_count(n, 'key')}",
    "maxProperties": lambda n: f"must have at most {_count(n, 'key')}",
    "pattern": lambda pattern: f"must match the pattern {pattern}",
    "not": lambda _: "is not allowed",
}


def _problems(error: ValidationError) -> list[ArgumentProblem]:
    path = tuple(error.absolute_path)
    keyword, instance = error.validator, error.instance
    value: Any = error.validator_value
    schema: Mapping[str, Any] = error.schema if isinstance(error.schema, Mapping) else {}
    if keyword == "required" and isinstance(instance, Mapping):
        return [ArgumentProblem((*path, key), "required") for key in value if key not in instance]
    if keyword == "additionalProperties" and value is False and isinstance(instance, Mapping):
        known, patterns = schema.get("properties") or {}, schema.get("patternProperties") or {}
        extra = [key for key in instance if key not in known and not any(re.search(p, key) for p in patterns)]
        return [ArgumentProblem(path, unrecognized_key(key) + did_you_mean(key, known)) for key in sorted(extra)]
    if keyword in ("anyOf", "oneOf"):
        return [_alternatives(error, path)]
    if keyword in ("minItems", "maxItems") and schema.get("minItems") == schema.get("maxItems"):
        return [ArgumentProblem(path, f"must have exactly {_count(value, 'item')}")]
    if keyword == "items" and value is False:  # no items beyond prefixItems
        return [ArgumentProblem(path, f"must have at most {_count(len(schema.get('prefixItems') or ()), 'item')}")]
    if keyword is None:  # a `false` subschema
        return [ArgumentProblem(path, "is not allowed")]
    message = _MESSAGES.get(str(keyword))
    return [ArgumentProblem(path, message(value) if message is not None else error.message)]


def _alternatives(error: ValidationError, path: tuple[str | int, ...]) -> ArgumentProblem:
    """One problem for a value that fits none (or, for ``oneOf``, more than one) of the branches."""
    branches = error.context or []
    if not branches:
        return ArgumentProblem(path, "matches more than one of the allowed shapes")
    if all(branch.validator == "type" and not branch.path for branch in branches):
        kinds = [_types(branch.validator_value) for branch in branches]
        return ArgumentProblem(path, must_be_type(dict.fromkeys(kind for names in kinds for kind in names)))
    from jsonschema.exceptions import best_match

    best = best_match([error])
    fallback = ArgumentProblem(path, "matches none of the allowed shapes")
    if best is None or best is error:
        return fallback
    return next(iter(_problems(best)), fallback)
