"""The lazy top-level exports of ``lorenz``."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import lorenz


def _type_checking_reexports() -> dict[str, str]:
    tree = ast.parse(Path(lorenz.__file__).read_text(encoding="utf-8"))
    block = next(node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING")
    found: dict[str, str] = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom)
        for alias in node.names:
            if alias.asname == alias.name:  # only `X as X` is a re-export under mypy --strict
                found[alias.name] = f"lorenz{'.' if node.level else ''}{node.module}"
    return found


def test_every_export_is_an_explicit_reexport_for_type_checkers() -> None:
    """Each lazily exported name is imported as ``X as X`` from its module for mypy --strict users."""
    assert _type_checking_reexports() == lorenz._EXPORTS


def test_every_export_resolves_to_its_module_attribute() -> None:
    """``lorenz.X`` is the object its module defines."""
    for name, module in lorenz._EXPORTS.items():
        assert getattr(lorenz, name) is getattr(importlib.import_module(module), name)
