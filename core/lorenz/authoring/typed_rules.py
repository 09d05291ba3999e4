"""The lint rules a typed tool (:func:`~lorenz.authoring.tool`) makes checkable: its error
contracts, the ``ctx.fail`` reasons its handler's source names, its output fields, format parity,
enabled tools that point the agent at a disabled one; and enrichment: ``ctx.enrich`` uses in a
handler's own source that the tool does not declare, and enrichment fields without a description.

The source rules are static, so partial: they see ``<ctx>.enrich.<method>(...)`` (and ``e = ctx.enrich; e.set(...)``) in
the handler's body, with literal keyword names; not ``set(**fields)``, nor a helper the handler
passes ``ctx`` to. Those raise at the call instead (``ctx.enrich`` refuses an undeclared field).
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import attrs

from lorenz.settings.model import Settings

from .diagnostics import Diagnostic, Severity
from .failures import BASELINE_ERRORS
from .pack import DisabledTool, Pack
from .parity import format_parity
from .tool import REASON_RE, Tool

__all__ = ["contract_rules", "enrichment_rules", "reference_rules"]

#: Words a recovery needs at least to say what the agent should do next.
MIN_RECOVERY_WORDS = 5

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


def contract_rules(pack: str, tool: Tool[Any, Any]) -> Iterable[Diagnostic]:
    def diag(rule: str, severity: Severity, message: str) -> Diagnostic:
        return Diagnostic(rule=rule, severity=severity, message=message, pack=pack, tool=tool.name)

    for contract in tool.errors:
        reason = contract.reason
        if not reason:
            yield diag("error-contract-reason-required", "error", "an error contract has no reason")
        elif not REASON_RE.match(reason):
            yield diag("error-contract-reason-format", "warning", f"reason {reason!r} should be snake_case")
        if not (contract.when or "").strip():
            yield diag("error-contract-when-required", "error", f"reason {reason}: `when` is empty")
        recovery = contract.recovery if isinstance(contract.recovery, str) else ""
        if not recovery.strip():
            yield diag("error-contract-recovery-required", "error", f"reason {reason}: `recovery` is empty")
        elif len(recovery.split()) < MIN_RECOVERY_WORDS:
            yield diag(
                "error-contract-recovery-min-words",
                "error",
                f"reason {reason}: recovery {recovery!r} has fewer than {MIN_RECOVERY_WORDS} words; "
                "say what the agent should do next",
            )
        if not isinstance(contract.retryable, bool):
            yield diag("error-contract-retryable-type", "warning", f"reason {reason}: `retryable` must be a boolean")
        if contract.code is not None and (not isinstance(contract.code, int) or isinstance(contract.code, bool)):
            yield diag("error-contract-code-type", "warning", f"reason {reason}: `code` must be an integer")
    yield from _fail_rules(pack, tool)
    yield from enrichment_rules(pack, tool)
    if tool.output is not None:
        undescribed = [f.name for f in attrs.fields(tool.output) if not (f.metadata or {}).get("description")]
        if undescribed:
            yield diag(
                "describe-on-fields", "warning", f"output fields without a description: {', '.join(undescribed)}"
            )
    if tool.format is not None and tool.output is not None:
        yield from format_parity(pack, tool)


def _fail_reasons(handler: Callable[..., Any]) -> list[tuple[str, int]] | None:
    """``(reason, line)`` of every ``<ctx>.fail("reason", ...)`` in the handler's source."""
    try:
        source = textwrap.dedent(inspect.getsource(handler))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError):
        return None
    func = next((node for node in ast.walk(tree) if isinstance(node, ast.AsyncFunctionDef | ast.FunctionDef)), None)
    if func is None or not func.args.args:
        return []
    ctx_name = func.args.args[0].arg
    _, first_line = inspect.getsourcelines(handler)
    found = []
    for node in ast.walk(func):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "fail"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == ctx_name
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.append((node.args[0].value, first_line + node.lineno - 1))
    return found


def _fail_rules(pack: str, tool: Tool[Any, Any]) -> Iterable[Diagnostic]:
    calls = _fail_reasons(tool.handler)
    if calls is None:
        return
    declared = {contract.reason for contract in tool.errors}
    # Baseline reasons need no declaration, like the factories (``raise not_found(...)``): a pack
    # author declares what is particular to the tool, not that an upstream can be down.
    allowed = declared | set(BASELINE_ERRORS)
    where = inspect.getsourcefile(tool.handler) or "?"
    for reason, line in calls:
        if reason not in allowed:
            listed = ", ".join(sorted(declared)) or "none"
            yield Diagnostic(
                rule="fail-undeclared-reason",
                severity="error",
                message=(
                    f'ctx.fail("{reason}") at {Path(where).name}:{line} is not a declared reason (declared: {listed})'
                ),
                pack=pack,
                tool=tool.name,
            )


def reference_rules(pack: Pack, settings: Settings) -> Iterable[Diagnostic]:
    """Enabled tools must not send the agent to a tool that can be disabled."""
    gated = [entry for entry in pack.tools if isinstance(entry, DisabledTool)]
    if not gated:
        return
    for entry in pack.tools:
        if isinstance(entry, DisabledTool):
            continue
        texts = [("description", entry.description)]
        texts += [(f"recovery of {c.reason}", c.recovery) for c in entry.errors]
        for prop, schema in (entry.input_schema.get("properties") or {}).items():
            texts.append((f"description of {prop}", str((schema or {}).get("description") or "")))
        for off in gated:
            for label, text in texts:
                if re.search(rf"\b{re.escape(off.name)}\b", text or ""):
                    state = "always disabled" if off.unless is None else "disabled unless its option is set"
                    yield Diagnostic(
                        rule="disabled-tool-reference",
                        severity="warning",
                        message=f"the {label} names {off.name}, which is {state}; offer an available next step",
                        pack=pack.name,
                        tool=entry.name,
                    )
