"""The import graph against docs/architecture.md: every import of the core points down the layer
table the doc declares (or sideways, within a row), no cycle among modules or packages, every
core module named in the doc, and the few imports that go up listed there with their reason.

The graph is read from the source (the AST), not from what an import happens to load: an edge is
an ``import`` of another module of the same code base, wherever it stands (at module level, inside
a function, or under ``if TYPE_CHECKING:``, which a reader follows as much as any). The layer
table and the exceptions are parsed from the doc, so the doc and this test cannot drift apart.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest
from attrs import field, frozen

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "core" / "lorenz"
#: Every package of the code base: the core, and each bundled plugin's.
PACKAGES = [CORE, *sorted(ROOT.glob("plugins/*/lorenz_*"))]
DOC = ROOT / "docs" / "architecture.md"
#: The most imports that may go up the table, each listed in the doc with its reason.
MAX_EXCEPTIONS = 15


@frozen
class Graph:
    """A code base's imports by kind: ``{module: {imported module, ...}}``."""

    module_level: dict[str, set[str]] = field(factory=dict)
    in_functions: dict[str, set[str]] = field(factory=dict)
    type_checking: dict[str, set[str]] = field(factory=dict)

    def runtime(self) -> dict[str, set[str]]:
        """Every import that runs: at module level or inside a function."""
        return {name: self.module_level[name] | self.in_functions[name] for name in self.module_level}

    def every(self) -> dict[str, set[str]]:
        """Every import, ``TYPE_CHECKING`` ones included."""
        return {name: targets | self.type_checking[name] for name, targets in self.runtime().items()}


def _sources(package: Path) -> Iterator[Path]:
    """The package's modules: ``.py`` files in directories that are packages (the scaffold's
    project template, package data without ``__init__.py``, is not)."""
    for path in sorted(package.rglob("*.py")):
        folders = path.relative_to(package).parents
        if all((package / folder / "__init__.py").is_file() for folder in folders):
            yield path


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
        for path in _sources(package):
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
            for target in sorted(edges.get(node, set()) & group):
                if target == start:
                    return [*paths[node], start]
                if target not in paths:
                    paths[target] = [*paths[node], target]
                    following.append(target)
        frontier = following
    raise AssertionError(group)  # a strongly connected group always has one


def package_edges(edges: dict[str, set[str]]) -> dict[str, dict[str, set[str]]]:
    """For each package, the imports among what it holds: ``{package: {child: {child, ...}}}``, a
    child being a module or a subpackage directly in it (its ``__init__`` stands for itself)."""
    out: dict[str, dict[str, set[str]]] = {}
    for source, targets in edges.items():
        for target in targets:
            a, b = source.split("."), target.split(".")
            common = 0
            while common < min(len(a), len(b)) and a[common] == b[common]:
                common += 1
            parent = ".".join(a[:common])
            child_a = ".".join(a[: common + 1]) if len(a) > common else f"{parent}.__init__"
            child_b = ".".join(b[: common + 1]) if len(b) > common else f"{parent}.__init__"
            out.setdefault(parent, {}).setdefault(child_a, set()).add(child_b)
    return out


def _shown(found: Iterable[list[str]]) -> str:
    return "\n".join(" -> ".join(cycle) for cycle in found)


# --- The doc ---------------------------------------------------------------------------------------

_CODE = re.compile(r"`([^`]+)`")


@frozen
class Layer:
    """One row of the layer table: its name and what it holds, as module names (a package: every
    module under it not claimed by a more specific entry)."""

    name: str
    entries: tuple[str, ...]


def _module_of(token: str) -> str:
    """A path as the doc writes it (``settings/``, ``contracts``, ``host/app.py``,
    ``lorenz/__init__.py``) as a module name."""
    path = token.removeprefix("lorenz/").removesuffix("/").removesuffix(".py").removesuffix("/__init__")
    return "lorenz" if path in ("", "__init__") else "lorenz." + path.replace("/", ".")


