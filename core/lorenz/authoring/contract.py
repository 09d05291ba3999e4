"""The runtime contract every pack keeps: an unknown tool name, and arguments its schema refuses,
come back as failure :class:`~lorenz.results.ToolResult` values, never as exceptions.

The calls run against a scratch directory with an HTTP client that refuses every request, so a
check never touches the network or a real board.
"""

from __future__ import annotations

import json
import tempfile
import threading
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from lorenz.contracts import ToolContext, ToolProvider
from lorenz.results import ToolResult, error_message
from lorenz.settings.model import Settings

from .diagnostics import Diagnostic

__all__ = ["check_contract", "run_sync"]

T = TypeVar("T")


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


def _refuse(request: Any) -> Any:
    import httpx

    msg = f"lorenz lint: no network ({request.method} {request.url})"
    raise httpx.ConnectError(msg, request=request)


def _bad_arguments(schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """Arguments that do not satisfy ``schema``, or ``None`` when it accepts anything."""
    from jsonschema.validators import Draft202012Validator, validator_for
    from referencing import Registry

    try:  # an explicit registry: a remote $ref is never fetched
        validator = validator_for(schema, default=Draft202012Validator)(schema, registry=Registry())
    except Exception:
        return None
    candidates: list[dict[str, Any]] = []
    if schema.get("required"):
        candidates.append({})
    wrong_values: list[Any] = [731001, "lorenz-lint", True, [], {"lorenz": "lint"}, None]
    for name, prop in (schema.get("properties") or {}).items():
        for value in wrong_values:
            try:
                check = validator_for(prop or {}, default=Draft202012Validator)(prop or {}, registry=Registry())
                prop_ok = check.is_valid(value)
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
