"""``lorenz lint``: checks a tool pack against the contract every pack must keep, plus the extra
rules a typed pack (:class:`~lorenz.authoring.Pack`) makes checkable.

Every diagnostic has a stable rule id; errors make ``lorenz lint`` exit non-zero, warnings do not.
The contract calls (an unknown tool, a bad argument) run against a scratch directory with an HTTP
client that refuses every request, so linting never touches the network or a real board.
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from lorenz.contracts import ToolProvider, ToolSpec
from lorenz.results import error_message
from lorenz.settings.model import Settings

from .auth_rules import auth_rules
from .contract import check_contract, run_sync
from .diagnostics import Diagnostic, LintReport, Severity
from .enrich_rules import enrichment_rules
from .failures import BASELINE_ERRORS
from .offer_rules import offer_rules
from .pack import DisabledTool, Pack
from .parity import format_parity
from .project import load_plugins_at, scratch_imports
from .tool import NAME_RE, REASON_RE, Tool

__all__ = [
    "Diagnostic",
    "LintReport",
    "check_contract",
    "lint_discovery",
    "lint_pack",
    "lint_path",
    "run_sync",
]


#: What follows the ``{pack}_`` prefix: lowercase snake_case, one segment or more (``comment``,
#: ``read_issue``, ``list_open_issues``). How many is a review matter, not a lint one.
CONVENTION_RE = re.compile(r"^[a-z0-9]+(_[a-z0-9]+)*$")
#: The longest tool name the model APIs agents run on accept (Anthropic's and OpenAI's cap is 64).
PORTABLE_NAME_LENGTH = 64
MIN_RECOVERY_WORDS = 5
HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")


# -- static rules over any ToolProvider ----------------------------------------------------------


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


def _spec_rules(pack: str, spec: ToolSpec, seen: set[str]) -> Iterable[Diagnostic]:
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


# -- rules a typed tool makes checkable ------------------------------------------------------------


def _contract_rules(pack: str, tool: Tool[Any, Any]) -> Iterable[Diagnostic]:
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


def _reference_rules(pack: Pack, settings: Settings) -> Iterable[Diagnostic]:
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


# -- entry points ---------------------------------------------------------------------------------


def lint_pack(pack: ToolProvider, settings: Settings | None = None, *, contract: bool = True) -> list[Diagnostic]:
    """Every rule for one pack (``contract=False`` skips the calls)."""
    name = str(getattr(pack, "name", "") or "")
    out: list[Diagnostic] = []
    if not re.match(r"^[a-z][a-z0-9_]*$", name):
        out.append(
            Diagnostic(
                rule="pack-name",
                severity="error",
                pack=name or None,
                message=f"pack name {name!r} must be a lowercase identifier",
            )
        )
    probe = settings if settings is not None else Settings()
    try:
        specs = list(pack.tool_specs(probe))
    except Exception as exc:
        return [*out, Diagnostic(rule="tool-specs-raised", severity="error", pack=name, message=error_message(exc))]
    seen: set[str] = set()
    for spec in specs:
        out.extend(_spec_rules(name, spec, seen))
        out.extend(auth_rules(name, spec))
    typed = _typed(pack)
    if typed is not None:
        for entry in typed.tools:
            tool = entry.tool if isinstance(entry, DisabledTool) else entry
            if isinstance(entry, DisabledTool):
                out.extend(_spec_rules(name, tool.spec(), set()))  # checked as if enabled
            out.extend(_contract_rules(name, tool))
        out.extend(_reference_rules(typed, probe))
    out.extend(offer_rules(pack, probe))
    if contract:
        out.extend(run_sync(lambda: check_contract(pack, settings)))
    return _dedupe(out)


def _typed(pack: ToolProvider) -> Pack | None:
    """The typed :class:`Pack` behind ``pack``: itself, or what its ``typed_pack()`` gives (a plain
    provider that defers loading the kit, so registering the plugin stays cheap)."""
    if isinstance(pack, Pack):
        return pack
    hook = getattr(pack, "typed_pack", None)
    found = hook() if callable(hook) else None
    return found if isinstance(found, Pack) else None


def _dedupe(diagnostics: Sequence[Diagnostic]) -> list[Diagnostic]:
    seen: dict[tuple[Any, ...], Diagnostic] = {}
    for diagnostic in diagnostics:
        seen.setdefault((diagnostic.rule, diagnostic.pack, diagnostic.tool, diagnostic.message), diagnostic)
    return list(seen.values())


def _pack_summary(pack: ToolProvider) -> dict[str, Any]:
    settings = Settings()
    try:
        tools = [spec.name for spec in pack.tool_specs(settings)]
    except Exception:
        tools = []
    hook = getattr(pack, "disabled_tools", None)
    off = [entry.name for entry in hook(settings)] if callable(hook) else []
    return {"name": pack.name, "tools": tools, "disabled": off}


def lint_discovery(discovery: Any, *, only: Iterable[str] | None = None) -> LintReport:
    """Lint every pack a :class:`~lorenz.plugins.model.Discovery` found (or the named ones); a plugin
    that failed to load is an error too."""
    names = list(only) if only is not None else discovery.tools.names()
    diagnostics: list[Diagnostic] = []
    packs = []
    for failure in discovery.failures:
        origin = failure.distribution or failure.group
        diagnostics.append(
            Diagnostic(
                rule="plugin-load",
                severity="error",
                pack=None,
                message=f"plugin {failure.name} ({origin}) failed: {failure.error}",
            )
        )
    reports: dict[Any, LintReport] = {}
    for pack_name in names:
        pack = discovery.tools.require(pack_name)
        source = getattr(pack, "isolation_source", None)
        if source is None:
            packs.append(_pack_summary(pack))
            diagnostics.extend(lint_pack(pack))
            continue
        if source not in reports:  # a plugin the host never imports: linted in a confined child
            reports[source] = _linted_elsewhere(source)
            diagnostics.extend(d for d in reports[source].diagnostics if d.pack is None)
        packs += [summary for summary in reports[source].packs if summary.get("name") == pack_name]
        diagnostics.extend(d for d in reports[source].diagnostics if d.pack == pack_name)
    return LintReport(packs=tuple(packs), diagnostics=tuple(diagnostics))


def _linted_elsewhere(source: Any) -> LintReport:
    """The report a confined child made of ``source``'s plugin (an error when it made none)."""
    from lorenz.isolation.survey import lint_report

    report = lint_report(source)
    if isinstance(report, str):
        message = f"plugin {source.entry_point} ({source.label}) could not be linted: {report}"
        return LintReport(diagnostics=(Diagnostic(rule="plugin-load", severity="error", message=message),))
    return LintReport(
        packs=tuple(report.get("packs") or ()),
        diagnostics=tuple(
            Diagnostic(
                rule=str(d.get("rule")),
                severity="error" if d.get("severity") == "error" else "warning",
                message=str(d.get("message")),
                pack=d.get("pack"),
                tool=d.get("tool"),
            )
            for d in report.get("diagnostics") or ()
        ),
    )


def lint_path(path: str | Path) -> LintReport:
    """Lint the packs a project directory, file or module registers (without installing it)."""
    from lorenz.plugins.discovery import discover

    with scratch_imports(Path(path)):
        plugins = load_plugins_at(Path(path))
        discovery = discover(plugins=plugins, entry_points_enabled=False)
        return lint_discovery(discovery)
