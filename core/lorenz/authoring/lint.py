"""``lorenz lint``: checks a tool pack against the contract every pack must keep, plus the extra
rules a typed pack (:class:`~lorenz.authoring.Pack`) makes checkable.

Every diagnostic has a stable rule id; errors make ``lorenz lint`` exit non-zero, warnings do not.
The contract calls (an unknown tool, a bad argument) run against a scratch directory with an HTTP
client that refuses every request, so linting never touches the network or a real board.
"""

from __future__ import annotations

import ast
import contextlib
import enum
import importlib
import importlib.util
import inspect
import json
import re
import sys
import tempfile
import textwrap
import threading
import tomllib
import types
import typing
from collections import abc
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar

import attrs
from attrs import frozen

from ..contracts import ToolContext, ToolProvider, ToolSpec
from ..results import ToolResult, error_message
from ..settings.model import Settings
from .pack import DisabledTool, Pack
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

Severity = Literal["error", "warning"]
T = TypeVar("T")

CONVENTION_RE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+){2,}$")
MIN_RECOVERY_WORDS = 5
HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")


@frozen(kw_only=True)
class Diagnostic:
    """One finding: ``rule`` is a stable id (``name-prefix``, ``format-parity``, ...)."""

    rule: str
    severity: Severity
    message: str
    pack: str | None = None
    tool: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "severity": self.severity,
            "pack": self.pack,
            "tool": self.tool,
            "message": self.message,
        }

    def __str__(self) -> str:
        where = "/".join(part for part in (self.pack, self.tool) if part) or "-"
        return f"{self.severity}: {where}: {self.message} [{self.rule}]"


@frozen(kw_only=True)
class LintReport:
    """The packs looked at and what was found."""

    packs: tuple[dict[str, Any], ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "warning"]

    def to_dict(self) -> dict[str, Any]:
        return {
            "packs": list(self.packs),
            "diagnostics": [d.to_dict() for d in self.diagnostics],
            "errors": len(self.errors),
            "warnings": len(self.warnings),
        }


def run_sync(factory: Callable[[], Awaitable[T]]) -> T:
    """Run a coroutine to completion from sync code, even inside a running event loop (in a thread)."""
    import anyio

    box: list[Any] = []

    async def main() -> None:
        box.append(await factory())

    def target() -> None:
        try:
            anyio.run(main)
        except BaseException as exc:  # re-raised in the caller's thread
            box.append(exc)

    thread = threading.Thread(target=target, name="lorenz-lint")
    thread.start()
    thread.join()
    if box and isinstance(box[-1], BaseException):
        raise box[-1]
    result: T = box[0]
    return result


# -- static rules over any ToolProvider ----------------------------------------------------------


