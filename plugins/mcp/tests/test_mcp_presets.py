"""The runtime presets a sandboxed stdio server gets, chosen from its command."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

from lorenz_mcp.presets import preset_for


def test_a_venv_program_gets_the_python_preset(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    base = os.path.realpath(sys.base_prefix)
    (venv / "pyvenv.cfg").write_text(f"home = {base}/bin\n", encoding="utf-8")
    program = venv / "bin" / "mcp-server-time"
    program.write_text(f"#!{sys.executable}\nimport mcp_server_time\n", encoding="utf-8")
    preset = preset_for([str(program)], {"PATH": os.environ["PATH"]})
    assert preset is not None and preset.name == "python"
    assert str(venv) in preset.read and base in preset.read
    assert preset.prepare(str(tmp_path)) == {}


def test_npx_gets_a_private_cache_over_the_users(tmp_path: Path) -> None:
    cache = tmp_path / "npm"
    (cache / "_cacache" / "index-v5" / "ab").mkdir(parents=True)
    (cache / "_cacache" / "index-v5" / "ab" / "entry").write_text("index line", encoding="utf-8")
    (cache / "_cacache" / "content-v2").mkdir()
    (cache / "_npx" / "5b2d" / "node_modules").mkdir(parents=True)
    environ = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "npm_config_cache": str(cache)}
    preset = preset_for(["npx", "-y", "@modelcontextprotocol/server-everything"], environ)
    assert preset is not None and preset.name == "node" and str(cache) in preset.read
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = preset.prepare(str(scratch))
    private = scratch / "npm"
    assert env["npm_config_cache"] == str(private) and env["npm_config_offline"] == "true"
    assert (private / "_cacache" / "index-v5" / "ab" / "entry").read_text(encoding="utf-8") == "index line"
    assert not (private / "_cacache" / "index-v5").is_symlink()  # npm rewrites it: a copy
    assert os.readlink(private / "_cacache" / "content-v2") == str(cache / "_cacache" / "content-v2")
    assert not (private / "_npx" / "5b2d").is_symlink()  # npx locks in it: a directory of links
    assert os.readlink(private / "_npx" / "5b2d" / "node_modules") == str(cache / "_npx" / "5b2d" / "node_modules")


def test_an_installed_npx_package_runs_its_program_with_node(tmp_path: Path) -> None:
    """npm re-installs a tree it sees through links (and offline it cannot), so a package an
    unsandboxed npx installed runs as npx would run it, without npm; a pinned version does not."""
    cache = tmp_path / "npm"
    tree = cache / "_npx" / "5b2d"
    package = tree / "node_modules" / "@acme" / "server"
    (package / "dist").mkdir(parents=True)
    (package / "dist" / "index.js").write_text("// the server\n", encoding="utf-8")
    (package / "package.json").write_text(json.dumps({"bin": {"acme-server": "dist/index.js"}}), encoding="utf-8")
    (tree / "package.json").write_text(json.dumps({"_npx": {"packages": ["@acme/server"]}}), encoding="utf-8")
    environ = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "npm_config_cache": str(cache)}
    node = shutil.which("node", path=environ["PATH"]) or "npx"
    preset = preset_for(["npx", "-y", "--", "@acme/server", "stdio", "--port", "1"], environ)
    assert preset is not None and preset.npm_cache is None and str(cache) in preset.read
    assert preset.command == (node, str(package / "dist" / "index.js"), "stdio", "--port", "1")
    for other in (["npx", "-y", "@acme/server@2.0.0"], ["npx", "-y", "@acme/other"], ["npm", "exec", "@acme/server"]):
        unknown = preset_for(other, environ)
        assert unknown is not None and unknown.command is None and unknown.npm_cache == str(cache), other


def test_an_unknown_program_gets_no_preset(tmp_path: Path) -> None:
    program = tmp_path / "server"
    program.write_text("#!/bin/sh\n", encoding="utf-8")
    assert preset_for([str(program)], {"PATH": os.environ["PATH"]}) is None


def test_uvx_gets_the_uv_preset_its_cache_and_pythons(tmp_path: Path) -> None:
    """The preset's choice only: ``uv`` is not installed on the project's machines (and uvx, given
    its cache read-only, refuses to run: see docs/mcp-servers.md)."""
    bin_dir = tmp_path / "uv-install" / "bin"
    bin_dir.mkdir(parents=True)
    uvx = bin_dir / "uvx"
    uvx.write_text("#!/bin/sh\n", encoding="utf-8")
    uvx.chmod(0o755)
    environ = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "HOME": str(tmp_path), "UV_CACHE_DIR": str(tmp_path / "c")}
    preset = preset_for(["uvx", "mcp-server-time"], environ)
    assert preset is not None and preset.name == "uv"
    assert preset.read == (str(tmp_path / "uv-install"), str(tmp_path / ".local/share/uv"), str(tmp_path / "c"))
    assert preset.prepare(str(tmp_path)) == {}
    default = preset_for(["uv", "tool", "run", "mcp-server-time"], {**environ, "UV_CACHE_DIR": ""})
    assert default is not None and str(tmp_path / ".cache/uv") in default.read