def _table_after(text: str, heading: str) -> list[list[str]]:
    """The cells of the first table after ``heading``, header and rule left out."""
    lines = text[text.index(heading) :].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def layer_table(text: str) -> list[Layer]:
    """The rows of the table under ``## The layers``, bottom layer first."""
    return [
        Layer(name=cells[0], entries=tuple(_module_of(token) for token in _CODE.findall(cells[1])))
        for cells in _table_after(text, "## The layers")
    ]


def exceptions(text: str) -> dict[tuple[str, str], str]:
    """The imports that go up the table on purpose: ``{(importer, imported): why}``."""
    out = {}
    for cells in _table_after(text, "### Imports that go up"):
        importer, imported = (f"lorenz.{name}" for name in _CODE.findall(cells[0]))
        out[importer, imported] = cells[1]
    return out


def layer_of(module: str, layers: list[Layer]) -> int | None:
    """The row holding ``module``: the one naming it, or its closest package."""
    best: tuple[int, int] | None = None  # (how specific the entry is, row)
    for row, layer in enumerate(layers):
        for entry in layer.entries:
            if module == entry or (entry != "lorenz" and module.startswith(entry + ".")):
                depth = entry.count(".") + (module == entry)
                if best is None or depth > best[0]:
                    best = (depth, row)
    return None if best is None else best[1]


def upward(edges: dict[str, set[str]], layers: list[Layer]) -> set[tuple[str, str]]:
    """Each import that points to a later row of the table than its importer's."""
    rows = {module: layer_of(module, layers) or 0 for module in set(edges).union(*edges.values())}
    return {(source, target) for source, targets in edges.items() for target in targets if rows[source] < rows[target]}


def named(text: str, modules: Iterable[str]) -> set[str]:
    """The modules the doc names: by path anywhere (``host/app.py``), or by their last name in a
    line (a table row) that also names their package (``plugins/`` ... ``discovery``)."""
    found = set()
    for line in text.splitlines():
        tokens = _CODE.findall(line)
        paths = {_module_of(token) for token in tokens}
        packages = {_module_of(token) for token in tokens if token.endswith("/")}
        for module in modules:
            package, _, leaf = module.rpartition(".")
            if module in paths or (package in packages and (leaf in tokens or f"{leaf}.py" in tokens)):
                found.add(module)
    return found


GRAPH = build_graph(PACKAGES)
TEXT = DOC.read_text(encoding="utf-8")
LAYERS = layer_table(TEXT)
EXCEPTIONS = exceptions(TEXT)
CORE_MODULES = {name for name in GRAPH.module_level if name == "lorenz" or name.startswith("lorenz.")}
CORE_EDGES = {name: targets for name, targets in GRAPH.every().items() if name in CORE_MODULES}


def test_the_graph_sees_every_package_and_sets_type_checking_imports_apart() -> None:
    assert {name.partition(".")[0] for name in GRAPH.module_level} == {package.name for package in PACKAGES}
    assert "lorenz.plugins.discovery" in GRAPH.module_level["lorenz.workspace"]
    assert "lorenz.toolcall.execution" in GRAPH.in_functions["lorenz.mounting.mount"]
    assert "lorenz.plugins.model" in GRAPH.type_checking["lorenz.mounting.mount"]
    assert "lorenz.plugins.model" not in GRAPH.runtime()["lorenz.mounting.mount"]
    assert "lorenz.plugins.model" in GRAPH.every()["lorenz.mounting.mount"]
    assert not any(".scaffold.project" in name for name in GRAPH.module_level)  # a template, not a module


def test_no_import_cycle_between_modules() -> None:
    """Counting imports inside functions (hidden from Python, not from a reader) and under
    ``TYPE_CHECKING`` (which a reader follows as much as any)."""
    found = cycles(GRAPH.every()).values()
    assert not found, "import cycles:\n" + _shown(found)


def test_no_import_cycle_between_packages() -> None:
    """Within each package, what it holds (modules and subpackages) imports without a cycle, once
    the imports that go up on purpose are set aside."""
    edges = {source: targets - {t for s, t in EXCEPTIONS if s == source} for source, targets in GRAPH.every().items()}
    found = [
        f"{package}: " + " -> ".join(cycle)
        for package, children in sorted(package_edges(edges).items())
        for cycle in cycles(children).values()
    ]
    assert not found, "package cycles:\n" + "\n".join(found)


