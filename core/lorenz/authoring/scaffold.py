"""``lorenz new-pack``: a complete, separately installable pack project from a template."""

from __future__ import annotations

import keyword
import re
from pathlib import Path
from string import Template

from attrs import frozen

from . import example_pack, templates

__all__ = ["PackNames", "check_pack_name", "new_pack"]

_NAME_RE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")


@frozen(kw_only=True)
class PackNames:
    """The names one pack name implies."""

    pack: str  # acme_crm: the pack, the tool prefix and the entry point name
    distribution: str  # lorenz-acme-crm
    module: str  # lorenz_acme_crm
    cls: str  # AcmeCrm
    tool: str  # acme_crm_reverse_text


def check_pack_name(name: str) -> PackNames:
    """The names for ``name``; raises ``ValueError`` unless it is a lowercase Python identifier."""
    if not _NAME_RE.match(name) or keyword.iskeyword(name) or len(name) > 40:
        msg = (
            f"invalid pack name {name!r}: use a lowercase Python identifier of at most 40 characters "
            "(letters, digits, single underscores), such as acme or acme_crm"
        )
        raise ValueError(msg)
    return PackNames(
        pack=name,
        distribution="lorenz-" + name.replace("_", "-"),
        module=f"lorenz_{name}",
        cls="".join(part.capitalize() for part in name.split("_")),
        tool=f"{name}_reverse_text",
    )


def _refuse_taken(pack: str, module: str, distribution: str) -> None:
    """A new pack must not shadow what is installed: a registered pack or tracker of that name, an
    importable module of that name, or an installed distribution of that name."""
    import importlib.metadata
    import importlib.util

    from lorenz.plugins.discovery import discover

    discovery = discover(unimported=True)  # names only: no third-party code runs here
    if discovery.tools.get(pack) is not None or discovery.trackers.get(pack) is not None:
        owner = next((p.distribution for p in discovery.plugins if pack in (*p.packs, *p.trackers)), None)
        msg = f'a pack named "{pack}" is already installed{f" (from {owner})" if owner else ""}: choose another name'
        raise ValueError(msg)
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = True
    if found:
        msg = f"a module named {module} is already importable here: choose another pack name"
        raise ValueError(msg)
    try:
        importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return
    msg = f"a distribution named {distribution} is already installed: choose another pack name"
    raise ValueError(msg)


def new_pack(name: str, directory: Path | None = None, *, tracker: bool = False) -> list[Path]:
    """Write the project for pack ``name`` into ``directory`` (default ``./lorenz-<name>``);
    returns the files written. Refuses a directory that exists and is not empty."""
    names = check_pack_name(name)
    _refuse_taken(names.pack, names.module, names.distribution)
    root = Path(directory) if directory is not None else Path.cwd() / names.distribution
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        msg = f"{root} already exists and is not empty"
        raise ValueError(msg)
    values = {
        "pack": names.pack,
        "distribution": names.distribution,
        "module": names.module,
        "cls": names.cls,
        "tool": names.tool,
        "upper": names.pack.upper().replace("_", ""),
        "tracker_kind": names.pack if tracker else "local",
        "mount_note": (
            f" (the `{names.pack}` tracker mounts it by default)"
            if tracker
            else " (any tracker; `local` needs lorenz-local)"
        ),
    }
    files: dict[str, str] = {
        "pyproject.toml": templates.PYPROJECT,
        "noxfile.py": templates.NOXFILE,
        "README.md": templates.README,
        ".gitignore": templates.GITIGNORE,
        f"{names.module}/__init__.py": templates.INIT,
        f"{names.module}/py.typed": "",
        f"{names.module}/plugin.py": templates.PLUGIN_TRACKER if tracker else templates.PLUGIN,
        f"{names.module}/tools.py": example_pack.TOOLS,
        f"tests/test_{names.pack}_pack.py": example_pack.TESTS + (example_pack.TESTS_TRACKER if tracker else ""),
    }
    if tracker:
        files[f"{names.module}/tracker.py"] = templates.TRACKER
    written = []
    for relative, template in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(Template(template).substitute(values), encoding="utf-8")
        written.append(path)
    return written
