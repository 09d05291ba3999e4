"""What the lint reports: :class:`Diagnostic` findings with stable rule ids, and a :class:`LintReport`."""

from __future__ import annotations

from typing import Any, Literal

from attrs import frozen

__all__ = ["Diagnostic", "LintReport", "Severity"]

Severity = Literal["error", "warning"]


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