def _check_schema(schema: Any, label: str) -> str | None:
    from jsonschema import SchemaError  # type: ignore[import-untyped]
    from jsonschema.validators import Draft202012Validator, validator_for  # type: ignore[import-untyped]

    if not isinstance(schema, Mapping):
        return f"{label} is not a JSON object"
    try:
        validator_for(schema, default=Draft202012Validator).check_schema(schema)
    except SchemaError as exc:
        return f"{label} is not valid JSON Schema: {exc.message}"
    if schema.get("type") != "object":
        return f'{label} must have "type": "object" at the root'
    return None


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
    elif not CONVENTION_RE.match(str(name)):
        yield diag(
            "name-convention",
            "warning",
            f"tool name {name} does not follow {{pack}}_{{verb}}_{{noun}} (lowercase, three segments)",
        )
    if not (spec.description or "").strip():
        yield diag("description-required", "error", "the tool has no description")
    problem = _check_schema(spec.input_schema, "inputSchema")
    if problem is not None:
        yield diag("schema-invalid", "error", problem)
    else:
        schema = spec.input_schema
        if schema.get("additionalProperties") is not False:
            yield diag(
                "schema-strict",
                "warning",
                'inputSchema should set "additionalProperties": false so a misspelled argument is refused',
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
    yield from _fail_rules(pack, tool)
    if tool.output is not None:
        undescribed = [f.name for f in attrs.fields(tool.output) if not (f.metadata or {}).get("description")]
        if undescribed:
            yield diag(
                "describe-on-fields", "warning", f"output fields without a description: {', '.join(undescribed)}"
            )
    if tool.format is not None and tool.output is not None:
        yield from _format_parity(pack, tool)


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
    where = inspect.getsourcefile(tool.handler) or "?"
    for reason, line in calls:
        if reason not in declared:
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


def _format_parity(pack: str, tool: Tool[Any, Any]) -> Iterable[Diagnostic]:
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
        text = tool.format(sample)
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
            + "; clients that read only the text would never see them",
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


# -- the runtime contract: calls return failures, never raise ---------------------------------------


def _refuse(request: Any) -> Any:
    import httpx

    msg = f"lorenz lint: no network ({request.method} {request.url})"
    raise httpx.ConnectError(msg, request=request)


def _bad_arguments(schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """Arguments that do not satisfy ``schema``, or ``None`` when it accepts anything."""
    from jsonschema.validators import Draft202012Validator, validator_for

    try:
        validator = validator_for(schema, default=Draft202012Validator)(schema)
    except Exception:
        return None
    candidates: list[dict[str, Any]] = []
    if schema.get("required"):
        candidates.append({})
    wrong_values: list[Any] = [731001, "lorenz-lint", True, [], {"lorenz": "lint"}, None]
    for name, prop in (schema.get("properties") or {}).items():
        for value in wrong_values:
            try:
                prop_ok = validator_for(prop or {}, default=Draft202012Validator)(prop or {}).is_valid(value)
            except Exception:
                prop_ok = True
            if not prop_ok:
                candidates.append({name: value})
                break
    candidates.append({"lorenz_lint_unexpected": 1})
    for candidate in candidates:
        if not validator.is_valid(candidate):
            return candidate
    return None


async def check_contract(pack: ToolProvider, settings: Settings | None = None) -> list[Diagnostic]:
    """Call ``pack`` the way a careless client would: an unknown tool, then each tool with
    arguments its schema refuses. Each must come back as a failure ``ToolResult``, not raise."""
    import httpx

    name = str(getattr(pack, "name", "?"))
    out: list[Diagnostic] = []
    with tempfile.TemporaryDirectory(prefix="lorenz-lint-") as scratch:
        settings = settings if settings is not None else Settings(base_dir=Path(scratch))
        try:
            specs = list(pack.tool_specs(settings))
        except Exception as exc:
            return [Diagnostic(rule="tool-specs-raised", severity="error", pack=name, message=error_message(exc))]
        async with httpx.AsyncClient(transport=httpx.MockTransport(_refuse), timeout=5.0) as http:
            context = ToolContext(settings=settings, http=http)
            calls: list[tuple[str | None, str, Any]] = [(None, f"{name}_lorenz_lint_no_such_tool", {})]
            for spec in specs:
                bad = _bad_arguments(spec.input_schema) if isinstance(spec.input_schema, Mapping) else None
                if bad is not None:
                    calls.append((spec.name, spec.name, bad))
            for tool_name, called, arguments in calls:
                what = (
                    "an unknown tool name"
                    if tool_name is None
                    else f"arguments its schema refuses ({json.dumps(arguments)})"
                )
                try:
                    result = await pack.execute_tool(called, arguments, context)
                except Exception as exc:
                    out.append(
                        Diagnostic(
                            rule="contract-raised",
                            severity="error",
                            pack=name,
                            tool=tool_name,
                            message=f"calling with {what} raised {type(exc).__name__}: {error_message(exc)}; "
                            "return tool_failure(...) instead",
                        )
                    )
                    continue
                if not isinstance(result, ToolResult):
                    out.append(
                        Diagnostic(
                            rule="contract-result-type",
                            severity="error",
                            pack=name,
                            tool=tool_name,
                            message=f"calling with {what} returned {type(result).__name__}, not a ToolResult",
                        )
                    )
                elif result.success:
                    out.append(
                        Diagnostic(
                            rule="contract-bad-input-accepted",
                            severity="error" if tool_name is None else "warning",
                            pack=name,
                            tool=tool_name,
                            message=f"calling with {what} succeeded; it should be a failure result",
                        )
                    )
    return out


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
    if isinstance(pack, Pack):
        for entry in pack.tools:
            tool = entry.tool if isinstance(entry, DisabledTool) else entry
            if isinstance(entry, DisabledTool):
                out.extend(_spec_rules(name, tool.spec(), set()))  # checked as if enabled
            out.extend(_contract_rules(name, tool))
        out.extend(_reference_rules(pack, probe))
    if contract:
        out.extend(run_sync(lambda: check_contract(pack, settings)))
    return _dedupe(out)


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
    """Lint every pack a :class:`~lorenz.plugins.Discovery` found (or the named ones); a plugin
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
    for pack_name in names:
        pack = discovery.tools.require(pack_name)
        packs.append(_pack_summary(pack))
        diagnostics.extend(lint_pack(pack))
    return LintReport(packs=tuple(packs), diagnostics=tuple(diagnostics))


def _project_modules(root: Path) -> list[str]:
    data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    group = data.get("project", {}).get("entry-points", {}).get("lorenz.tool_packs", {})
    modules = [str(target).split(":")[0] for target in group.values()]
    if not modules:
        msg = f'{root / "pyproject.toml"} declares no [project.entry-points."lorenz.tool_packs"]'
        raise ValueError(msg)
    return modules


def load_plugins_at(path: Path) -> list[object]:
    """The plugin modules of a project directory (its ``lorenz.tool_packs`` entry points, imported
    from source), of a ``.py`` file, or of an importable module name."""
    if path.is_dir():
        if not (path / "pyproject.toml").is_file():
            msg = f"{path} has no pyproject.toml"
            raise ValueError(msg)
        for candidate in (path / "src", path):
            if candidate.is_dir() and str(candidate) not in sys.path:
                sys.path.insert(0, str(candidate))
        return [importlib.import_module(module) for module in _project_modules(path)]
    if path.suffix == ".py" and path.is_file():
        module_name = f"lorenz_lint_{path.stem}"
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            msg = f"cannot import {path}"
            raise ValueError(msg)
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
        return [module]
    if not path.exists() and re.match(r"^[\w.]+$", str(path)):
        return [importlib.import_module(str(path))]
    msg = f"{path}: not a project directory, a .py file or a module name"
    raise ValueError(msg)


@contextlib.contextmanager
def _scratch_imports(root: Path) -> Iterator[None]:
    """Undo what importing a project from source did to ``sys.path`` and ``sys.modules`` (only
    modules loaded from under ``root``), so a later import of the same names (an installed copy,
    another project) is not shadowed."""
    path = list(sys.path)
    modules = set(sys.modules)
    base = root.resolve() if root.is_dir() else root.resolve().parent
    try:
        yield
    finally:
        sys.path[:] = path
        for name in set(sys.modules) - modules:
            origin = getattr(sys.modules[name], "__file__", None)
            if origin is not None and Path(origin).resolve().is_relative_to(base):
                del sys.modules[name]


def lint_path(path: str | Path) -> LintReport:
    """Lint the packs a project directory, file or module registers (without installing it)."""
    from ..plugins import discover

    with _scratch_imports(Path(path)):
        plugins = load_plugins_at(Path(path))
        discovery = discover(plugins=plugins, entry_points_enabled=False)
        return lint_discovery(discovery)
