"""Which packs a workflow isolates, read before discovery (and before anything heavy is imported)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

__all__ = ["isolation_hint"]


def isolation_hint(path: Path | None) -> tuple[str, ...]:
    """``server.isolated_packs`` as the workflow at ``path`` says, read before discovery (which
    must know it, to leave isolated plugins unimported) and leniently: a file that does not load,
    or a value that is not a list of strings, gives ``()`` and the full parse reports it."""
    if path is None:
        return ()
    from lorenz.settings.workflow import load_workflow

    try:
        config = load_workflow(path).config
    except Exception:
        return ()
    server = config.get("server")
    value = server.get("isolated_packs") if isinstance(server, Mapping) else None
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        return ()
    return tuple(value)
