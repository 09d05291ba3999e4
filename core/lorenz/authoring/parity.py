"""The format-parity rule: a tool's custom ``format`` must render every output field, because some
clients show the model only the text content. Checked by rendering a sample output whose leaves
are distinct sentinels and looking for each of them in the text (the text blocks, when ``format``
returns content blocks: an image or a link does not count)."""

from __future__ import annotations

import enum
import re
import types
import typing
from collections import abc
from collections.abc import Iterable
from typing import Any

import attrs

from lorenz.results import error_message

from .content import rendered
from .diagnostics import Diagnostic, Severity
from .tool import Tool

__all__ = ["format_parity"]


class _Sentinels:
    """Distinct values for the format-parity check: strings that survive markdown escaping,
    integers that are easy to spot with or without digit grouping."""

    def __init__(self) -> None:
        self.count = 0
        #: ``(path, needles, key)``: the rendered text must contain one needle (or the key name).
        self.leaves: list[tuple[str, list[str], str | None]] = []

    def _next(self) -> int:
        self.count += 1
        return self.count

    def value(self, tp: Any, path: str, key: str, depth: int = 0) -> Any:
        if depth > 8:
            raise ValueError(f"{path}: nested deeper than 8 levels")
        origin = typing.get_origin(tp)
        args = typing.get_args(tp)
        if origin is typing.Annotated:
            return self.value(args[0], path, key, depth)
        if origin in (typing.Union, types.UnionType):
            members = [arg for arg in args if arg is not type(None)]
            return self.value(members[0], path, key, depth) if members else None
        if tp is str:
            text = f"lz{self._next():03d}snt"
            self.leaves.append((path, [text], None))
            return text
        if tp is bool:
            self.leaves.append((path, ["true", "false", "yes", "no"], key))
            return True
        if tp is int or tp is float:
            number = 731000 + self._next()
            self.leaves.append((path, [str(number), f"{number:,}"], None))
            return number if tp is int else float(number)
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            member = next(iter(tp))
            self.leaves.append((path, [str(member.value)], key))
            return member
        if origin is typing.Literal:
            self.leaves.append((path, [str(args[0])], key))
            return args[0]
        if isinstance(tp, type) and attrs.has(tp):
            return self.instance(tp, path, depth + 1)
        if origin in (list, tuple, set, frozenset, abc.Sequence):
            item = args[0] if args else str
            value = [self.value(item, f"{path}[0]", key, depth + 1)]
            return tuple(value) if origin is tuple else value
        if origin in (dict, abc.Mapping):
            item = args[1] if len(args) == 2 else str
            name = f"lz{self._next():03d}key"
            self.leaves.append((f"{path}.<key>", [name], None))
            return {name: self.value(item, f"{path}.{name}", key, depth + 1)}
        raise ValueError(f"{path}: cannot build a sample {tp!r}")

    def instance(self, cls: type, path: str, depth: int = 0) -> Any:
        attrs.resolve_types(cls)
        values = {}
        for field in attrs.fields(cls):
            values[field.alias or field.name] = self.value(
                field.type, f"{path}.{field.name}" if path else field.name, field.name, depth
            )
        return cls(**values)


def format_parity(pack: str, tool: Tool[Any, Any]) -> Iterable[Diagnostic]:
    def diag(rule: str, severity: Severity, message: str) -> Diagnostic:
        return Diagnostic(rule=rule, severity=severity, message=message, pack=pack, tool=tool.name)

    assert tool.output is not None and tool.format is not None
    sentinels = _Sentinels()
    try:
        sample = sentinels.instance(tool.output, "")
    except Exception as exc:
        yield diag("format-parity-walk-failed", "warning", f"cannot build a sample output: {error_message(exc)}")
        return
    try:
        text, blocks = rendered(tool.format(sample), tool.name)
    except Exception as exc:
        yield diag("format-parity-threw", "warning", f"format() raised on a sample output: {error_message(exc)}")
        return
    lowered = text.lower()
    missing = []
    for path, needles, key in sentinels.leaves:
        if any(re.search(rf"(?<![\w]){re.escape(needle.lower())}(?![\w])", lowered) for needle in needles):
            continue
        if any(needle in text for needle in needles if needle.startswith("lz")):
            continue
        if key is not None and (key.lower() in lowered or key.replace("_", " ").lower() in lowered):
            continue
        missing.append(path)
    if missing:
        yield diag(
            "format-parity",
            "error",
            "format() leaves out output field(s) "
            + ", ".join(missing)
            + ("" if blocks is None else " from its text blocks")
            + "; clients that read only the text would never see them",
        )
