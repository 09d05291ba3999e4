"""A pack project on disk, imported from source for ``lorenz lint``: its ``lorenz.tool_packs``
entry points, a package, a file or a built wheel, and the imports undone afterwards."""

from __future__ import annotations

import contextlib
import importlib
import importlib.metadata
import re
import sys
import tomllib
import zipfile
from collections.abc import Iterator
from pathlib import Path

from lorenz.plugins.paths import import_path, package_root

__all__ = ["load_plugins_at", "load_wheel_plugins", "scratch_imports"]


def _project_modules(root: Path) -> list[str]:
    data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    group = data.get("project", {}).get("entry-points", {}).get("lorenz.tool_packs", {})
    modules = [str(target).split(":")[0] for target in group.values()]
    if not modules:
        msg = f'{root / "pyproject.toml"} declares no [project.entry-points."lorenz.tool_packs"]'
        raise ValueError(msg)
    return modules


def load_plugins_at(path: Path) -> list[object]:
    """The plugin modules of a project directory (its ``lorenz.tool_packs`` entry points, imported
    from source), of a package directory inside one (or on its own), of a ``.py`` file (its package's
    relative imports work), or of an importable module name."""
    if path.is_dir() and not (path / "pyproject.toml").is_file():
        if not (path / "__init__.py").is_file():
            msg = f"{path} has no pyproject.toml"
            raise ValueError(msg)
        root, _ = package_root(path)
        if not (root / "pyproject.toml").is_file():
            return [import_path(path)]
        path = root  # the package of a project: lint the project, whose entry points name the hook modules
    if path.is_dir():
        for candidate in (path / "src", path):
            if candidate.is_dir() and str(candidate) not in sys.path:
                sys.path.insert(0, str(candidate))
        return [importlib.import_module(module) for module in _project_modules(path)]
    if path.suffix == ".py" and path.is_file():
        return [import_path(path)]
    if not path.exists() and re.match(r"^[\w.]+$", str(path)):
        return [importlib.import_module(str(path))]
    msg = f"{path}: not a project directory, a .py file or a module name"
    raise ValueError(msg)


@contextlib.contextmanager
def scratch_imports(root: Path) -> Iterator[None]:
    """Undo what importing a project from source did to ``sys.path`` and ``sys.modules`` (only
    modules loaded from under ``root``), so a later import of the same names (an installed copy,
    another project) is not shadowed."""
    path = list(sys.path)
    modules = set(sys.modules)
    base = root.resolve() if root.is_dir() else root.resolve().parent
    try:
        yield
    finally:
        sys.path[:] = path
        for name in set(sys.modules) - modules:
            origin = getattr(sys.modules[name], "__file__", None)
            if origin is not None and Path(origin).resolve().is_relative_to(base):
                del sys.modules[name]


def load_wheel_plugins(wheel: Path, into: Path) -> list[object]:
    """The plugin modules a built wheel's ``lorenz.tool_packs`` entry points name, unpacked into
    ``into`` (an empty directory) and imported from there, as an install would import them."""
    try:
        with zipfile.ZipFile(wheel) as archive:
            for name in archive.namelist():
                target = (into / name).resolve()
                if not target.is_relative_to(into.resolve()):
                    msg = f"{wheel.name}: member {name!r} would unpack outside the wheel's folder"
                    raise ValueError(msg)
            archive.extractall(into)
    except zipfile.BadZipFile as exc:
        msg = f"{wheel}: not a wheel ({exc})"
        raise ValueError(msg) from None
    infos = sorted(into.glob("*.dist-info"))
    if len(infos) != 1:
        msg = f"{wheel.name}: {len(infos)} .dist-info folders, where a wheel has one"
        raise ValueError(msg)
    points = importlib.metadata.PathDistribution(infos[0]).entry_points.select(group="lorenz.tool_packs")
    if not points:
        msg = f'{wheel.name} declares no "lorenz.tool_packs" entry point'
        raise ValueError(msg)
    sys.path.insert(0, str(into))
    return [importlib.import_module(point.module) for point in points]
