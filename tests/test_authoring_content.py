"""Rich content (issue 30, item 4): a typed tool's ``format()`` returning content blocks reaches an
official SDK client over real HTTP as ``ImageContent``, ``ResourceLink``... within
``server.max_result_bytes``; enrichment follows the last text block; the parity lint reads the text
blocks only."""

from __future__ import annotations

import base64
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import mcp
import pytest
from attrs import field, frozen

from lorenz import ToolProvider, hookimpl
from lorenz.authoring import (
    CallContext,
    Pack,
    audio,
    describe,
    embedded_resource,
    image,
    resource_link,
    text,
    tool,
)
from lorenz.authoring.lint import lint_pack
from lorenz.host import serve_in_thread
from lorenz.testing import FakeTracker, make_pack_host

pytestmark = pytest.mark.anyio

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))  # not a picture, but bytes that must arrive intact


@frozen(kw_only=True)
class ChartArgs:
    city: str = field(metadata=describe("City to chart."))
    size: int = field(default=1, metadata=describe("Repeat the image bytes this many times."))


@frozen(kw_only=True)
class Chart:
    city: str = field(metadata=describe("City charted."))
    points: int = field(metadata=describe("Points plotted."))


def _chart_blocks(chart: Chart) -> list[Any]:
    return [
        text(f"Chart of {chart.city}: {chart.points} points."),
        image(PNG * chart.points, "image/png"),
        resource_link(f"charts://{chart.city}", f"{chart.city}.png", mime_type="image/png", size=len(PNG)),
        embedded_resource(f"charts://{chart.city}/data.csv", text="x,y\n1,2\n", mime_type="text/csv"),
        audio(b"RIFF0000WAVE", "audio/wav"),
    ]


@tool(
    name="charts_draw_chart",
    description="Draw a chart of a city.",
    input=ChartArgs,
    output=Chart,
    enrichment=True,
    format=_chart_blocks,
)
async def draw_chart(ctx: CallContext, args: ChartArgs) -> Chart:
    ctx.enrich.echo(args.city)
    return Chart(city=args.city, points=args.size)


PACK = Pack(name="charts", tools=[draw_chart])


class Plugin:
    __name__ = "charts-plugin"

    @hookimpl
    def lorenz_register_tool_packs(self, register: Callable[[ToolProvider], None]) -> None:
        register(PACK)

    @hookimpl
    def lorenz_register_trackers(self, register: Callable[[Any], None]) -> None:
        register(FakeTracker(packs=["charts"]))


@pytest.fixture
def server(tmp_path: Path) -> Any:
    front = "tracker:\n  kind: lorenz-testing\nserver:\n  max_result_bytes: 20000\n"
    (tmp_path / "WORKFLOW.md").write_text(f"---\n{front}---\n", encoding="utf-8")
    env = {"LORENZ_LOAD_PLUGINS": "", "PATH": os.environ.get("PATH", "")}
    with serve_in_thread(cwd=tmp_path, env=env, plugins=[Plugin()], reload=False) as running:
        yield running


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_blocks_reach_the_client_over_http(server: Any, mode: str) -> None:
    async with mcp.Client(server.url, mode=mode) as client:
        result = await client.call_tool("charts_draw_chart", {"city": "Oslo"})
    assert result.is_error is False
    assert result.structured_content == {"city": "Oslo", "points": 1, "echo": "Oslo"}
    first, picture, link, embedded, sound = result.content
    assert isinstance(first, mcp.types.TextContent)
    assert first.text == "Chart of Oslo: 1 points.\n\necho: Oslo"  # enrichment after the last text block
    assert isinstance(picture, mcp.types.ImageContent)
    assert picture.mime_type == "image/png"
    assert base64.b64decode(picture.data) == PNG
    assert isinstance(link, mcp.types.ResourceLink)
    assert (str(link.uri), link.name, link.mime_type, link.size) == ("charts://Oslo", "Oslo.png", "image/png", 264)
    assert isinstance(embedded, mcp.types.EmbeddedResource)
    assert isinstance(embedded.resource, mcp.types.TextResourceContents)
    assert (str(embedded.resource.uri), embedded.resource.text) == ("charts://Oslo/data.csv", "x,y\n1,2\n")
    assert isinstance(sound, mcp.types.AudioContent)
    assert base64.b64decode(sound.data) == b"RIFF0000WAVE"


