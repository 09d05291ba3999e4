"""The distributions installed next to the core, read from their metadata (nothing imported): what
``install``, ``uninstall``, ``--version`` and ``-p`` consult, and pip run in the interpreter that runs
``lorenz``."""

from __future__ import annotations

import json
import os
import sys
from importlib.metadata import Distribution, distributions

from attrs import frozen

from lorenz.hookspecs import ENTRY_POINT_GROUP
from lorenz.plugins.checks import normalize_distribution
from lorenz.plugins.discovery import DISABLE_PLUGINS_ENV, LOAD_PLUGINS_ENV

from .output import progress

__all__ = ["Installed", "installed", "left_out", "plugin_owner", "run_pip"]


@frozen(kw_only=True)
class Installed:
    """One installed distribution; ``entry_points`` are its ``lorenz.tool_packs`` names (none: no plugin)."""

    name: str
    version: str
    entry_points: tuple[str, ...] = ()
    #: the modules those entry points name (``lorenz_acme.plugin``)
    modules: tuple[str, ...] = ()
    #: installed with ``pip install -e`` (its source tree is imported in place); read for plugins only
    editable: bool = False

    @property
    def label(self) -> str:
        return f"{self.name} {self.version}"


def installed() -> dict[str, Installed]:
    """Every distribution on ``sys.path`` by normalized name (the first of a name wins, as for imports)."""
    found: dict[str, Installed] = {}
    for dist in distributions():
        name = dist.metadata["Name"] or ""
        key = normalize_distribution(name)
        if not key or key in found:
            continue
        points = sorted((ep for ep in dist.entry_points if ep.group == ENTRY_POINT_GROUP), key=lambda ep: ep.name)
        found[key] = Installed(
            name=name,
            version=dist.version,
            entry_points=tuple(ep.name for ep in points),
            modules=tuple(ep.value for ep in points if ":" not in ep.value),
            editable=bool(points) and _editable(dist),
        )
    return found


def _editable(dist: Distribution) -> bool:
    """Whether pip recorded ``dist`` as editable (PEP 660's ``direct_url.json``)."""
    try:
        recorded = json.loads(dist.read_text("direct_url.json") or "{}")
    except ValueError:
        return False
    info = recorded.get("dir_info") if isinstance(recorded, dict) else None
    return isinstance(info, dict) and info.get("editable") is True


def plugin_owner(module: str) -> Installed | None:
    """The installed distribution whose entry point is the module ``module`` and that loads (neither
    ``LORENZ_LOAD_PLUGINS`` nor ``LORENZ_DISABLE_PLUGINS`` keeps it out): discovery registers that
    module already, so a ``-p`` naming it adds nothing."""
    for key, dist in installed().items():
        if module in (m.strip() for m in dist.modules) and left_out(key) is None:
            return dist
    return None


def left_out(key: str) -> str | None:
    """Why the environment keeps distribution ``key`` from loading, if it does."""
    denied = {normalize_distribution(name.strip()) for name in os.environ.get(DISABLE_PLUGINS_ENV, "").split(",")}
    if key in denied:
        return f"left out by {DISABLE_PLUGINS_ENV}"
    allowed = os.environ.get(LOAD_PLUGINS_ENV)
    if allowed is not None and key not in {normalize_distribution(name.strip()) for name in allowed.split(",")}:
        return f"not in {LOAD_PLUGINS_ENV}"
    return None


def run_pip(*args: str, verbose: bool = False) -> int:
    """``python -m pip ARGS`` in the interpreter that runs ``lorenz``; its exit status. Unless
    ``verbose``, pip's output is shown only when it fails (on stderr): the command prints its own
    summary, and meanwhile a terminal's progress line says what pip is doing (its latest line)."""
    import subprocess  # only install and uninstall run anything: the other commands never load it

    command = [sys.executable, "-m", "pip", *args]
    if verbose:
        return subprocess.call(command)
    output: list[str] = []
    with (
        progress(f"pip {args[0]}") as line,
        subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as pip,
    ):
        assert pip.stdout is not None
        for text in pip.stdout:
            output.append(text)
            if text.strip():
                line.say(text.strip())
        code = pip.wait()
    if code != 0:
        sys.stderr.write("".join(output))
    return code
