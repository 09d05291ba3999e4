"""The import graph: no cycles among the core's and the bundled plugins' modules, and the host
never reaching up into the CLI.

The graph is read from the source (the AST), not from what an import happens to load: an edge is
an ``import`` of another module of the same code base. Imports under ``if TYPE_CHECKING:`` never
run and are kept apart; imports inside a function (deferred to keep start-up light) are edges of
the graph too, checked separately from the module-level ones.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest
from attrs import field, frozen

ROOT = Path(__file__).resolve().parents[1]
#: Every package of the code base: the core, and each bundled plugin's.
PACKAGES = [ROOT / "core" / "lorenz", *sorted(ROOT.glob("plugins/*/lorenz_*"))]


@frozen
class Graph:
    """A code base's imports by kind: ``{module: {imported module, ...}}``."""

    module_level: dict[str, set[str]] = field(factory=dict)
    in_functions: dict[str, set[str]] = field(factory=dict)
    type_checking: dict[str, set[str]] = field(factory=dict)

    def runtime(self) -> dict[str, set[str]]:
        """Every import that runs: at module level or inside a function."""
        return {name: self.module_level[name] | self.in_functions[name] for name in self.module_level}


def _module_name(package: Path, path: Path) -> tuple[str, bool]:
    parts = [package.name, *path.relative_to(package).with_suffix("").parts]
    is_package = parts[-1] == "__init__"
    return ".".join(parts[:-1] if is_package else parts), is_package


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.Module) -> Iterator[tuple[ast.Import | ast.ImportFrom, str]]:
    """Each import statement with where it is: ``module``, ``function`` or ``type_checking``."""

    def walk(node: ast.AST, where: str) -> Iterator[tuple[ast.Import | ast.ImportFrom, str]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom):
                yield child, where
            elif isinstance(child, ast.If) and _is_type_checking(child.test):
                for statement in child.body:
                    yield from walk(ast.Module(body=[statement], type_ignores=[]), "type_checking")
                for statement in child.orelse:
                    yield from walk(ast.Module(body=[statement], type_ignores=[]), where)
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                yield from walk(child, "type_checking" if where == "type_checking" else "function")
            else:
                yield from walk(child, where)

    yield from walk(tree, "module")


def _targets(node: ast.Import | ast.ImportFrom, package: str, modules: set[str]) -> Iterator[str]:
    """The modules of the code base ``node`` imports (``from x import y``: ``x.y`` when a module)."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        if node.level:
            base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
            source = ".".join([*base, node.module] if node.module else base)
        else:
            source = node.module or ""
        names = [f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source for alias in node.names]
    for name in names:
        while name and name not in modules:  # `import a.b.c` of a name inside a module
            name = name.rpartition(".")[0]
        if name:
            yield name


def build_graph(packages: list[Path]) -> Graph:
    sources: dict[str, tuple[Path, bool]] = {}
    for package in packages:
        for path in sorted(package.rglob("*.py")):
            name, is_package = _module_name(package, path)
            sources[name] = (path, is_package)
    modules = set(sources)
    graph = Graph()
    kinds = {"module": graph.module_level, "function": graph.in_functions, "type_checking": graph.type_checking}
    for name, (path, is_package) in sources.items():
        for edges in kinds.values():
            edges[name] = set()
        package = name if is_package else name.rpartition(".")[0]
        for node, where in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            kinds[where][name].update(target for target in _targets(node, package, modules) if target != name)
    return graph


def cycles(edges: dict[str, set[str]]) -> dict[tuple[str, ...], list[str]]:
    """Each strongly connected group of modules (sorted) and one cycle through it, ``[a, b, ..., a]``."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(node: str) -> None:  # Tarjan's algorithm
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(group)

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return {tuple(sorted(group)): _path_through(group, edges) for group in groups}


def _path_through(group: set[str], edges: dict[str, set[str]]) -> list[str]:
    """A shortest cycle from the group's first module back to itself, within the group."""
    start = min(group)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for target in sorted(edges[node] & group):
                if target == start:
                    return [*paths[node], start]
                if target not in paths:
                    paths[target] = [*paths[node], target]
                    following.append(target)
        frontier = following
    raise AssertionError(group)  # a strongly connected group always has one


def _shown(found: list[list[str]]) -> str:
    return "\n".join(" -> ".join(cycle) for cycle in found)


GRAPH = build_graph(PACKAGES)


def test_the_graph_sees_every_package_and_sets_type_checking_imports_apart() -> None:
    assert {name.partition(".")[0] for name in GRAPH.module_level} == {package.name for package in PACKAGES}
    assert "lorenz.plugins.discovery" in GRAPH.module_level["lorenz.workspace"]
    assert "lorenz.toolcall.execution" in GRAPH.in_functions["lorenz.mounting.mount"]
    assert "lorenz.plugins.model" in GRAPH.type_checking["lorenz.mounting.mount"]
    assert "lorenz.plugins.model" not in GRAPH.runtime()["lorenz.mounting.mount"]


def test_no_import_cycle_at_module_level() -> None:
    found = list(cycles(GRAPH.module_level).values())
    assert not found, "import cycles:\n" + _shown(found)


def test_no_import_cycle_through_imports_inside_functions() -> None:
    """A function-level import hides a cycle from Python but not from a reader: none either."""
    found = list(cycles(GRAPH.runtime()).values())
    assert not found, "import cycles (counting imports inside functions):\n" + _shown(found)


def _is_cli(module: str) -> bool:
    return module == "lorenz.cli" or module.startswith(("lorenz.cli.", "lorenz.cli_"))


@pytest.mark.parametrize("kind", ["module_level", "in_functions", "type_checking"])
def test_the_host_does_not_import_the_cli(kind: str) -> None:
    """The ASGI factory and the rest of the host serve without the command line's modules."""
    edges: dict[str, set[str]] = getattr(GRAPH, kind)
    found = {
        (module, target)
        for module, targets in edges.items()
        if module == "lorenz.host" or module.startswith("lorenz.host.")
        for target in targets
        if _is_cli(target)
    }
    assert not found, "modules under lorenz.host import the CLI:\n" + "\n".join(f"{a} -> {b}" for a, b in sorted(found))


def test_a_cycle_is_found_and_named() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(edges) == {("a", "b", "c"): ["a", "b", "c", "a"]}
    assert cycles({"a": {"b"}, "b": set()}) == {}
