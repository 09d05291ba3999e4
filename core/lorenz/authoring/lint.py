"""``lorenz lint``: checks a tool pack against the contract every pack must keep, plus the extra
rules a typed pack (:class:`~lorenz.authoring.Pack`) makes checkable.

Every diagnostic has a stable rule id; errors make ``lorenz lint`` exit non-zero, warnings do not.
The contract calls (an unknown tool, a bad argument) run against a scratch directory with an HTTP
client that refuses every request, so linting never touches the network or a real board.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from lorenz.contracts import ToolProvider
from lorenz.isolation.survey import lint_report
from lorenz.plugins.discovery import discover
from lorenz.results import error_message
from lorenz.settings.model import Settings

from .contract import check_contract, run_sync
from .diagnostics import Diagnostic, LintReport
from .pack import DisabledTool, Pack
from .project import load_plugins_at, load_wheel_plugins, scratch_imports
from .provider_rules import auth_rules, offer_rules, spec_rules
from .typed_rules import contract_rules, reference_rules

__all__ = [
    "Diagnostic",
    "LintReport",
    "check_contract",
    "lint_discovery",
    "lint_pack",
    "lint_path",
    "run_sync",
]


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
        out.extend(spec_rules(name, spec, seen))
        out.extend(auth_rules(name, spec))
    typed = _typed(pack)
    if typed is not None:
        for entry in typed.tools:
            tool = entry.tool if isinstance(entry, DisabledTool) else entry
            if isinstance(entry, DisabledTool):
                out.extend(spec_rules(name, tool.spec(), set()))  # checked as if enabled
            out.extend(contract_rules(name, tool))
        out.extend(reference_rules(typed, probe))
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
    """Lint the packs a project directory, file, module or built wheel registers (without
    installing it)."""
    if str(path).endswith(".whl"):
        with tempfile.TemporaryDirectory(prefix="lorenz-lint-") as unpacked, scratch_imports(Path(unpacked)):
            plugins = load_wheel_plugins(Path(path), Path(unpacked))
            return lint_discovery(discover(plugins=plugins, entry_points_enabled=False))
    with scratch_imports(Path(path)):
        plugins = load_plugins_at(Path(path))
        discovery = discover(plugins=plugins, entry_points_enabled=False)
        return lint_discovery(discovery)
