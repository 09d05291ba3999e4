"""What :mod:`lorenz.host.reload.sources` sees of a pack's source files (issue 44): an edit, an
import afresh (a reinstall), and no editable install for a distribution installed plainly."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from lorenz.host.reload.sources import SourceWatch, editable_roots


@pytest.fixture
def package(tmp_path: Path) -> Iterator[Path]:
    """A package ``edited_pack`` on ``sys.path``, imported."""
    root = tmp_path / "edited_pack"
    root.mkdir()
    (root / "__init__.py").write_text("DESCRIPTION = 'first'\n", encoding="utf-8")
    (root / "tools.py").write_text("X = 1\n", encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    importlib.import_module("edited_pack.tools")
    try:
        yield root
    finally:
        sys.path.remove(str(tmp_path))
        for name in [name for name in sys.modules if name.split(".")[0] == "edited_pack"]:
            del sys.modules[name]


def touch_later(path: Path, text: str) -> None:
    """Rewrite ``path`` with a later mtime than it had (a coarse clock may not tick in between)."""
    before = path.stat().st_mtime_ns
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(before + 10**9, before + 10**9))


def test_an_edit_is_seen_once(package: Path) -> None:
    watch = SourceWatch(every=0)
    watch.watch({"edited": (package,)})
    assert watch.look() == (frozenset(), frozenset())
    touch_later(package / "tools.py", "X = 2\n")
    assert watch.look() == (frozenset({"edited"}), frozenset())
    assert watch.look() == (frozenset(), frozenset())  # taken as seen


def test_a_new_file_is_an_edit(package: Path) -> None:
    watch = SourceWatch(every=0)
    watch.watch({"edited": (package,)})
    (package / "more.py").write_text("Y = 1\n", encoding="utf-8")
    assert watch.look()[0] == {"edited"}


def test_an_import_afresh_is_not_an_edit(package: Path) -> None:
    watch = SourceWatch(every=0)
    watch.watch({"edited": (package,)})
    touch_later(package / "__init__.py", "DESCRIPTION = 'second'\n")
    for name in [name for name in sys.modules if name.split(".")[0] == "edited_pack"]:
        del sys.modules[name]
    importlib.import_module("edited_pack")  # what rediscovery does after a reinstall
    assert watch.look() == (frozenset(), frozenset({"edited"}))


def test_a_pack_mounted_again_keeps_what_was_seen(package: Path) -> None:
    watch = SourceWatch(every=0)
    watch.watch({"edited": (package,)})
    watch.watch({})  # unmounted
    touch_later(package / "tools.py", "X = 3\n")
    watch.watch({"edited": (package,)})  # mounted again: the edit made meanwhile still shows
    assert watch.look()[0] == {"edited"}


def test_looks_are_spaced() -> None:
    watch = SourceWatch(every=3600)
    watch.watch({"edited": (Path("/nonexistent"),)})
    assert not watch.due()


def test_a_plain_install_has_no_editable_roots() -> None:
    assert editable_roots("pluggy") == ()  # installed from a wheel
    assert editable_roots("no-such-distribution") == ()
