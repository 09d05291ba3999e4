"""Which packs a workflow isolates or sandboxes, read before discovery (and before anything heavy
is imported)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from attrs import frozen

__all__ = ["SandboxHint", "isolation_hint", "sandbox_hint"]


@frozen(kw_only=True)
class SandboxHint:
    """``server.sandboxed_packs`` as read before discovery: its surveys run confined."""

    packs: tuple[str, ...]
    #: ``server.sandbox_fallback``.
    fallback: str = "fail"
    #: The workflow's directory, never readable by a confined child.
    workflow_dir: str | None = None


def _server(path: Path | None) -> Mapping[str, Any]:
    if path is None:
        return {}
    from lorenz.settings.workflow import load_workflow

    try:
        config = load_workflow(path).config
    except Exception:
        return {}
    server = config.get("server")
    return server if isinstance(server, Mapping) else {}


def _names(server: Mapping[str, Any], key: str) -> list[str]:
    value = server.get(key)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return list(value)
    return []


def isolation_hint(path: Path | None) -> tuple[str, ...]:
    """``server.isolated_packs`` and ``server.sandboxed_packs`` as the workflow at ``path`` says,
    read before discovery (which must know it, to leave isolated plugins unimported) and leniently:
    a file that does not load, or a value that is not a list of strings, gives ``()`` and the full
    parse reports it."""
    server = _server(path)
    names: list[str] = []
    for key in ("isolated_packs", "sandboxed_packs"):  # a sandboxed pack is isolated too
        names += [item for item in _names(server, key) if item not in names]
    return tuple(names)


def sandbox_hint(path: Path | None) -> SandboxHint | None:
    """``server.sandboxed_packs`` and ``server.sandbox_fallback`` as the workflow at ``path`` says
    (read as leniently as :func:`isolation_hint`); ``None`` when it sandboxes nothing."""
    server = _server(path)
    packs = _names(server, "sandboxed_packs")
    if not packs or path is None:
        return None
    fallback = server.get("sandbox_fallback")
    return SandboxHint(
        packs=tuple(packs),
        fallback=fallback if fallback == "warn" else "fail",
        workflow_dir=str(Path(path).resolve().parent),
    )
