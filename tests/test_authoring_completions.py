"""Completions of a typed pack's resource-template parameters and prompt arguments (issue 45, item 2):
``complete=`` on :func:`resource_template` and :func:`prompt` (a function, sync or async, with or
without ``ctx`` and the other arguments; or a list of choices), ``Literal``/``Enum`` fields by
themselves; through the official SDK client over real HTTP in both eras, bounded to 100 values,
contained, refused with an error naming the argument, and in the call log."""

from __future__ import annotations

import enum
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

import mcp
import pytest
from attrs import field, frozen
from mcp_types import PromptReference, ResourceTemplateReference

from lorenz import ToolProvider, hookimpl
from lorenz.authoring import Completions, Pack, PackContext, describe, prompt, resource, resource_template
from lorenz.cli import main
from lorenz.host import serve_in_thread

pytestmark = pytest.mark.anyio

SECRET = "sekrit-completion-77"
CITIES = ("oslo", "bergen", "bodø", "tromsø")


@frozen(kw_only=True)
class Options:
    region: str = "north"
    api_key: str = ""


@frozen(kw_only=True)
class ForecastParams:
    country: str = field(metadata=describe("Country code."))
    city: str = field(metadata=describe("City name, lowercase."))


async def cities_in(ctx: PackContext, value: str, arguments: Mapping[str, str]) -> list[str]:
    """Async, with ctx and the other parameters."""
    if value == "boom":
        raise RuntimeError(f"the city index is down (key {ctx.options.api_key})")
    return [f"{arguments.get('country', '?')}/{ctx.options.region}/{city}" for city in CITIES if city.startswith(value)]


@resource_template(
    "weather://forecasts/{country}/{city}",
    params=ForecastParams,
    name="forecast",
    description="A forecast.",
    complete={"city": cities_in, "country": ["no", "se", "dk"]},
)
async def forecast(ctx: PackContext, params: ForecastParams) -> str:
    return "sunny"


class Units(enum.Enum):
    METRIC = "metric"
    IMPERIAL = "imperial"


@frozen(kw_only=True)
class BriefArgs:
    city: str = field(metadata=describe("City."))
    tone: Literal["short", "long"] = field(default="short", metadata=describe("Tone."))
    units: Units = field(default=Units.METRIC, metadata=describe("Units."))
    day: str = field(default="1", metadata=describe("Day."))
    note: str = field(default="", metadata=describe("A note; nothing to suggest."))
    station_id: str = field(default="", metadata=describe("A station.", wire="stationId"))


class Page:
    def __init__(self) -> None:
        self.calls = 0


PAGE = Page()


def stations(value: str) -> Completions:
    """Sync, given the value alone; knows of more than it returns."""
    PAGE.calls += 1
    return Completions(values=[f"{value}{n}" for n in range(3)], total=5000, has_more=True)


@prompt(
    "weather_brief",
    arguments=BriefArgs,
    description="Brief.",
    complete={
        "city": lambda value, given: [f"{city}:{given.get('tone', '-')}" for city in CITIES if city.startswith(value)],
        "day": lambda value: [str(n) for n in range(1000)],  # more than a client may get
        "station_id": stations,  # the attribute name: the wire name is stationId
    },
)
async def brief(ctx: PackContext, args: BriefArgs) -> str:
    return f"Brief on {args.city}."


@frozen
class Nothing:
    value: str = field(metadata=describe("Anything."))


@prompt("weather_wrong", arguments=Nothing, description="Completes wrongly.", complete={"value": lambda value: [1, 2]})
async def wrong(ctx: PackContext, args: Nothing) -> str:
    return "wrong"


@resource("weather://cities", name="cities", description="The cities.")
async def cities(ctx: PackContext) -> str:
    return "\n".join(CITIES)


PACK = Pack(name="weather", options=Options, tools=[], resources=[forecast, cities], prompts=[brief, wrong])


class Tracker:
    kind = "completing"

    def create_client(self, settings: Any, context: Any) -> Any:
        raise NotImplementedError

    def default_tool_packs(self, settings: Any) -> list[str]:
        return ["weather"]


