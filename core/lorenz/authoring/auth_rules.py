"""The lint rule of a tool's own OAuth scopes (``ToolSpec.auth``): each must be one RFC 6749 scope
token, or the host can never name it in a challenge or its metadata and no client can ask for it.
:func:`~lorenz.authoring.tool` refuses such a scope when it is made; a plain ``ToolSpec`` does not."""

from __future__ import annotations

from collections.abc import Iterator

from lorenz.contracts import ToolSpec

from .diagnostics import Diagnostic
from .tool import SCOPE_RE

__all__ = ["auth_rules"]


def auth_rules(pack: str, spec: ToolSpec) -> Iterator[Diagnostic]:
    """A warning for each scope of ``spec.auth`` that is no scope token (empty, a space, a quote)."""
    for scope in spec.auth:
        if not isinstance(scope, str) or not SCOPE_RE.match(scope):
            yield Diagnostic(
                rule="auth-scope",
                severity="warning",
                pack=pack,
                tool=spec.name,
                message=f"auth scope {scope!r} is no OAuth scope token (no spaces, quotes or backslashes); "
                "a client can never ask for it, so no OAuth caller can reach the tool",
            )
