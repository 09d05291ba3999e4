"""``lorenz new-pack``: a complete, separately installable pack project from a template.

The template is a real project in ``project/``, the one ``new_pack("template_pack")`` writes: ruff
and mypy check its code as code, and a generated project passes its own ``nox -s devcheck``
(tests/test_authoring_scaffold.py). A new pack's names replace the template's spellings of
``template_pack`` (``template_pack``, ``template-pack``, ``TemplatePack``, ``TEMPLATEPACK``);
``README.md`` is also a :class:`string.Template` for what ``--tracker`` changes; in the test module
what follows the ``# Written with --tracker only.`` line is written with ``--tracker`` only, and
``plugin_with_tracker.py`` is the ``plugin.py`` then written.
"""

from __future__ import annotations

import keyword
import re
from importlib.resources import files
from pathlib import Path
from string import Template

from attrs import frozen

from lorenz.plugins.discovery import discover

__all__ = ["PackNames", "check_pack_name", "new_pack"]

_NAME_RE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")
_PROJECT = files(__name__) / "project"
_TEMPLATE_NAMES = re.compile(r"template_pack|template-pack|TemplatePack|TEMPLATEPACK")
_TRACKER_ONLY = "\n\n# Written with --tracker only.\n"


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
    spellings = {
        "template_pack": names.pack,
        "template-pack": names.distribution.removeprefix("lorenz-"),
        "TemplatePack": names.cls,
        "TEMPLATEPACK": names.pack.upper().replace("_", ""),
    }
    test_module = f"tests/test_{names.pack}_pack.py"
    sources = {  # what to write: from which template file
        "pyproject.toml": "pyproject.toml",
        "noxfile.py": "noxfile.py",
        "README.md": "README.md",
        ".gitignore": "gitignore",
        f"{names.module}/__init__.py": "lorenz_template_pack/__init__.py",
        f"{names.module}/py.typed": "lorenz_template_pack/py.typed",
        f"{names.module}/plugin.py": f"lorenz_template_pack/{'plugin_with_tracker' if tracker else 'plugin'}.py",
        f"{names.module}/tools.py": "lorenz_template_pack/tools.py",
        test_module: "tests/test_template_pack_pack.py",
    }
    if tracker:
        sources[f"{names.module}/tracker.py"] = "lorenz_template_pack/tracker.py"
    written = []
    for relative, source in sources.items():
        text = _TEMPLATE_NAMES.sub(lambda m: spellings[m.group()], _PROJECT.joinpath(source).read_text("utf-8"))
        if relative == "README.md":
            text = Template(text).substitute(
                tracker_kind=names.pack if tracker else "local",
                mount_note=(
                    f" (the `{names.pack}` tracker mounts it by default)"
                    if tracker
                    else " (any tracker; `local` needs lorenz-local)"
                ),
            )
        elif relative == test_module:
            common, _, tracker_tests = text.partition(_TRACKER_ONLY)
            text = common + "\n\n" + tracker_tests if tracker else common
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