class Plugin:
    __name__ = "completions-plugin"

    @hookimpl
    def lorenz_register_tool_packs(self, register: Callable[[ToolProvider], None]) -> None:
        register(PACK)

    @hookimpl
    def lorenz_register_trackers(self, register: Callable[[Any], None]) -> None:
        register(Tracker())


def _write(directory: Path) -> Path:
    path = directory / "WORKFLOW.md"
    front = (
        "tracker:\n  kind: completing\ntools:\n  weather: {region: west, api_key: $SECRET}\n"
        "server:\n  call_log: calls.jsonl\n"
    )
    path.write_text(f"---\n{front}---\n", encoding="utf-8")
    return path


TEMPLATE = ResourceTemplateReference(type="ref/resource", uri="weather://forecasts/{country}/{city}")
BRIEF = PromptReference(type="ref/prompt", name="weather_brief")


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_kit_pack_completes_template_parameters_and_prompt_arguments(tmp_path: Path, mode: str) -> None:
    env = {"LORENZ_LOAD_PLUGINS": "", "SECRET": SECRET}
    with serve_in_thread(_write(tmp_path), cwd=tmp_path, env=env, plugins=[Plugin()]) as server:
        async with mcp.Client(server.url, mode=mode) as client:

            async def values(ref: Any, name: str, value: str, given: dict[str, str] | None = None) -> list[str]:
                return (await client.complete(ref, {"name": name, "value": value}, given)).completion.values

            assert await values(TEMPLATE, "city", "b", {"country": "no"}) == ["no/west/bergen", "no/west/bodø"]
            assert await values(TEMPLATE, "country", "S") == ["se"]  # a list of choices, by prefix
            assert await values(BRIEF, "city", "tr", {"tone": "long"}) == ["tromsø:long"]
            assert await values(BRIEF, "tone", "l") == ["long"]  # a Literal completes by itself
            assert await values(BRIEF, "units", "") == ["metric", "imperial"]  # and an Enum
            assert await values(BRIEF, "note", "x") == []  # nothing to suggest
            days = (await client.complete(BRIEF, {"name": "day", "value": ""})).completion
            assert (len(days.values), days.values[:2], days.total, days.has_more) == (100, ["0", "1"], 1000, True)
            page = (await client.complete(BRIEF, {"name": "stationId", "value": "S"})).completion
            assert (page.values, page.total, page.has_more) == (["S0", "S1", "S2"], 5000, True)

            with pytest.raises(mcp.MCPError, match=r"""no argument 'cty' \(did you mean "city"\?\)""") as unknown:
                await values(BRIEF, "cty", "")
            assert unknown.value.error.code == -32602
            with pytest.raises(mcp.MCPError, match="the city index is down") as raised:
                await values(TEMPLATE, "city", "boom")
            assert SECRET not in raised.value.error.message and raised.value.error.code == -32603
            with pytest.raises(mcp.MCPError, match=r"returned 1 \(int\) among its values, not a string"):
                await values(PromptReference(type="ref/prompt", name="weather_wrong"), "value", "")
            with pytest.raises(mcp.MCPError, match="resource weather://cities has no argument 'x'"):
                await values(ResourceTemplateReference(type="ref/resource", uri="weather://cities"), "x", "")
            with pytest.raises(mcp.MCPError, match="no prompt weather_nope"):
                await values(PromptReference(type="ref/prompt", name="weather_nope"), "city", "")
            assert await values(TEMPLATE, "country", "d") == ["dk"]  # the host still serves
    lines = [json.loads(line) for line in (tmp_path / "calls.jsonl").read_text(encoding="utf-8").splitlines()]
    completions = [(line["tool"], line["outcome"]) for line in lines if line.get("kind") == "completion"]
    assert completions[0] == ("completion/complete weather://forecasts/{country}/{city}", "success")
    assert ("completion/complete weather://forecasts/{country}/{city}", "failure") in completions
    assert SECRET not in (tmp_path / "calls.jsonl").read_text(encoding="utf-8")


