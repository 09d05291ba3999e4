"""Where a pack's skill directories may be: inside the pack's own distribution, that is the folder of
the top-level package its plugin module belongs to (for a lone-module plugin, that module's folder).

A ``skills`` entry that is not absolute, has a ``..`` component or resolves (symlinks followed)
outside that folder is refused: the host serves and exports those files, so a pack must not name
``/etc`` or its neighbours' files.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
import weakref
from pathlib import Path
from typing import Any

from lorenz.hookspecs import ENTRY_POINT_GROUP

from .checks import normalize_distribution
from .entry_index import plugin_entry_points

__all__ = ["confine_skill_entries", "note_plugin", "pack_roots"]

#: The plugin module that registered each pack (packs built by a library class, such as
#: ``lorenz.authoring.Pack``, belong to their plugin's distribution, not the library's).
_PLUGIN_OF: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()


def note_plugin(pack: object, plugin: object) -> None:
    """Remember that ``plugin`` (a module, or an object defined in one) registered ``pack``."""
    name = plugin.__name__ if isinstance(plugin, type(sys)) else getattr(plugin, "__module__", None)
    if not isinstance(name, str):
        return
    with contextlib.suppress(TypeError):  # not weak-referenceable: its class's module decides
        _PLUGIN_OF[pack] = name


def module_root(module: str) -> list[Path]:
    """The folders of ``module``'s top-level package (several for a namespace package), real paths."""
    top = module.partition(".")[0]
    try:
        spec = importlib.util.find_spec(top)  # a top-level name: found, not imported
    except (ImportError, ValueError):
        return []
    if spec is None:
        return []
    if spec.submodule_search_locations:
        return [Path(os.path.realpath(folder)) for folder in spec.submodule_search_locations]
    if spec.has_location and spec.origin:
        return [Path(os.path.realpath(spec.origin)).parent]
    return []


def _entry_point_module(distribution: str | None, name: str) -> str | None:
    wanted = normalize_distribution(distribution or "")
    for ep in plugin_entry_points(ENTRY_POINT_GROUP):
        if ep.name == name and normalize_distribution(ep.distribution or "") == wanted:
            return ep.module
    return None


def pack_roots(pack: object) -> list[Path]:
    """The folders ``pack``'s skill directories must lie in (empty: none is accepted); an instance
    (``lorenz.mounting.instances.InstancePack``) answers for the pack it wraps."""
    inner = getattr(pack, "inner", None)
    if inner is not None and getattr(pack, "provider", None) is not None:
        pack = inner
    proxy = sys.modules.get("lorenz.isolation.proxy")  # no isolated pack exists before it is imported
    if proxy is not None and isinstance(pack, proxy.IsolatedPack):
        # The child names the directories; the host decides where they may be, from the source.
        source = pack.supervisor.plan.source
        module = source.module
        if source.entry_point is not None:
            module = _entry_point_module(source.distribution, source.entry_point)
        return module_root(module) if module else []
    return module_root(_PLUGIN_OF.get(pack) or type(pack).__module__)


def confine_skill_entries(pack_name: str, roots: list[Path], entries: list[str]) -> tuple[list[Path], list[str]]:
    """``(the accepted entries as real paths, a message for each refused one)``."""
    accepted: list[Path] = []
    refused: list[str] = []
    where = ", ".join(str(root) for root in roots) or "none found"
    for entry in entries:
        path = Path(entry)
        real = Path(os.path.realpath(entry))
        if not path.is_absolute() or ".." in path.parts:
            reason = "it must be an absolute path without '..'"
        elif not any(real == root or real.is_relative_to(root) for root in roots):
            reason = f"it resolves outside the pack's distribution ({where})"
        else:
            accepted.append(real)
            continue
        refused.append(f"pack {pack_name}: skills entry {entry!r} is refused: {reason}")
    return accepted, refused
