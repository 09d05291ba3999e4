"""``lorenz lint``: the contract, naming, schema, error-contract, ctx.fail, parity and reference rules."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from attrs import field, frozen

from lorenz import ToolSpec, tool_failure, tool_success
from lorenz.authoring import CallContext, ErrorContract, Pack, describe, disabled, tool
from lorenz.authoring.lint import Diagnostic, lint_discovery, lint_pack, lint_path
from lorenz.cli import main
from lorenz.plugins.discovery import discover

ROOT = Path(__file__).resolve().parents[1]


def rules(diagnostics: list[Diagnostic], severity: str | None = None) -> set[str]:
    return {d.rule for d in diagnostics if severity is None or d.severity == severity}


class PlainPack:
    """A hand-written ToolProvider with the mistakes the lint is for."""

    name = "plain"

    def __init__(self, specs: list[ToolSpec], behaviour: str = "fail") -> None:
        self.specs = specs
        self.behaviour = behaviour

    def tool_specs(self, settings: Any) -> list[ToolSpec]:
        return self.specs

    async def execute_tool(self, name: str, input: Any, context: Any) -> Any:
        if self.behaviour == "raise":
            raise KeyError(name)
        if self.behaviour == "succeed":
            return tool_success({"ok": True})
        return tool_failure("nope")


STRICT = {"type": "object", "properties": {"id": {"type": "string", "description": "Id."}}, "required": ["id"]}
STRICT = {**STRICT, "additionalProperties": False}


def test_good_plain_pack_has_no_errors() -> None:
    """A well-formed plain pack passes with no diagnostics at all."""
    pack = PlainPack([ToolSpec(name="plain_read_item", description="Read one item.", input_schema=STRICT)])
    assert lint_pack(pack) == []


def test_naming_rules() -> None:
    """Missing prefix and duplicates are errors."""
    pack = PlainPack(
        [
            ToolSpec(name="read_item", description="d", input_schema=STRICT),
            ToolSpec(name="plain_read", description="d", input_schema=STRICT),
            ToolSpec(name="plain_read", description="d", input_schema=STRICT),
            ToolSpec(name="plain bad name", description="d", input_schema=STRICT),
        ]
    )
    found = lint_pack(pack, contract=False)
    assert {"name-prefix", "name-unique", "name-format"} <= rules(found, "error")
    assert any(d.tool == "read_item" and d.rule == "name-prefix" for d in found)


@pytest.mark.parametrize("name", ["plain_comment", "plain_read_item", "plain_list_open_items", "plain_v2_get"])
def test_snake_case_names_of_any_length_pass(name: str) -> None:
    """``{pack}_{verb}`` (a canonical verb) and longer snake_case names are fine: no warning."""
    assert lint_pack(PlainPack([ToolSpec(name=name, description="d", input_schema=STRICT)]), contract=False) == []


@pytest.mark.parametrize(
    ("name", "rule"),
    [
        ("plain_readItem", "name-convention"),
        ("plain_read-item", "name-convention"),
        ("plain_read.item", "name-convention"),
        ("plain__read", "name-convention"),
        ("plain_read_", "name-convention"),
        ("plain_" + "_".join(["item"] * 13), "name-length"),
    ],
)
def test_names_that_hurt_clients_warn(name: str, rule: str) -> None:
    """Mixed case, dashes, dots, empty segments, and names over 64 characters (model APIs refuse
    them) are warnings."""
    found = lint_pack(PlainPack([ToolSpec(name=name, description="d", input_schema=STRICT)]), contract=False)
    assert [(d.rule, d.severity) for d in found] == [(rule, "warning")]


def test_description_and_schema_rules() -> None:
    """An empty description and an invalid or non-object schema are errors; loose schemas warn."""
    pack = PlainPack(
        [
            ToolSpec(name="plain_read_item", description=" ", input_schema=STRICT),
            ToolSpec(name="plain_list_items", description="d", input_schema={"type": "objekt"}),
            ToolSpec(name="plain_list_things", description="d", input_schema={"type": "array"}),
            ToolSpec(
                name="plain_find_things", description="d", input_schema={"type": "object", "properties": {"q": {}}}
            ),
        ]
    )
    found = lint_pack(pack, contract=False)
    assert {"description-required", "schema-invalid"} <= rules(found, "error")
    assert {"schema-strict", "describe-on-fields"} <= rules(found, "warning")


def test_a_nested_object_with_described_keys_must_be_strict() -> None:
    """An object inside the schema that lists its keys but takes others warns, naming where it is;
    an open map (no ``properties``) does not."""
    loose_item = {"type": "object", "properties": {"field": {"type": "string"}}}
    schema = {
        **STRICT,
        "properties": {
            "id": {"type": "string", "description": "Id."},
            "order": {"type": "array", "items": loose_item, "description": "Sort keys."},
            "variables": {"type": "object", "additionalProperties": True, "description": "Free-form."},
        },
    }
    found = lint_pack(PlainPack([ToolSpec(name="plain_read_item", description="d", input_schema=schema)]))
    assert [(d.rule, d.message) for d in found] == [
        (
            "schema-strict",
            'inputSchema at properties.order.items should set "additionalProperties": false so a misspelled '
            "argument is refused",
        )
    ]


def test_annotation_rules() -> None:
    """Non-boolean hints and readOnly-with-destructive are warnings."""
    spec = ToolSpec(
        name="plain_read_item",
        description="d",
        input_schema=STRICT,
        annotations={"readOnlyHint": True, "destructiveHint": "no"},
    )
    assert {"annotation-type", "annotation-coherence"} <= rules(lint_pack(PlainPack([spec]), contract=False))


def test_raising_pack_breaks_the_contract() -> None:
    """A pack that raises on an unknown tool or bad arguments is an error, not a crash of the lint."""
    pack = PlainPack([ToolSpec(name="plain_read_item", description="d", input_schema=STRICT)], behaviour="raise")
    found = [d for d in lint_pack(pack) if d.rule == "contract-raised"]
    assert {d.tool for d in found} == {None, "plain_read_item"}
    assert "KeyError" in found[0].message


def test_accepting_pack_is_flagged() -> None:
    """Succeeding on an unknown tool is an error; succeeding on refused arguments a warning."""
    pack = PlainPack([ToolSpec(name="plain_read_item", description="d", input_schema=STRICT)], behaviour="succeed")
    found = [d for d in lint_pack(pack) if d.rule == "contract-bad-input-accepted"]
    assert {(d.tool, d.severity) for d in found} == {(None, "error"), ("plain_read_item", "warning")}


@frozen
class Args:
    q: str = field(metadata=describe("Query."))


@frozen
class Out:
    title: str = field(metadata=describe("Title."))
    count: int = field(metadata=describe("How many."))
    done: bool = field(metadata=describe("Finished."))


def _typed(**overrides: Any) -> Any:
    options: dict[str, Any] = {
        "name": "typed_find_things",
        "description": "Find things.",
        "input": Args,
        "output": Out,
        "errors": [ErrorContract(reason="gone", when="It is gone.", recovery="Search again with a broader query.")],
    }
    options.update(overrides)

    async def handler(ctx: CallContext, args: Args) -> Out:
        if args.q == "x":
            raise ctx.fail("gone")
        if args.q == "y":
            raise ctx.fail("vanished")
        return Out(title="t", count=1, done=False)

    return tool(**options)(handler)


def test_typed_pack_passes() -> None:
    """A typed pack with a complete format and declared reasons is clean except the undeclared call."""
    found = lint_pack(Pack(name="typed", tools=[_typed()]))
    assert [d.rule for d in found] == ["fail-undeclared-reason"]
    assert 'ctx.fail("vanished")' in found[0].message and "declared: gone" in found[0].message
    assert "test_authoring_lint.py:" in found[0].message


def test_short_recovery_is_an_error() -> None:
    """A recovery hint under five words is an error."""
    contract = ErrorContract(reason="gone", when="It is gone.", recovery="Try again.")
    found = lint_pack(Pack(name="typed", tools=[_typed(errors=[contract])]), contract=False)
    assert "error-contract-recovery-min-words" in rules(found, "error")


def test_contract_reason_and_when_rules() -> None:
    """A non-snake_case reason warns; an empty ``when`` or recovery is an error."""
    contract = ErrorContract(reason="Gone-Away", when="", recovery="")
    found = lint_pack(Pack(name="typed", tools=[_typed(errors=[contract])]), contract=False)
    assert "error-contract-reason-format" in rules(found, "warning")
    assert {"error-contract-when-required", "error-contract-recovery-required"} <= rules(found, "error")


def test_format_parity() -> None:
    """A format that drops an output field is an error naming it; one that raises is a warning."""
    thin = _typed(format=lambda out: f"# {out.title}\n\nfinished: {out.done}")
    (parity,) = [d for d in lint_pack(Pack(name="typed", tools=[thin]), contract=False) if d.rule == "format-parity"]
    assert "count" in parity.message and "title" not in parity.message and "done" not in parity.message
    full = _typed(format=lambda out: f"# {out.title}\n\n{out.count} things, done: {'yes' if out.done else 'no'}")
    assert "format-parity" not in rules(lint_pack(Pack(name="typed", tools=[full]), contract=False))

    def boom(out: Out) -> str:
        raise RuntimeError("no")

    assert "format-parity-threw" in rules(lint_pack(Pack(name="typed", tools=[_typed(format=boom)]), contract=False))


def test_disabled_tool_reference() -> None:
    """An enabled tool whose text sends the agent to a disabled tool is warned about."""
    off = _typed(name="typed_delete_things", description="Delete things.")
    on = _typed(description="Find things; then call typed_delete_things.")
    pack = Pack(name="typed", tools=[on, disabled(off, reason="Writes are off.")])
    found = [d for d in lint_pack(pack, contract=False) if d.rule == "disabled-tool-reference"]
    assert [d.tool for d in found] == ["typed_find_things"]


def test_weather_example_is_clean() -> None:
    """The example pack has no diagnostics, linted from its source tree."""
    report = lint_path(ROOT / "examples" / "weather")
    assert report.diagnostics == ()
    assert report.packs == (
        {
            "name": "weather",
            "tools": ["weather_get_forecast", "weather_list_cities"],
            "disabled": ["weather_set_alert"],
        },
    )


def test_installed_packs_have_no_errors() -> None:
    """Every installed pack (the bundled plugins in a dev environment) lints without errors."""
    report = lint_discovery(discover())
    assert report.errors == []


BAD_PLUGIN = """
from lorenz import ToolSpec, hookimpl, tool_failure