async def test_completers_take_what_they_ask_for_sync_or_async(tmp_path: Path) -> None:
    from lorenz.testing import make_pack_host

    seen: list[Any] = []

    def plain(value: str) -> list[str]:
        return [value + "!"]

    async def with_ctx(ctx: PackContext, value: str) -> list[str]:
        seen.append(type(ctx).__name__)
        return [f"{ctx.options['x'] if isinstance(ctx.options, dict) and 'x' in ctx.options else 'none'}:{value}"]

    def with_all(ctx: PackContext, value: str, arguments: Mapping[str, str]) -> tuple[str, ...]:
        return (value, *sorted(arguments.values()))

    def variadic(*args: Any) -> list[str]:
        return [repr(args)]

    @frozen
    class Three:
        a: str = field(metadata=describe("A."))
        b: str = field(metadata=describe("B."))
        c: str = field(metadata=describe("C."))
        d: str = field(metadata=describe("D."))

    @prompt(
        "p_three", arguments=Three, description="P.", complete={"a": plain, "b": with_ctx, "c": with_all, "d": variadic}
    )
    async def three(ctx: PackContext, args: Three) -> str:
        return "three"

    server = make_pack_host(Pack(name="p", tools=[], prompts=[three]), base_dir=tmp_path).server()
    ref = PromptReference(type="ref/prompt", name="p_three")
    try:
        async with mcp.Client(server) as client:

            async def values(name: str) -> list[str]:
                answer = await client.complete(ref, {"name": name, "value": "v"}, {"a": "1", "c": "3"})
                return answer.completion.values

            assert await values("a") == ["v!"]
            assert await values("b") == ["none:v"] and seen == ["PackContext"]
            assert await values("c") == ["v", "1"]  # the others, not the argument being completed
            assert await values("d") == ["('v', {'a': '1', 'c': '3'})"]
    finally:
        await server._lorenz_state.aclose()  # type: ignore[attr-defined]


def test_a_bad_complete_fails_when_the_prompt_or_template_is_made() -> None:
    def handler(ctx: PackContext, args: Any) -> Any:
        raise AssertionError

    with pytest.raises(
        ValueError, match=r"""prompt p: complete names 'cty', which is not a parameter \(did you mean "city"\?\)"""
    ):
        prompt("p", arguments=BriefArgs, complete={"cty": ["x"]})(handler)
    with pytest.raises(ValueError, match=r"weather://forecasts/\{country\}/\{city\}: complete names 'town'"):
        resource_template(
            "weather://forecasts/{country}/{city}", params=ForecastParams, name="f", complete={"town": []}
        )(handler)
    with pytest.raises(ValueError, match="complete names 'city', which is not a parameter .it has: none."):
        prompt("p", complete={"city": ["x"]})(handler)
    with pytest.raises(TypeError, match=r"prompt p: city: complete must take \(value\) or \(value, arguments\)"):
        prompt("p", arguments=BriefArgs, complete={"city": lambda a, b, c: []})(handler)
    with pytest.raises(TypeError, match="prompt p: city: complete must take"):
        prompt("p", arguments=BriefArgs, complete={"city": lambda: []})(handler)
    with pytest.raises(TypeError, match="complete's choices must be strings, not 3"):
        prompt("p", arguments=BriefArgs, complete={"city": ["a", 3]})(handler)
    with pytest.raises(TypeError, match="complete must be a function or a list of strings, not str"):
        prompt("p", arguments=BriefArgs, complete={"city": "oslo"})(handler)


BAD_MODULE = """
from attrs import frozen

from lorenz import hookimpl
from lorenz.authoring import Pack, PackContext, prompt


@frozen
class Args:
    city: str


@prompt("typo_brief", arguments=Args, description="Brief.", complete={"cyty": ["oslo"]})
async def brief(ctx: PackContext, args: Args) -> str:
    return "hi"


@hookimpl
def lorenz_register_tool_packs(register):
    register(Pack(name="typo", tools=[], prompts=[brief]))
"""


