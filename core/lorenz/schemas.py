"""JSON Schema checks shared by the CLI and the MCP host: compiled once, cached by schema."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Mapping
from typing import Any

from .results import ToolResult, tool_failure

__all__ = ["Validator", "compile_schema", "validate_arguments"]

logger = logging.getLogger("lorenz")

#: A compiled ``jsonschema`` validator.
Validator = Any

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
        validator = cls(schema)
    except SchemaError as exc:
        logger.warning("lorenz: ignoring an invalid JSON Schema: %s", exc.message)
        validator = None
    with _VALIDATORS_LOCK:
        _VALIDATORS[key] = validator
    return validator


def validate_arguments(tool: str, arguments: Any, validator: Validator | None) -> ToolResult | None:
    """``None`` when ``arguments`` fit the tool's ``inputSchema``; else a failure naming the field."""
    if validator is None or validator.is_valid(arguments):
        return None
    from jsonschema.exceptions import best_match

    error = best_match(validator.iter_errors(arguments))
    if error is None:
        return None
    path = error.json_path
    where = f"argument {path[2:]}" if path.startswith("$.") else "arguments"
    message = f"invalid arguments for {tool}: {where}: {error.message}"
    return tool_failure(message, path=path)
