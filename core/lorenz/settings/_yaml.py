"""Front matter YAML with the YAML 1.2 *core* schema, loaded into plain Python data.

ruamel.yaml's own 1.2 resolver still resolves timestamps and ``1_000``; the core schema does
not, so ``2024-01-01`` and ``1_000`` stay strings here, like in the original (the ``yaml`` npm
package). ``yes``/``on`` stay strings and ``0o17`` is 15.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.resolver import BaseResolver

__all__ = ["YamlError", "load_yaml"]


class YamlError(ValueError):
    """The text is not valid YAML (or holds a value plain data cannot carry)."""


# YAML 1.2.2, 10.3.2 "Tag Resolution" of the core schema.
_CORE_RESOLVERS: tuple[tuple[str, str, list[str]], ...] = (
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", list("tTfF")),
    ("tag:yaml.org,2002:int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", list("-+0123456789")),
    (
        "tag:yaml.org,2002:float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        list("-+0123456789."),
    ),
)


class _CoreSchemaResolver(BaseResolver):
    """Resolves plain scalars by the core schema only (no timestamps, merge keys or ``_``)."""

    yaml_implicit_resolvers: dict[Any, Any] = {}  # noqa: RUF012 - ruamel's class-level table

    def __init__(self, version: Any = None, loader: Any = None, loadumper: Any = None) -> None:
        super().__init__(loader if loader is not None else loadumper)

    @property
    def processing_version(self) -> Any:
        return (1, 2)


for _tag, _pattern, _first in _CORE_RESOLVERS:
    _regexp = re.compile(_pattern)
    for _char in _first:
        _CoreSchemaResolver.yaml_implicit_resolvers.setdefault(_char, []).append((_tag, _regexp))


def _yaml() -> YAML:
    yaml = YAML(typ="safe", pure=True)
    yaml.Resolver = _CoreSchemaResolver
    return yaml


def load_yaml(text: str) -> Any:
    """Parse one YAML document into dicts, lists, str, int, float, bool and None.

    Raises :class:`YamlError` with a one-line message (duplicate keys included).
    """
    try:
        data = _yaml().load(text)
    except MarkedYAMLError as exc:
        raise YamlError(_describe(exc)) from None
    except YAMLError as exc:
        raise YamlError(" ".join(str(exc).split())) from None
    return _plain(data)


def _describe(exc: MarkedYAMLError) -> str:
    problem = " ".join(str(exc.problem or exc.context or "invalid YAML").split())
    mark = exc.problem_mark or exc.context_mark
    if mark is None:
        return problem
    return f"{problem} at line {mark.line + 1}, column {mark.column + 1}"


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, dict):
        return {_plain_key(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, dt.date):  # only from an explicit !!timestamp tag
        return value.isoformat()
    msg = f"unsupported YAML value of type {type(value).__name__}"
    raise YamlError(msg)


def _plain_key(key: Any) -> str:
    # Keys become strings the way JavaScript object keys do (`1: x` is the key "1").
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if key is None:
        return ""
    if isinstance(key, int | float):
        return str(key)
    msg = f"unsupported YAML map key of type {type(key).__name__}"
    raise YamlError(msg)
