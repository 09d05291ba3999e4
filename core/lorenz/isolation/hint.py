"""Which packs a workflow isolates, read before discovery (and before anything heavy is imported)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

__all__ = ["isolation_hint"]


def isolation_hint(path: Path | None) -> tuple[str, ...]:
    """``server.isolated_packs`` and ``server.sandboxed_packs`` as the workflow at ``path`` says,
    read before discovery (which must know it, to leave isolated plugins unimported) and leniently:
    a file that does not load, or a value that is not a list of strings, gives ``()`` and the full
    parse reports it."""
    if path is None:
        return ()
    from lorenz.settings.workflow import load_workflow

    try:
        config = load_workflow(path).config
    except Exception:
        return ()
    server = config.get("server")
    if not isinstance(server, Mapping):
        return ()
    names: list[str] = []
    for key in ("isolated_packs", "sandboxed_packs"):  # a sandboxed pack is isolated too
        value = server.get(key)
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            names += [item for item in value if item not in names]
    return tuple(names)