def test_the_layer_table_names_only_modules_that_exist() -> None:
    assert len(LAYERS) >= 10
    ghosts = sorted(entry for layer in LAYERS for entry in layer.entries if entry not in CORE_MODULES)
    assert not ghosts, f"docs/architecture.md's layer table names what is not a module: {ghosts}"


def test_every_core_module_has_a_layer() -> None:
    homeless = sorted(module for module in CORE_MODULES if layer_of(module, LAYERS) is None)
    assert not homeless, f"modules in no row of docs/architecture.md's layer table: {homeless}"


def test_imports_point_down_the_layer_table() -> None:
    """A module imports from its own row or an earlier one, except where the doc says why not."""
    found = sorted(upward(CORE_EDGES, LAYERS) - set(EXCEPTIONS))
    shown = "\n".join(
        f"{a} ({LAYERS[layer_of(a, LAYERS) or 0].name}) -> {b} ({LAYERS[layer_of(b, LAYERS) or 0].name})"
        for a, b in found
    )
    assert not found, "imports that go up docs/architecture.md's layer table:\n" + shown


def test_the_imports_that_go_up_are_few_listed_and_real() -> None:
    """Each listed exception is an import the code has, inside a function, and that does go up:
    none lingers once it is fixed."""
    assert 0 < len(EXCEPTIONS) <= MAX_EXCEPTIONS
    assert all(why for why in EXCEPTIONS.values())
    stale = sorted(set(EXCEPTIONS) - upward(CORE_EDGES, LAYERS))
    assert not stale, f"listed as going up, but not (or no longer) an upward import: {stale}"
    eager = sorted((a, b) for a, b in EXCEPTIONS if b not in GRAPH.in_functions[a])
    assert not eager, f"listed as going up, but imported outside a function: {eager}"


def test_every_core_module_is_named_in_the_doc() -> None:
    unnamed = sorted(CORE_MODULES - named(TEXT, CORE_MODULES))
    assert not unnamed, f"modules docs/architecture.md never names: {unnamed}"


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
    packages = package_edges({"p.x.one": {"p.y.two"}, "p.y.two": {"p.x"}, "p.x": set()})
    assert cycles(packages["p"]) == {("p.x", "p.y"): ["p.x", "p.y", "p.x"]}


SAMPLE = """
## The layers

| layer | where | what it holds |
|---|---|---|
| low | `results`, `sandbox/` | `permissions` |
| middle | `settings/`, `sandbox/report.py` | |
| top | `lorenz/__init__.py`, `cli/` | |

### Imports that go up

| import | why |
|---|---|
| `results` → `cli.main` | an example |
"""


def test_the_table_is_read_from_the_doc_and_an_upward_import_found() -> None:
    layers = layer_table(SAMPLE)
    assert [layer.name for layer in layers] == ["low", "middle", "top"]
    assert layers[0].entries == ("lorenz.results", "lorenz.sandbox")
    assert layers[2].entries == ("lorenz", "lorenz.cli")
    assert layer_of("lorenz.sandbox.permissions", layers) == 0
    assert layer_of("lorenz.sandbox.report", layers) == 1  # the more specific entry wins
    assert layer_of("lorenz", layers) == 2
    assert layer_of("lorenz.workspace", layers) is None
    edges = {"lorenz.settings.model": {"lorenz.results", "lorenz.cli.main"}, "lorenz.results": {"lorenz.sandbox"}}
    assert upward(edges, layers) == {("lorenz.settings.model", "lorenz.cli.main")}
    assert exceptions(SAMPLE) == {("lorenz.results", "lorenz.cli.main"): "an example"}
    assert named(SAMPLE, ["lorenz.sandbox.permissions", "lorenz.sandbox.report", "lorenz.sandbox.host"]) == {
        "lorenz.sandbox.permissions",
        "lorenz.sandbox.report",
    }
