"""YAML 1.2 *core schema* loading into plain Python data, shared by the workflow parser and plugins.

ruamel.yaml's own 1.2 resolver still resolves timestamps and ``1_000``; the core schema does
not, so ``2024-01-01`` and ``1_000`` stay strings here, as in the ``yaml`` npm package.
``yes``/``on`` stay strings and ``0o17`` is 15.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.composer import Composer
from ruamel.yaml.constructor import ConstructorError, DuplicateKeyError, SafeConstructor
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.reader import ReaderError
from ruamel.yaml.resolver import BaseResolver

__all__ = ["YamlError", "load_yaml"]


class YamlError(ValueError):
    """The text is not valid YAML (or holds a value plain data cannot carry).

    ``problem`` is the message alone; ``line`` and ``column`` (1-based; lines counted from
    :func:`load_yaml`'s ``first_line``) say where, when the parser knows. ``str()`` is
    ``<problem> at line L, column C``.
    """

    def __init__(self, problem: str, line: int | None = None, column: int | None = None) -> None:
        where = f" at line {line}, column {column}" if line is not None and column is not None else ""
        super().__init__(problem + where)
        self.problem = problem
        self.line = line
        self.column = column


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


class _QuietConstructor(SafeConstructor):
    """Errors that never quote the document's values, which may be secrets (a token, an api_key)."""

    def check_mapping_key(self, node: Any, key_node: Any, mapping: Any, key: Any, value: Any) -> bool:
        if key in mapping:  # ruamel's own message quotes both values
            raise DuplicateKeyError(
                "while constructing a mapping", node.start_mark, f'found duplicate key "{key}"', key_node.start_mark
            )
        return True

    def check_set_key(self, node: Any, key_node: Any, setting: Any, key: Any) -> None:
        if key in setting:
            raise DuplicateKeyError(
                "while constructing a set", node.start_mark, f'found duplicate key "{key}"', key_node.start_mark
            )

    def construct_non_recursive_object(self, node: Any, tag: str | None = None) -> Any:
        try:
            return super().construct_non_recursive_object(node, tag)
        except (YAMLError, RecursionError):
            raise
        except Exception:  # `!!int abc`: int()'s ValueError quotes the value
            problem = f"invalid value for the tag {tag or node.tag!r}"
            raise ConstructorError(None, None, problem, node.start_mark) from None


# ruamel messages that quote (part of) a scalar: only the text before the quote is kept.
_QUOTES_VALUE = re.compile(
    r"^(failed to construct timestamp|failed to convert base64 data into ascii"
    r"|expected escape sequence of \d+ hexdecimal numbers|found unknown escape character)\b.*$",
    re.DOTALL,
)


class _QuietComposer(Composer):
    """YAML 1.2 lets an anchor be defined again (an alias takes the latest); ruamel's warning
    about it would print the document's lines, secrets included, to stderr."""

    def __init__(self, loader: Any = None) -> None:
        super().__init__(loader)
        self.warn_double_anchors = False


def _yaml() -> YAML:
    yaml = YAML(typ="safe", pure=True)
    yaml.Resolver = _CoreSchemaResolver
    yaml.Composer = _QuietComposer
    yaml.Constructor = _QuietConstructor
    return yaml


def load_yaml(text: str, *, first_line: int = 1) -> Any:
    """Parse one YAML document into dicts, lists, str, int, float, bool and None.

    Raises :class:`YamlError` (a ``ValueError``) with a one-line message (duplicate keys included)
    that never quotes a value from the document. ``first_line`` is the line of its file the text
    starts on (``2`` for front matter after a ``---`` line): the lines an error names are the file's.
    """
    try:
        return _Plain()(_yaml().load(text))
    except YamlError:
        raise
    except MarkedYAMLError as exc:
        raise _describe(exc, first_line) from None
    except ReaderError as exc:  # a control character: ruamel gives its offset, not a mark
        line = text.count("\n", 0, exc.position) + first_line
        column = exc.position - text.rfind("\n", 0, exc.position)
        raise YamlError(f"unacceptable character #x{exc.character:04x}: {exc.reason}", line, column) from None
    except YAMLError as exc:
        raise YamlError(" ".join(str(exc).split())) from None
    except RecursionError:
        msg = "front matter nests too deeply"
        raise YamlError(msg) from None
    except Exception:  # a constructor failing outside a node (its message may quote values)
        msg = "invalid YAML value"
        raise YamlError(msg) from None


def _describe(exc: MarkedYAMLError, first_line: int) -> YamlError:
    problem = " ".join(str(exc.problem or exc.context or "invalid YAML").split())
    problem = _QUOTES_VALUE.sub(r"\1", problem)
    mark = exc.problem_mark or exc.context_mark
    context = " ".join(str(exc.context or "").split())
    opened = exc.context_mark
    if opened is not None and context and "stream" in problem and "end" in problem:
        # The text ran out (an unclosed quote, bracket or brace): the end of the front matter is a
        # line past the mistake, so point at where the unclosed thing opened.
        mark = opened
        problem = f"{problem} {context} that opens here"
    elif opened is not None and mark is not None and opened.line != mark.line and "flow" in context:
        # A `{` or `[` left open runs into the next lines: say where it opened, too.
        what = context.removeprefix("while parsing a ")
        problem = f"{problem} in the {what} that opens at line {opened.line + first_line}, column {opened.column + 1}"
    if mark is None:
        return YamlError(problem)
    return YamlError(problem, mark.line + first_line, mark.column + 1)


class _Plain:
    """Converts ruamel's result to plain data.

    Anchored nodes are converted once and shared, so an alias "bomb" stays linear; a node that
    contains itself is refused.
    """

    def __init__(self) -> None:
        self._done: dict[int, Any] = {}
        self._open: set[int] = set()

    def __call__(self, value: Any) -> Any:
        if value is None or isinstance(value, bool | int | float | str):
            return value
        if isinstance(value, dt.date):  # only from an explicit !!timestamp tag
            return value.isoformat()
        if not isinstance(value, dict | list):
            msg = f"unsupported YAML value of type {type(value).__name__}"
            raise YamlError(msg)
        key = id(value)
        if key in self._done:
            return self._done[key]
        if key in self._open:
            msg = "recursive aliases are not supported"
            raise YamlError(msg)
        self._open.add(key)
        if isinstance(value, dict):
            plain: Any = {_plain_key(k): self(v) for k, v in value.items()}
        else:
            plain = [self(item) for item in value]
        self._open.discard(key)
        self._done[key] = plain
        return plain


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
