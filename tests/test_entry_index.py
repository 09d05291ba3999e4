"""The installed plugins' entry points, remembered between commands (:mod:`lorenz.plugins.entry_index`):
what is read back is what :mod:`importlib.metadata` finds, and installing, removing or editing a
distribution is seen by the very next read."""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lorenz.hookspecs import ENTRY_POINT_GROUP
from lorenz.plugins import entry_index
from lorenz.plugins.entry_index import PluginEntryPoint, location, plugin_entry_points


def _cache_files() -> list[Path]:
    folder = Path(os.environ["XDG_CACHE_HOME"]) / "lorenz" / "entry-points"
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


def _as_importlib_finds() -> list[tuple[str, str, str | None, str | None]]:
    found = []
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        assert ep.dist is not None
        found.append((ep.name, ep.value, ep.dist.metadata["Name"], ep.dist.version))
    return sorted(found)


def _as_indexed(entries: list[PluginEntryPoint]) -> list[tuple[str, str, str | None, str | None]]:
    return sorted(
        (ep.name, ep.module if ep.attr is None else f"{ep.module}:{ep.attr}", ep.distribution, ep.version)
        for ep in entries
    )


def _forget() -> None:
    """Drop what this process remembers, so the next read comes from the cache file (or afresh)."""
    entry_index._LAST.clear()


def test_the_index_is_what_importlib_metadata_finds_read_afresh_and_from_the_cache(dist_dir: Path) -> None:
    _forget()
    fresh = plugin_entry_points(ENTRY_POINT_GROUP)
    assert _as_indexed(fresh) == _as_importlib_finds()
    assert any(ep.distribution == "lorenz-acme" for ep in fresh)
    assert len(_cache_files()) == 1
    _forget()
    assert plugin_entry_points(ENTRY_POINT_GROUP) == fresh  # read back from the file
    acme = next(ep for ep in fresh if ep.distribution == "lorenz-acme")
    assert acme.requires is None and acme.load() is sys.modules["lorenz_acme"]
    assert location("lorenz-acme") == os.path.realpath(dist_dir)
    assert location("lorenz-core") == os.path.realpath(importlib.metadata.distribution("lorenz-core").locate_file(""))


def test_locations_after_a_read_come_from_that_read(dist_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Discovery asks where each plugin lives right after reading the entry points: the answers come
    from that read, without fingerprinting the import path again (a stat of every distribution)."""
    _forget()
    fresh = plugin_entry_points(ENTRY_POINT_GROUP)
    assert any(ep.distribution == "lorenz-acme" for ep in fresh)

    def refuse() -> None:
        raise AssertionError("fingerprinted again")

    monkeypatch.setattr(entry_index, "_fingerprint", refuse)
    assert location("lorenz-acme") == os.path.realpath(dist_dir)


@pytest.mark.parametrize("change", ["install", "remove", "edit entry points", "upgrade metadata"])
def test_a_change_to_the_installed_distributions_is_seen_at_once(dist_dir: Path, change: str) -> None:
    _forget()
    assert "lorenz-acme" in {ep.distribution for ep in plugin_entry_points(ENTRY_POINT_GROUP)}
    info = dist_dir / "lorenz_acme-0.1.0.dist-info"
    if change == "install":
        info = dist_dir / "lorenz_zed-0.1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: lorenz-zed\nVersion: 0.1.0\n", encoding="utf-8")
        (info / "entry_points.txt").write_text("[lorenz.tool_packs]\nzed = lorenz_zed\n", encoding="utf-8")
    elif change == "remove":
        for file in info.iterdir():
            file.unlink()
        info.rmdir()
    elif change == "edit entry points":  # in place: the directories' times stay as they were
        (info / "entry_points.txt").write_text("[lorenz.tool_packs]\nrenamed = lorenz_acme\n", encoding="utf-8")
    else:
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: lorenz-acme\nVersion: 0.10.0\n", encoding="utf-8")
    for forget in (False, True):  # this process's memory, then the cache file
        if forget:
            _forget()
        assert _as_indexed(plugin_entry_points(ENTRY_POINT_GROUP)) == _as_importlib_finds()


def test_a_cache_file_that_cannot_be_used_is_read_afresh_and_rewritten(dist_dir: Path) -> None:
    _forget()
    expected = plugin_entry_points(ENTRY_POINT_GROUP)
    (cache,) = _cache_files()
    for garbage in (b"{not json", json.dumps({"key": "another", "entries": [], "locations": {}}).encode()):
        cache.write_bytes(garbage)
        _forget()
        assert plugin_entry_points(ENTRY_POINT_GROUP) == expected
        assert json.loads(cache.read_bytes())["entries"]


def test_a_zip_on_the_import_path_is_never_cached(dist_dir: Path, tmp_path: Path) -> None:
    archive = tmp_path / "packs.zip"
    archive.write_bytes(b"PK\x05\x06" + b"\0" * 18)  # an empty zip archive
    sys.path.append(str(archive))
    try:
        _forget()
        assert _as_indexed(plugin_entry_points(ENTRY_POINT_GROUP)) == _as_importlib_finds()
        assert _cache_files() == []
    finally:
        sys.path.remove(str(archive))


@pytest.mark.slow
def test_a_second_command_reads_no_distribution_metadata(tmp_path: Path) -> None:
    """The first ``lorenz plugins`` reads through importlib.metadata and keeps the index; the next
    one loads neither it nor the ``email`` parser, and lists the same plugins."""
    code = (
        "import contextlib, io, json, sys\n"
        "from lorenz.cli import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        "    main(['plugins'])\n"
        "print(json.dumps([out.getvalue(), 'importlib.metadata' in sys.modules, 'email' in sys.modules]))\n"
    )
    runs = [
        json.loads(
            subprocess.run(
                [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True
            ).stdout.splitlines()[-1]
        )
        for _ in range(2)
    ]
    assert runs[0][1] is True
    assert runs[1][0] == runs[0][0] and "local (lorenz-local" in runs[1][0]
    assert runs[1][1:] == [False, False]