async def test_an_oversize_image_is_refused(server: Any) -> None:
    async with mcp.Client(server.url) as client:
        result = await client.call_tool("charts_draw_chart", {"city": "Oslo", "size": 100})  # ~35 kB of base64
    assert result.is_error is True
    assert [block.type for block in result.content] == ["text"]
    assert result.structured_content["error"]["reason"] == "result_too_large"
    assert "server.max_result_bytes" in result.content[0].text


async def test_in_process_text_is_the_text_blocks(tmp_path: Path) -> None:
    host = make_pack_host(PACK, base_dir=tmp_path)
    outcome = await host.call_tool("charts_draw_chart", {"city": "Bergen", "size": 2})
    assert [block.type for block in outcome.mcp.content] == ["text", "image", "resource_link", "resource", "audio"]
    assert outcome.mcp.content[0].text == "Chart of Bergen: 2 points.\n\necho: Bergen"


def test_blocks_are_checked_when_made() -> None:
    with pytest.raises(ValueError, match="image/"):
        image(PNG, "text/plain")
    with pytest.raises(TypeError, match="bytes"):
        image("not bytes", "image/png")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="exactly one"):
        embedded_resource("file:///x", text="a", blob=b"b")
    blob = embedded_resource("file:///x.bin", blob=b"\x00\x01", mime_type="application/octet-stream")
    assert blob.wire() == {
        "type": "resource",
        "resource": {"uri": "file:///x.bin", "mimeType": "application/octet-stream", "blob": "AAE="},
    }


async def test_a_format_returning_something_else_is_an_internal_error(tmp_path: Path) -> None:
    @tool(name="charts_bad", description="d", input=ChartArgs, output=Chart, format=lambda c: [42])  # type: ignore[list-item]
    async def bad(ctx: CallContext, args: ChartArgs) -> Chart:
        return Chart(city=args.city, points=1)

    host = make_pack_host(Pack(name="charts", tools=[bad]), base_dir=tmp_path)
    result = await host.call("charts_bad", {"city": "Oslo"})
    assert result.success is False
    assert result.result["error"]["reason"] == "internal_error"


# -- the parity lint reads the text blocks -------------------------------------------------------


def _lint(format: Callable[[Chart], Any]) -> list[Any]:
    @tool(name="charts_draw_chart", description="Draw a chart.", input=ChartArgs, output=Chart, format=format)
    async def handler(ctx: CallContext, args: ChartArgs) -> Chart:
        raise NotImplementedError

    return [d for d in lint_pack(Pack(name="charts", tools=[handler])) if d.rule == "format-parity"]


def test_parity_passes_when_the_text_blocks_show_every_field() -> None:
    assert _lint(_chart_blocks) == []


def test_parity_flags_a_field_only_outside_the_text_blocks() -> None:
    def blocks(chart: Chart) -> list[Any]:
        # The city is in a link and an embedded resource, which a text-only client never shows.
        return [
            text(f"{chart.points} points."),
            resource_link(f"charts://{chart.city}", chart.city),
            embedded_resource("charts://data", text=chart.city),
        ]

    (diagnostic,) = _lint(blocks)
    assert diagnostic.severity == "error"
    assert "city" in diagnostic.message and "text blocks" in diagnostic.message


# -- the snippet of docs/writing-a-pack.md ----------------------------------------------------------

DOC = Path(__file__).resolve().parents[1] / "docs" / "writing-a-pack.md"


def _snippet(heading: str) -> str:
    section = DOC.read_text(encoding="utf-8").split(f"### {heading}\n", 1)[1].split("\n### ", 1)[0]
    (code,) = [part.split("```", 1)[0] for part in section.split("```python\n")[1:]]
    return code


async def test_the_documented_snippet_runs_and_passes_the_lint(tmp_path: Path) -> None:
    space: dict[str, Any] = {}
    exec(compile(_snippet("Rich content: images, audio, links"), "<writing-a-pack.md>", "exec"), space)
    pack = Pack(name="weather", tools=[space["chart_forecast"]])
    assert [d for d in lint_pack(pack) if d.severity == "error"] == []
    outcome = await make_pack_host(pack, base_dir=tmp_path).call_tool("weather_chart_forecast", {"city": "Oslo"})
    assert [block.type for block in outcome.mcp.content] == ["text", "image", "resource_link", "resource"]
    assert base64.b64decode(outcome.mcp.content[1].data) == space["PNG"]
