"""The public API: what docs/api.md declares, and the bundled plugins using nothing else."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import lorenz
import lorenz.authoring
import lorenz.host
import lorenz.testing

ROOT = Path(__file__).resolve().parents[1]
API_DOC = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
PUBLIC_MODULES = {
    "lorenz": lorenz,
    "lorenz.authoring": lorenz.authoring,
    "lorenz.testing": lorenz.testing,
    "lorenz.host": lorenz.host,
}
#: Every distribution's package: the bundled plugins and the example pack.
PACKAGES = sorted(ROOT.glob("plugins/*/lorenz_*")) + sorted(ROOT.glob("examples/*/lorenz_*"))
#: The bundled packs' tests: a third-party author gets the same tools (``lorenz.testing``).
PLUGIN_TESTS = sorted(ROOT.glob("plugins/*/tests"))


def lorenz_imports(package: Path) -> Iterator[tuple[str, int, str, list[str]]]:
    """``(file, line, module, names)`` for each import of a ``lorenz`` module in ``package``."""
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                if node.module == "lorenz" or node.module.startswith("lorenz."):
                    yield str(path), node.lineno, node.module, [a.name for a in node.names]
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name == "lorenz" or alias.name.startswith("lorenz."):
                        yield str(path), node.lineno, alias.name, []


def test_there_are_packages_to_check() -> None:
    assert len(PACKAGES) >= 5, PACKAGES
    assert len(PLUGIN_TESTS) >= 5, PLUGIN_TESTS


@pytest.mark.parametrize(
    "package",
    PACKAGES + PLUGIN_TESTS,
    ids=lambda path: path.name if path.name != "tests" else f"{path.parent.name}-tests",
)
def test_a_bundled_package_imports_only_the_public_api(package: Path) -> None:
    outside = []
    for where, line, module, names in lorenz_imports(package):
        public = PUBLIC_MODULES.get(module)
        if public is None:
            outside.append(f"{where}:{line}: {module}")
            continue
        outside.extend(f"{where}:{line}: {module}.{name}" for name in names if name not in public.__all__)
    assert not outside, "imports outside the public API (docs/api.md):\n" + "\n".join(outside)


@pytest.mark.parametrize("tracker", [False, True])
def test_a_scaffolded_pack_imports_only_the_public_api(tmp_path: Path, tracker: bool) -> None:
    """What ``lorenz new-pack`` writes is the example pack authors copy: public API only."""
    from lorenz.authoring.scaffold import new_pack

    new_pack("acme_crm", tmp_path / "proj", tracker=tracker)
    (package,) = (tmp_path / "proj").glob("lorenz_*")
    found = [(module, names) for _, _, module, names in lorenz_imports(package)]
    assert found, "the scaffold imports nothing from lorenz"
    outside = [
        f"{module}.{name}"
        for module, names in found
        for name in names or ["*"]
        if module not in PUBLIC_MODULES or name not in PUBLIC_MODULES[module].__all__
    ]
    assert not outside, f"the scaffold imports outside the public API: {outside}"


@pytest.mark.parametrize("module", sorted(PUBLIC_MODULES))
def test_the_api_doc_declares_every_public_name(module: str) -> None:
    """Each name a public module exports is named in docs/api.md, and each resolves."""
    names = [name for name in PUBLIC_MODULES[module].__all__ if name != "__version__"]
    documented = set(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", API_DOC))
    missing = [name for name in names if name not in documented]
    assert not missing, f"{module} exports names docs/api.md does not declare: {missing}"
    for name in names:
        getattr(PUBLIC_MODULES[module], name)
