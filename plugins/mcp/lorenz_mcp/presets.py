"""What a sandboxed stdio server's runtime needs to start, chosen from its command: the named
presets ``node`` (``node``, ``npx``, ``npm``), ``uv`` (``uvx``, ``uv``) and ``python`` (an
interpreter, a venv's, or a program whose ``#!`` line names one). Each is a list of directories the
server may read (and execute from), none writable, and what to prepare in its temporary directory.

``npx -y <pkg>`` of a package an unsandboxed ``npx`` installed already runs that package's program
with ``node``, as npx itself would, without npm: npm re-installs a tree it sees through links, and
offline it cannot. Any other npm or npx command gets a private cache in the temporary directory
over the user's read-only one (the index copied, the content and installed packages linked) and
runs offline; a server cannot poison the cache unsandboxed runs trust.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping, Sequence

from attrs import frozen

__all__ = ["Preset", "preset_for"]

_NODE = frozenset({"node", "nodejs", "npx", "npm"})
_UV = frozenset({"uv", "uvx"})


@frozen
class Preset:
    """A runtime's name, the directories it reads, the user's npm cache to overlay (npm, npx), and
    the command to run in place of the one configured (an installed npx package's program)."""

    name: str
    read: tuple[str, ...]
    npm_cache: str | None = None
    command: tuple[str, ...] | None = None

    def prepare(self, temp_dir: str) -> dict[str, str]:
        """Make what the runtime needs in ``temp_dir``; the environment variables pointing at it."""
        if self.npm_cache is None:
            return {}
        private = os.path.join(temp_dir, "npm")
        _overlay_npm_cache(self.npm_cache, private)
        return {
            "npm_config_cache": private,
            "npm_config_offline": "true",
            "npm_config_logs_dir": os.path.join(private, "_logs"),
            "npm_config_update_notifier": "false",
        }


def _overlay_npm_cache(cache: str, private: str) -> None:
    """A writable cache over the read-only ``cache``: its index copied (npm rewrites entries it
    reads), its content linked, each installed npx package a directory of links (npx locks in it)."""
    os.makedirs(os.path.join(private, "_cacache", "tmp"))
    index = os.path.join(cache, "_cacache", "index-v5")
    if os.path.isdir(index):
        shutil.copytree(index, os.path.join(private, "_cacache", "index-v5"), symlinks=True)
    content = os.path.join(cache, "_cacache", "content-v2")
    if os.path.isdir(content):
        os.symlink(content, os.path.join(private, "_cacache", "content-v2"))
    installed = os.path.join(cache, "_npx")
    for tree in os.listdir(installed) if os.path.isdir(installed) else ():
        mine = os.path.join(private, "_npx", tree)
        os.makedirs(mine)
        for entry in os.listdir(os.path.join(installed, tree)):
            os.symlink(os.path.join(installed, tree, entry), os.path.join(mine, entry))


def preset_for(command: Sequence[str], environ: Mapping[str, str]) -> Preset | None:
    """The preset ``command`` needs (``None``: a program of no runtime this knows)."""
    program = shutil.which(command[0], path=environ.get("PATH")) or command[0]
    base = os.path.basename(command[0])
    home = environ.get("HOME", os.path.expanduser("~"))
    if base in _NODE:
        return _node(program, command, home, environ)
    if base in _UV:
        return _uv(program, home, environ)
    interpreter = program if base.startswith("python") else _shebang(program)
    if interpreter is None or not os.path.basename(interpreter).startswith("python"):
        return None
    return Preset("python", tuple(dict.fromkeys(_python(interpreter) + _venv(program) + _scripts(command))))


def _node(program: str, command: Sequence[str], home: str, environ: Mapping[str, str]) -> Preset:
    node = shutil.which("node", path=environ.get("PATH")) or program
    read = [_prefix(node), _prefix(program), *_scripts(command)]
    if os.path.basename(command[0]) not in ("npx", "npm"):
        return Preset("node", tuple(dict.fromkeys(read)))
    cache = environ.get("npm_config_cache") or os.path.join(home, ".npm")
    granted = tuple(dict.fromkeys((*read, cache)))
    installed = _installed_npx(node, command, cache) if os.path.basename(command[0]) == "npx" else None
    if installed is not None:
        return Preset("node", granted, command=installed)
    return Preset("node", granted, npm_cache=cache)


def _installed_npx(node: str, command: Sequence[str], cache: str) -> tuple[str, ...] | None:
    """``node <program> <args>`` for ``npx [-y|--yes] [--] <pkg> <args>`` when an earlier npx
    installed ``<pkg>`` (a bare name, as written) in ``cache``; else ``None``."""
    words = list(command[1:])
    while words and words[0] in ("-y", "--yes", "--"):
        words.pop(0)
    if not words or words[0].startswith("-") or "@" in words[0][1:]:
        return None  # another option, or a version npx would check against the registry
    spec, args = words[0], words[1:]
    trees = os.path.join(cache, "_npx")
    for tree in sorted(os.listdir(trees)) if os.path.isdir(trees) else ():
        root = os.path.join(trees, tree)
        manifest = _json(os.path.join(root, "package.json")) or {}
        npx = manifest.get("_npx")
        if not isinstance(npx, dict) or npx.get("packages") != [spec]:
            continue
        package = os.path.join(root, "node_modules", *spec.split("/"))
        program = _program(_json(os.path.join(package, "package.json")), spec)
        if program is not None and os.path.isfile(os.path.join(package, program)):
            return (node, os.path.realpath(os.path.join(package, program)), *args)
    return None


def _program(manifest: dict[str, object] | None, spec: str) -> str | None:
    """The script a package's ``bin`` names: its only one, or the one named as the package is."""
    bins = manifest.get("bin") if manifest is not None else None
    if isinstance(bins, str):
        return bins
    if not isinstance(bins, dict):
        return None
    chosen = next(iter(bins.values())) if len(bins) == 1 else bins.get(spec.rpartition("/")[2])
    return chosen if isinstance(chosen, str) else None


def _json(path: str) -> dict[str, object] | None:
    try:
        with open(path, encoding="utf-8") as file:
            loaded = json.load(file)
    except (OSError, ValueError):
        return None
    return loaded if isinstance(loaded, dict) else None


def _uv(program: str, home: str, environ: Mapping[str, str]) -> Preset:
    cache = environ.get("UV_CACHE_DIR") or os.path.join(environ.get("XDG_CACHE_HOME", f"{home}/.cache"), "uv")
    data = os.path.join(environ.get("XDG_DATA_HOME", f"{home}/.local/share"), "uv")
    return Preset("uv", (_prefix(program), data, cache))


def _python(interpreter: str) -> tuple[str, ...]:
    real = os.path.realpath(interpreter)
    return tuple(dict.fromkeys((_prefix(real), *_venv(interpreter))))


def _venv(program: str) -> tuple[str, ...]:
    """The venv ``program`` lives in (``bin/`` beside ``pyvenv.cfg``), and the base interpreter's prefix."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(program)))
    config = os.path.join(root, "pyvenv.cfg")
    if not os.path.isfile(config):
        return ()
    out = [root]
    with open(config, encoding="utf-8") as lines:
        for line in lines:
            key, _, value = line.partition("=")
            if key.strip() == "home" and value.strip():
                out.append(os.path.dirname(os.path.realpath(value.strip())))
    return tuple(out)


def _shebang(program: str) -> str | None:
    try:
        with open(program, "rb") as file:
            first = file.readline(256)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode("utf-8", "replace").split()
    if words and os.path.basename(words[0]) == "env" and len(words) > 1:
        return shutil.which(words[1])
    return words[0] if words else None


def _scripts(command: Sequence[str]) -> tuple[str, ...]:
    """Where the scripts ``command`` names by absolute path are (``node /srv/x/dist/index.js``,
    ``python /srv/server.py``): a ``node_modules`` tree, else the script's directory."""
    return tuple(_package_root(arg) for arg in command[1:] if os.path.isabs(arg) and os.path.isfile(arg))


def _prefix(program: str) -> str:
    """``/usr`` for ``/usr/bin/node``: the installation a program's ``bin`` directory belongs to."""
    return os.path.dirname(os.path.dirname(os.path.realpath(program)))


def _package_root(script: str) -> str:
    """The ``node_modules`` directory a script is in (its dependencies beside it), else its directory."""
    path = os.path.realpath(script)
    parts = path.split(os.sep)
    if "node_modules" in parts:
        return os.sep.join(parts[: len(parts) - parts[::-1].index("node_modules")])
    return os.path.dirname(path)
