"""What a sandboxed stdio server's runtime needs to start, chosen from its command: the named
presets ``node`` (``node``, ``npx``, ``npm``), ``uv`` (``uvx``, ``uv``) and ``python`` (an
interpreter, a venv's, or a program whose ``#!`` line names one). Each is a list of directories the
server may read (and execute from), none writable, and what to prepare in its temporary directory.

npm writes its cache even offline (an index entry, a lock beside the installed package), so npx
gets a private cache in the temporary directory over the user's read-only one: the index copied,
the content and installed packages linked. It runs offline: what it runs must be in the user's
cache already (one unsandboxed ``npx -y <pkg>`` puts it there); a server cannot poison the cache
unsandboxed runs trust.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence

from attrs import frozen

__all__ = ["Preset", "preset_for"]

_NODE = frozenset({"node", "nodejs", "npx", "npm"})
_UV = frozenset({"uv", "uvx"})


@frozen
class Preset:
    """A runtime's name, the directories it reads, and the user's npm cache to overlay (npx)."""

    name: str
    read: tuple[str, ...]
    npm_cache: str | None = None

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
    return Preset("node", tuple(dict.fromkeys((*read, cache))), npm_cache=cache)


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