class Pack:
    name = "oops"

    def tool_specs(self, settings):
        return [ToolSpec(name="read_item", description="", input_schema={"type": "object"})]

    async def execute_tool(self, name, input, context):
        return tool_failure("no")


@hookimpl
def lorenz_register_tool_packs(register):
    register(Pack())
"""


def test_cli_lint_exit_status(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`lorenz lint FILE` prints each finding and exits 1 on errors; --json is machine-readable."""
    plugin = tmp_path / "oops_plugin.py"
    plugin.write_text(textwrap.dedent(BAD_PLUGIN))
    assert main(["lint", str(plugin)]) == 1
    out = capsys.readouterr().out
    assert "error: oops/read_item: tool name read_item must start with the pack prefix oops_ [name-prefix]" in out
    assert out.rstrip().endswith("lorenz lint: 1 pack, 1 tool: 2 errors, 1 warning")
    assert main(["lint", str(ROOT / "examples" / "weather"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["errors"] == 0


def test_cli_lint_bad_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A path that is not a project, file or module is one `lorenz:` line and exit 1."""
    assert main(["lint", str(tmp_path)]) == 1
    assert capsys.readouterr().err.startswith(f"lorenz: cannot lint {tmp_path}: ")


def test_lint_path_leaves_no_trace(tmp_path: Path) -> None:
    """Linting a project from source unloads its modules and keeps every core module as it was."""
    import sys

    from lorenz.authoring.scaffold import new_pack

    new_pack("tracey", tmp_path / "proj")
    before = {name: module for name, module in sys.modules.items() if name.startswith("lorenz")}
    assert lint_path(tmp_path / "proj").errors == []
    assert "lorenz_tracey" not in sys.modules and str(tmp_path / "proj") not in sys.path
    assert all(sys.modules.get(name) is module for name, module in before.items())


def _wheel(out: Path, files: dict[str, str]) -> Path:
    """A wheel as a build backend lays it out: the package, and its .dist-info with entry points."""
    import zipfile

    wheel = out / "lorenz_weather-0.1.0-py3-none-any.whl"
    info = "lorenz_weather-0.1.0.dist-info"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
        archive.writestr(f"{info}/METADATA", "Metadata-Version: 2.1\nName: lorenz-weather\nVersion: 0.1.0\n")
        archive.writestr(f"{info}/entry_points.txt", "[lorenz.tool_packs]\nweather = lorenz_weather.plugin\n")
    return wheel


def test_cli_lint_a_built_wheel(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`lorenz lint dist/x.whl` lints what the wheel would install, and leaves no trace of it."""
    import sys

    package = ROOT / "examples" / "weather" / "lorenz_weather"
    files = {f"lorenz_weather/{path.name}": path.read_text() for path in package.glob("*.py")}
    wheel = _wheel(tmp_path, files)
    assert main(["lint", str(wheel), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["errors"] == 0 and [pack["name"] for pack in report["packs"]] == ["weather"]
    assert not any(str(tmp_path) in entry or "lorenz-lint-" in entry for entry in sys.path)
    broken = tmp_path / "broken"
    broken.mkdir()
    files["lorenz_weather/tools.py"] = files["lorenz_weather/tools.py"].replace('name="weather_', 'name="')
    assert main(["lint", str(_wheel(broken, files))]) == 1
    assert "must start with the pack prefix weather_ [name-prefix]" in capsys.readouterr().out


def test_cli_lint_refuses_a_wheel_that_unpacks_outside(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    wheel = _wheel(tmp_path, {"../escaped.py": "print('no')\n"})
    assert main(["lint", str(wheel)]) == 1
    assert "member '../escaped.py' would unpack outside the wheel's folder" in capsys.readouterr().err
    assert not (tmp_path.parent / "escaped.py").exists()
