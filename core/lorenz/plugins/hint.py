"""Which packs a workflow isolates or sandboxes, read before discovery (and before anything heavy
is imported)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from attrs import frozen

from lorenz.plugins.model import Mounts
from lorenz.settings.parse import EMBEDDED_DEFAULT_CONFIG
from lorenz.settings.workflow import load_workflow

__all__ = [
    "LISTING",
    "SandboxHint",
    "in_doubt",
    "isolation_hint",
    "listing_hint",
    "mounts_hint",
    "sandbox_hint",
]

#: Why a command that reads no workflow imports a third-party plugin only confined.
LISTING = "lorenz runs third-party plugin code unconfined only where a workflow mounts it"


@frozen(kw_only=True)
class SandboxHint:
    """``server.sandboxed_packs`` as read before discovery: its surveys run confined."""

    packs: tuple[str, ...]
    #: ``server.sandbox_fallback``.
    fallback: str = "fail"
    #: The workflow's directory, never readable by a confined child.
    workflow_dir: str | None = None
    #: Why the children are confined, as their errors say it.
    reason: str = "server.sandboxed_packs"


def listing_hint() -> SandboxHint:
    """The strict policy of a command that imports plugins only to list, lint or mount them: no
    workflow loosens it."""
    return SandboxHint(packs=("*",), reason=LISTING)


def _config(path: Path | None) -> Mapping[str, Any] | None:
    """The workflow's front matter (``{}`` without a workflow); ``None`` when it does not load."""
    if path is None:
        return {}
    try:
        return load_workflow(path).config
    except Exception:
        return None


def _server(path: Path | None) -> Mapping[str, Any] | None:
    """The workflow's ``server`` map (``{}`` without one); ``None`` when the file does not load."""
    config = _config(path)
    if config is None:
        return None
    server = config.get("server")
    return server if isinstance(server, Mapping) else {}


def mounts_hint(path: Path | None) -> Mounts | None:
    """The packs and tracker the workflow at ``path`` names (``tools:`` keys and their
    ``provider``, ``tracker.kind``, which may name a pack too), the embedded default's without a
    workflow; ``None`` when it does not load."""
    if path is None:
        config: Mapping[str, Any] | None = EMBEDDED_DEFAULT_CONFIG
    else:
        config = _config(path)
    if config is None:
        return None
    tracker = config.get("tracker")
    kind = tracker.get("kind") if isinstance(tracker, Mapping) else None
    kind = kind.strip() if isinstance(kind, str) else None
    tools = config.get("tools")
    packs = {kind} if kind else set()
    for key, entry in tools.items() if isinstance(tools, Mapping) else ():
        packs.add(str(key).strip())
        provider = entry.get("provider") if isinstance(entry, Mapping) else None
        if isinstance(provider, str):
            packs.add(provider.strip())
    server = config.get("server")
    middleware = _names(server if isinstance(server, Mapping) else None, "middleware")
    return Mounts(packs=frozenset(packs), tracker=kind, middleware=frozenset(middleware))


def _names(server: Mapping[str, Any] | None, key: str) -> list[str]:
    value = (server or {}).get(key)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return list(value)
    return []


def in_doubt(path: Path | None) -> bool:
    """Whether the workflow at ``path`` cannot say which packs it runs unconfined (it does not load,
    or ``isolated_packs``/``sandboxed_packs`` is no list of names): its parse will fail, and until
    then discovery imports no third-party plugin (:func:`lorenz.plugins.discovery.discover`'s
    ``unimported``)."""
    server = _server(path)
    if server is None:
        return True
    return any(key in server and _names(server, key) != server[key] for key in ("isolated_packs", "sandboxed_packs"))


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
    if not packs or path is None or server is None:
        return None
    fallback = server.get("sandbox_fallback")
    return SandboxHint(
        packs=tuple(packs),
        fallback=fallback if fallback == "warn" else "fail",
        workflow_dir=str(Path(path).resolve().parent),
    )
