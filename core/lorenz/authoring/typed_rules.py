"""The lint rules of enrichment: ``ctx.enrich`` uses in a handler's own source that the tool does not
declare, and enrichment fields without a description.

Static, so partial: it sees ``<ctx>.enrich.<method>(...)`` (and ``e = ctx.enrich; e.set(...)``) in
the handler's body, with literal keyword names; not ``set(**fields)``, nor a helper the handler
passes ``ctx`` to. Those raise at the call instead (``ctx.enrich`` refuses an undeclared field).
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import attrs

from .diagnostics import Diagnostic
from .tool import Tool

__all__ = ["enrichment_rules"]

_METHODS = ("echo", "total", "notice", "set")


def _uses(handler: Any) -> Iterator[tuple[str, tuple[str, ...], int]]:
    """``(method, keyword names, line)`` of each ``ctx.enrich`` use in ``handler``'s source;
    ``method`` is the attribute used (``set``, ``notice``, a misspelling, or ``=`` for assignment)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(handler)))
        _, first = inspect.getsourcelines(handler)
    except (OSError, TypeError, SyntaxError):
        return
    func = next((node for node in ast.walk(tree) if isinstance(node, ast.AsyncFunctionDef | ast.FunctionDef)), None)
    if func is None or not func.args.args:
        return
    ctx = func.args.args[0].arg

    def is_enrich(node: ast.expr) -> bool:
        if isinstance(node, ast.Attribute) and node.attr == "enrich":
            return isinstance(node.value, ast.Name) and node.value.id == ctx
        return isinstance(node, ast.Name) and node.id in aliases

    aliases = {
        target.id
        for node in ast.walk(func)
        if isinstance(node, ast.Assign) and is_enrich(node.value)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    for node in ast.walk(func):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and is_enrich(node.func.value):
            names = tuple(keyword.arg for keyword in node.keywords if keyword.arg is not None)
            yield node.func.attr, names, first + node.lineno - 1
        elif isinstance(node, ast.Assign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Attribute) and is_enrich(target.value):
                    yield "=" + target.attr, (), first + node.lineno - 1


def enrichment_rules(pack: str, tool: Tool[Any, Any]) -> Iterable[Diagnostic]:
    def diag(rule: str, message: str, severity: Any = "error") -> Diagnostic:
        return Diagnostic(rule=rule, severity=severity, message=message, pack=pack, tool=tool.name)

    cls = tool.enrichment
    if isinstance(cls, type) and attrs.has(cls):
        undescribed = [f.name for f in attrs.fields(cls) if not (f.metadata or {}).get("description")]
        if undescribed:
            yield diag(
                "describe-on-fields", f"enrichment fields without a description: {', '.join(undescribed)}", "warning"
            )
    declared = tool.enricher().fields
    where = Path(inspect.getsourcefile(tool.handler) or "?").name
    for method, names, line in _uses(tool.handler):
        at = f"ctx.enrich.{method.lstrip('=')} at {where}:{line}"
        if method.startswith("="):
            yield diag("enrich-unknown-method", f"{at}: assign enrichment with ctx.enrich.set({method[1:]}=...)")
        elif method not in _METHODS:
            yield diag("enrich-unknown-method", f"{at}: ctx.enrich has echo, total, notice and set")
        elif not declared:
            yield diag("enrich-undeclared", f"{at}: the tool declares no enrichment; pass enrichment=True to tool()")
        else:
            wanted = names if method == "set" else (method,)
            for name in wanted:
                if name not in declared:
                    listed = ", ".join(declared)
                    yield diag("enrich-undeclared-field", f"{at} sets {name!r}, not a declared field ({listed})")
