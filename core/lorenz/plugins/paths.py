"""Plugin modules named on the command line (``-p NAME``, ``-p path/to/plugin.py``, ``--plugins-dir DIR``),
and where an installed plugin's own package lives (:func:`plugin_files`, for a confined process).

A file inside a package is imported under its dotted name with the package's root on ``sys.path``, so
the relative imports a scaffolded pack uses (``from .tools import PACK``) work; a lone file is imported
under its own name, as datasette's ``--plugins-dir`` does.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

from lorenz.hookspecs import ENTRY_POINT_GROUP

from .checks import normalize_distribution
from .containment import describe_exception

__all__ = [
    "PluginImportError",
    "import_path",
    "import_plugin",
    "import_plugins_dir",
    "package_root",
    "plugin_files",
]


def plugin_files(entry_point: str | None, distribution: str | None) -> tuple[str, ...]:
    """Where the top-level package (or module) of an installed plugin's entry point lives, found
    without running any of its code: a confined process importing it must read it even where the
    import-path entry holding it is not readable (an editable project in the workflow's or the
    current directory)."""
    from importlib.metadata import entry_points

    wanted = normalize_distribution(distribution or "")
    for ep in entry_points(group=ENTRY_POINT_GROUP, name=entry_point or ""):
        dist = getattr(ep, "dist", None)
        if dist is None or normalize_distribution(dist.metadata["Name"] or "") != wanted:
            continue
        try:
            spec = importlib.util.find_spec(ep.module.partition(".")[0])
        except (ImportError, ValueError):
            return ()
        if spec is None:
            return ()
        if spec.submodule_search_locations:
            return tuple(os.path.realpath(path) for path in spec.submodule_search_locations)
        return (os.path.realpath(spec.origin),) if spec.origin and os.path.isabs(spec.origin) else ()
    return ()


def package_root(path: Path) -> tuple[Path, list[str]]:
    """``(the directory to put on sys.path, the dotted name's parts)`` of a ``.py`` file or a package
    directory: the parts walk up through every directory holding an ``__init__.py``."""
    path = path.resolve()
    parts = [] if path.is_dir() or path.stem == "__init__" else [path.stem]
    folder = path if path.is_dir() else path.parent
    while (folder / "__init__.py").is_file():
        parts.insert(0, folder.name)
        folder = folder.parent
    return folder, parts


def import_path(path: Path) -> ModuleType:
    """Import the module at ``path``: a ``.py`` file or a package directory. Raises ``ValueError`` when
    it is neither, or when a different module of that name is already imported."""
    if not (path.is_file() and path.suffix == ".py") and not (path / "__init__.py").is_file():
        msg = f"{path}: not a .py file or a package directory"
        raise ValueError(msg)
    root, parts = package_root(path)
    name = ".".join(parts)
    target = path.resolve() / "__init__.py" if path.is_dir() else path.resolve()
    loaded = sys.modules.get(name)
    if loaded is None and len(parts) == 1 and target.name != "__init__.py":
        spec = importlib.util.spec_from_file_location(name, target)
        if spec is None or spec.loader is None:
            msg = f"{path}: cannot be imported"
            raise ValueError(msg)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # attrs and cattrs resolve a class's annotations through sys.modules
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
        return module
    if loaded is None:
        if str(root) not in sys.path:
            sys.path.insert(0, str(root))
        loaded = importlib.import_module(name)
    origin = getattr(loaded, "__file__", None)
    if origin is None or Path(origin).resolve() != target:
        msg = f"{path}: a module named {name!r} is already imported from {origin or 'elsewhere'}"
        raise ValueError(msg)
    return loaded


def import_plugins_dir(folder: Path) -> list[ModuleType]:
    """Every ``.py`` file of ``folder`` (not its subfolders), by name; ``ValueError`` if it is no folder."""
    if not folder.is_dir():
        msg = f"{folder}: not a directory"
        raise ValueError(msg)
    return [import_path(file) for file in sorted(folder.glob("*.py")) if file.name != "__init__.py"]


class PluginImportError(Exception):
    """An in-process plugin module (``-p NAME``, ``$LORENZ_PLUGIN_MODULES``) that does not import."""


def import_plugin(name: str) -> ModuleType:
    """``-p NAME``: a module name, or the path of a ``.py`` file or package directory."""
    try:
        if name.endswith(".py") or "/" in name or os.sep in name:
            return import_path(Path(name))
        return importlib.import_module(name)
    except Exception as exc:
        msg = f"cannot import plugin module {name!r}: {describe_exception(exc)}"
        raise PluginImportError(msg) from exc