def test_lint_names_a_complete_for_no_argument(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    module = tmp_path / "lorenz_typo.py"
    module.write_text(BAD_MODULE, encoding="utf-8")
    assert main(["lint", str(module)]) == 1
    wanted = (
        """prompt typo_brief: complete names 'cyty', which is not a parameter (did you mean "city"?) (it has: city)"""
    )
    assert capsys.readouterr().err == f"lorenz: cannot lint {module}: {wanted}\n"


DOC = Path(__file__).resolve().parents[1] / "docs" / "writing-a-pack.md"


async def test_the_documented_snippet_completes(tmp_path: Path) -> None:
    from lorenz.testing import make_pack_host

    section = DOC.read_text(encoding="utf-8").split("### Completions\n", 1)[1].split("\n## ", 1)[0]
    (code,) = [part.split("```", 1)[0] for part in section.split("```python\n")[1:]]
    space: dict[str, Any] = {}
    exec(compile(code, "<writing-a-pack.md>", "exec", dont_inherit=True), space)  # as a module runs it
    server = make_pack_host(space["PACK"], base_dir=tmp_path).server()
    try:
        async with mcp.Client(server) as client:
            template = ResourceTemplateReference(type="ref/resource", uri="weather://forecasts/{city}")
            found = await client.complete(template, {"name": "city", "value": "b"})
            assert found.completion.values == ["bergen", "bodø"]
            brief = PromptReference(type="ref/prompt", name="weather_brief")
            assert (await client.complete(brief, {"name": "city", "value": "O"})).completion.values == ["oslo"]
            units = await client.complete(brief, {"name": "units", "value": "i"})
            assert units.completion.values == ["imperial"]
    finally:
        await server._lorenz_state.aclose()  # type: ignore[attr-defined]


async def test_pack_complete_answers_by_ref_and_refuses_what_it_cannot_answer() -> None:
    """The ``complete`` member the host calls, without a host: by ``ref`` and argument, each
    refusal a failure with the reason the host maps to its JSON-RPC error."""
    import httpx

    from lorenz import ToolContext
    from lorenz.settings.model import Settings

    async with httpx.AsyncClient() as http:

        async def complete(ref: dict[str, str], argument: dict[str, Any], options: Any = None) -> Any:
            settings = Settings(tool_options={"weather": options or {}})
            result = await PACK.complete(ref, argument, {"country": "se"}, ToolContext(settings=settings, http=http))
            return result.result if result.success else (result.result["error"]["reason"], result.error)

        template = {"type": "ref/resource", "uri": TEMPLATE.uri}
        assert await complete(template, {"name": "city", "value": "o"}) == {"values": ["se/north/oslo"]}
        assert await complete({"type": "ref/prompt", "name": "weather_nope"}, {"name": "city", "value": ""}) == (
            "not_found",
            "Unknown prompt: weather_nope",
        )
        missing = await complete({"type": "ref/resource", "uri": "weather://nope/{x}"}, {"name": "x", "value": ""})
        assert missing == ("not_found", "Resource not found: weather://nope/{x}")
        reason, message = await complete(template, {"name": "city"})
        assert (reason, message) == (
            "invalid_arguments",
            f"resource template {TEMPLATE.uri}: the argument to complete needs a name and a value",
        )
        reason, message = await complete(template, {"name": "city", "value": "o"}, {"regoin": "x"})
        assert reason == "invalid_options" and "tools.weather" in message and "regoin" in message


def test_an_answer_is_a_list_of_at_most_100_strings() -> None:
    from lorenz.authoring.completions import MAX_VALUES, answer

    assert answer(iter(["a", "b"]), "p") == {"values": ["a", "b"]}
    assert answer(Completions(values=["a"], total=7), "p") == {"values": ["a"], "total": 7}
    bounded = answer(Completions(values=[str(n) for n in range(150)], total=120, has_more=False), "p")
    assert (len(bounded["values"]), bounded["total"], bounded["hasMore"]) == (MAX_VALUES, 150, True)
    with pytest.raises(TypeError, match="p returned str, not a list of strings"):
        answer("oslo", "p")
    with pytest.raises(TypeError, match=r"p returned None \(NoneType\) among its values"):
        answer(["a", None], "p")
