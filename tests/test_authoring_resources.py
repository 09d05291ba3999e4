"""Packs' own resources and prompts (issue 30, item 6), through the official SDK client over real
HTTP (both eras) and stdio: listed and read when mounted, template parameters and prompt
arguments structured strictly with errors naming the key, absent for a scoped token that may not
call any of the pack's tools and for an unmounted pack, contained like tool calls, in the call log."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import httpx
import mcp
import pytest
from attrs import field, frozen
from mcp import StdioServerParameters
from mcp_types import BlobResourceContents, TextResourceContents

from lorenz import ToolProvider, hookimpl
from lorenz.authoring import (
    CallContext,
    Pack,
    PackContext,
    describe,
    embedded_resource,
    message,
    not_found,
    prompt,
    resource,
    resource_template,
    tool,
)
from lorenz.host import serve_in_thread
from lorenz.mounting.model import MountError

pytestmark = pytest.mark.anyio

SECRET = "sekrit-value-42"


@frozen
class Empty:
    pass


@tool(name="board_list_issues", description="List the issues.", input=Empty)
async def list_issues(ctx: CallContext, args: Empty) -> dict[str, Any]:
    return {"issues": [1, 2]}


@resource("board://readme", name="readme", mime_type="text/markdown", description="How the board works.")
async def readme(ctx: PackContext) -> str:
    return f"# Board\n\nOwner: {ctx.options.owner}\n"


@resource("board://logo", name="logo", mime_type="image/png", description="The board's logo.")
async def logo(ctx: PackContext) -> bytes:
    return b"\x89PNG\r\n"


@frozen(kw_only=True)
class IssueParams:
    issue_id: int = field(metadata=describe("The issue's number.", minimum=1))


@resource_template("board://issues/{issue_id}", params=IssueParams, name="issue", description="One issue as JSON.")
async def issue(ctx: PackContext, params: IssueParams) -> Any:
    if params.issue_id == 404:
        raise not_found(f"No issue {params.issue_id}.")
    body = json.dumps({"id": params.issue_id, "title": f"Issue {params.issue_id}"})
    return embedded_resource(f"board://issues/{params.issue_id}", text=body, mime_type="application/json")


@resource("board://broken", name="broken", description="Always raises.")
async def broken(ctx: PackContext) -> str:
    raise RuntimeError(f"the backend said no (token {SECRET})")


@resource("board://slow", name="slow", description="Never answers.")
async def slow(ctx: PackContext) -> str:
    await asyncio.sleep(3600)
    return "late"


@resource("board://huge", name="huge", description="Too large to send.")
async def huge(ctx: PackContext) -> str:
    return "x" * 200_000


@frozen(kw_only=True)
class TriageArgs:
    issue_id: int = field(metadata=describe("The issue to triage."))
    tone: Literal["short", "long"] = field(default="short", metadata=describe("How much to write."))


@prompt("board_triage", arguments=TriageArgs, description="Triage one issue.")
async def triage(ctx: PackContext, args: TriageArgs) -> list[Any]:
    return [
        message("user", f"Triage issue {args.issue_id}, {args.tone}ly, for {ctx.options.owner}."),
        message("assistant", "Reading board://issues first."),
    ]


@frozen(kw_only=True)
class BoardOptions:
    owner: str = "nobody"
    api_key: str = ""


BOARD = Pack(
    name="board",
    options=BoardOptions,
    tools=[list_issues],
    resources=[readme, logo, issue, broken, slow, huge],
    prompts=[triage],
)


@tool(name="other_ping", description="Ping.", input=Empty)
async def ping(ctx: CallContext, args: Empty) -> dict[str, Any]:
    return {"pong": True}


@resource("other://status", name="status", description="Other's status.")
async def status(ctx: PackContext) -> str:
    return "ok"


@prompt("other_hello", description="Say hello.")
async def hello(ctx: PackContext, args: None) -> str:
    return "Hello."


OTHER = Pack(name="other", tools=[ping], resources=[status], prompts=[hello])


@resource("spare://thing", name="thing", description="Never mounted.")
async def thing(ctx: PackContext) -> str:
    return "spare"


SPARE = Pack(name="spare", tools=[], resources=[thing])


class Tracker:
    kind = "offers"

    def create_client(self, settings: Any, context: Any) -> Any:
        raise NotImplementedError

    def default_tool_packs(self, settings: Any) -> list[str]:
        return ["board", "other"]


class Plugin:
    __name__ = "offers-plugin"

    @hookimpl
    def lorenz_register_tool_packs(self, register: Callable[[ToolProvider], None]) -> None:
        for pack in (BOARD, OTHER, SPARE):
            register(pack)

    @hookimpl
    def lorenz_register_trackers(self, register: Callable[[Any], None]) -> None:
        register(Tracker())


ENV = {"LORENZ_LOAD_PLUGINS": "", "FULL": "full-token-value-1", "CI": "ci-token-value-22", "SECRET": SECRET}


def write(directory: Path, server: str = "") -> Path:
    path = directory / "WORKFLOW.md"
    front = (
        "tracker:\n  kind: offers\ntools:\n  board: {owner: ada, api_key: $SECRET}\n"
        "server:\n  tool_timeout_seconds: 1\n  max_result_bytes: 100000\n  call_log: calls.jsonl\n" + server
    )
    path.write_text(f"---\n{front}---\n", encoding="utf-8")
    return path


def client_for(url: str, token: str | None, mode: str = "auto") -> mcp.Client:
    if token is None:
        return mcp.Client(url, mode=mode)
    http = httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"})
    return mcp.Client(mcp.client.streamable_http.streamable_http_client(url, http_client=http), mode=mode)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_resources_templates_and_prompts_are_listed_read_and_rendered(tmp_path: Path, mode: str) -> None:
    with serve_in_thread(write(tmp_path), cwd=tmp_path, env=ENV, plugins=[Plugin()]) as server:
        async with mcp.Client(server.url, mode=mode) as client:
            uris = [str(item.uri) for item in (await client.list_resources()).resources]
            assert uris == [
                "board://readme",
                "board://logo",
                "board://broken",
                "board://slow",
                "board://huge",
                "other://status",
            ]  # spare is installed but not mounted
            templates = (await client.list_resource_templates()).resource_templates
            assert [(t.uri_template, t.name, t.description) for t in templates] == [
                ("board://issues/{issue_id}", "issue", "One issue as JSON.")
            ]
            (text,) = (await client.read_resource("board://readme")).contents
            assert isinstance(text, TextResourceContents)
            assert (text.text, text.mime_type) == ("# Board\n\nOwner: ada\n", "text/markdown")
            (blob,) = (await client.read_resource("board://logo")).contents
            assert isinstance(blob, BlobResourceContents) and blob.blob == "iVBORw0K"
            (one,) = (await client.read_resource("board://issues/42")).contents
            assert isinstance(one, TextResourceContents) and one.mime_type == "application/json"
            assert json.loads(one.text) == {"id": 42, "title": "Issue 42"}
            with pytest.raises(mcp.MCPError, match=r"issue_id: must be an integer") as bad:
                await client.read_resource("board://issues/forty-two")
            assert bad.value.error.code == -32602
            with pytest.raises(mcp.MCPError, match=r"issue_id: must be at least 1"):
                await client.read_resource("board://issues/0")
            with pytest.raises(mcp.MCPError, match=r"No issue 404\.") as missing:
                await client.read_resource("board://issues/404")
            assert missing.value.error.code == -32002
            with pytest.raises(mcp.MCPError, match="Resource not found: spare://thing"):
                await client.read_resource("spare://thing")

            prompts = (await client.list_prompts()).prompts
            assert [p.name for p in prompts] == ["board_triage", "other_hello"]
            arguments = [(a.name, a.required, a.description) for a in prompts[0].arguments or ()]
            assert arguments == [("issue_id", True, "The issue to triage."), ("tone", False, "How much to write.")]
            rendered = await client.get_prompt("board_triage", {"issue_id": "7", "tone": "long"})
            assert rendered.description == "Triage one issue."
            texts = [(m.role, getattr(m.content, "text", None)) for m in rendered.messages]
            assert texts == [
                ("user", "Triage issue 7, longly, for ada."),
                ("assistant", "Reading board://issues first."),
            ]
            with pytest.raises(mcp.MCPError, match=r"invalid arguments for prompt board_triage: issue_id: required"):
                await client.get_prompt("board_triage", {})
            with pytest.raises(mcp.MCPError, match=r"tone: must be one of") as invalid:
                await client.get_prompt("board_triage", {"issue_id": "7", "tone": "loud"})
            assert invalid.value.error.code == -32602
            assert (await client.get_prompt("other_hello")).messages[0].content.text == "Hello."  # type: ignore[union-attr]


async def test_a_raising_a_hanging_or_a_huge_resource_does_not_stop_the_host(tmp_path: Path) -> None:
    with serve_in_thread(write(tmp_path), cwd=tmp_path, env=ENV, plugins=[Plugin()]) as server:
        async with mcp.Client(server.url) as client:
            with pytest.raises(mcp.MCPError, match="the backend said no") as raised:
                await client.read_resource("board://broken")
            assert SECRET not in raised.value.error.message
            with pytest.raises(mcp.MCPError, match=r"did not finish within 1 s \(server.tool_timeout_seconds\)"):
                await client.read_resource("board://slow")
            with pytest.raises(mcp.MCPError, match=r"server.max_result_bytes"):
                await client.read_resource("board://huge")
            (text,) = (await client.read_resource("board://readme")).contents
            assert isinstance(text, TextResourceContents) and text.text.startswith("# Board")
            assert not (await client.call_tool("board_list_issues", {})).is_error
    lines = [json.loads(line) for line in (tmp_path / "calls.jsonl").read_text(encoding="utf-8").splitlines()]
    reads = [(line["tool"], line["pack"], line["kind"], line["outcome"]) for line in lines if "kind" in line]
    assert reads == [
        ("resources/read board://broken", "board", "resource", "failure"),
        ("resources/read board://slow", "board", "resource", "timeout"),
        ("resources/read board://huge", "board", "resource", "rejected"),
        ("resources/read board://readme", "board", "resource", "success"),
    ]
    assert [line["tool"] for line in lines if "kind" not in line] == ["board_list_issues"]
    assert SECRET not in (tmp_path / "calls.jsonl").read_text(encoding="utf-8")


async def test_a_scoped_token_sees_only_the_packs_it_may_call(tmp_path: Path) -> None:
    tokens = '  token: $FULL\n  disabled_tools: ["other_*"]\n'
    tokens += '  tokens:\n    - {token: $CI, tools: ["other_*"], name: ci}\n'
    with serve_in_thread(write(tmp_path, tokens), cwd=tmp_path, env=ENV, plugins=[Plugin()]) as server:
        async with client_for(server.url, "ci-token-value-22") as client:
            # every other tool is switched off: the token still sees the pack it is scoped to
            assert [str(r.uri) for r in (await client.list_resources()).resources] == ["other://status"]
            assert (await client.list_resource_templates()).resource_templates == []
            assert [p.name for p in (await client.list_prompts()).prompts] == ["other_hello"]
            with pytest.raises(mcp.MCPError, match="Resource not found: board://readme"):
                await client.read_resource("board://readme")
            with pytest.raises(mcp.MCPError, match="Resource not found: board://issues/1"):
                await client.read_resource("board://issues/1")
            with pytest.raises(mcp.MCPError, match="Unknown prompt: board_triage"):
                await client.get_prompt("board_triage", {"issue_id": "1"})
            (status_text,) = (await client.read_resource("other://status")).contents
            assert isinstance(status_text, TextResourceContents) and status_text.text == "ok"
        async with client_for(server.url, "full-token-value-1") as client:
            assert len((await client.list_resources()).resources) == 6
            assert len((await client.list_prompts()).prompts) == 2


def test_the_landing_page_lists_each_packs_resources_and_prompts(tmp_path: Path) -> None:
    """Issue 44: under each pack, its resources (templates marked), and its prompts with their
    arguments (optional ones marked ?), as the caller's token may see them; long lines wrap."""
    tokens = '  token: $FULL\n  tokens:\n    - {token: $CI, tools: ["other_*"], name: ci}\n'
    with serve_in_thread(write(tmp_path, tokens), cwd=tmp_path, env=ENV, plugins=[Plugin()]) as server:

        def page(token: str) -> str:
            response = httpx.get(server.base_url + "/", headers={"Authorization": f"Bearer {token}"}, timeout=10)
            assert response.status_code == 200
            return response.text

        full, scoped = page("full-token-value-1"), page("ci-token-value-22")
    board = full[full.index('<h3 id="pack-board">') : full.index('<h3 id="pack-other">')]
    assert "<li><code>board://readme</code> — How the board works.</li>" in board
    assert "<li><code>board://issues/{issue_id}</code> (template) — One issue as JSON.</li>" in board
    triage = '<li><code>board_triage</code> <span class="muted">(issue_id, tone?)</span> — Triage one issue.</li>'
    assert triage in board
    assert "<li><code>other://status</code> — Other&#x27;s status.</li>" in full[full.index('<h3 id="pack-other">') :]
    assert "board://readme" not in scoped and "board_triage" not in scoped
    assert "<li><code>other_hello</code> — Say hello.</li>" in scoped
    assert "white-space:pre-wrap" in full and "overflow-x:auto" not in full


def test_a_uri_or_prompt_two_packs_declare_fails_at_mount(tmp_path: Path) -> None:
    clash = Pack(name="clash", tools=[], resources=[status])

    class Clashing:
        __name__ = "clash-plugin"

        @hookimpl
        def lorenz_register_tool_packs(self, register: Callable[[ToolProvider], None]) -> None:
            register(clash)

    path = write(tmp_path)
    path.write_text(path.read_text().replace("tools:\n", "tools:\n  clash: {}\n"), encoding="utf-8")
    with (
        pytest.raises(MountError, match='resource URI collision: other://status is declared by both the "other"'),
        serve_in_thread(path, cwd=tmp_path, env=ENV, plugins=[Plugin(), Clashing()]),
    ):
        pass


def test_bad_definitions_fail_when_made() -> None:
    with pytest.raises(ValueError, match=r"\{id\} is not a field of IssueParams; IssueParams.issue_id is not in"):
        resource_template("board://issues/{id}", params=IssueParams, name="x")(issue.handler)
    with pytest.raises(ValueError, match="has {variables}; use resource_template"):
        resource("board://issues/{issue_id}", name="x")(readme.handler)
    with pytest.raises(ValueError, match="declares the resource URI.s. board://readme more than once"):
        Pack(name="dup", tools=[], resources=[readme, readme])

    @frozen
    class Nested:
        tags: list[str]

    with pytest.raises(ValueError, match="Nested.tags must be a str, int, float or bool"):
        prompt("p", arguments=Nested)(triage.handler)


@pytest.mark.slow
async def test_over_stdio(tmp_path: Path) -> None:
    (tmp_path / "lorenz_offerpack.py").write_text(STDIO_PACK, encoding="utf-8")
    (tmp_path / "WORKFLOW.md").write_text("---\ntracker:\n  kind: offers\n---\n", encoding="utf-8")
    env: dict[str, Any] = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    env.update(LORENZ_LOAD_PLUGINS="", PYTHONPATH=os.pathsep.join([str(tmp_path), env.get("PYTHONPATH", "")]))
    args = ["-m", "lorenz", "-p", "lorenz_offerpack", "serve", "--stdio"]
    params = StdioServerParameters(command=sys.executable, args=args, env=env, cwd=tmp_path)
    async with mcp.Client(params) as client:
        templates = (await client.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["notes://{name}"]
        (contents,) = (await client.read_resource("notes://todo")).contents
        assert isinstance(contents, TextResourceContents) and contents.text == "notes of todo"
        rendered = await client.get_prompt("notes_summarize", {"name": "todo"})
        assert rendered.messages[0].content.text == "Summarize notes://todo."  # type: ignore[union-attr]
        with pytest.raises(mcp.MCPError, match="name: required"):
            await client.get_prompt("notes_summarize", {})


STDIO_PACK = """
from attrs import frozen

from lorenz import hookimpl
from lorenz.authoring import Pack, PackContext, prompt, resource_template


@frozen
class Name:
    name: str


@resource_template("notes://{name}", params=Name, name="note", description="One note.")
async def note(ctx: PackContext, params: Name) -> str:
    return f"notes of {params.name}"


@prompt("notes_summarize", arguments=Name, description="Summarize a note.")
async def summarize(ctx: PackContext, args: Name) -> str:
    return f"Summarize notes://{args.name}."


class Tracker:
    kind = "offers"

    def create_client(self, settings, context):
        raise NotImplementedError

    def default_tool_packs(self, settings):
        return ["notes"]


@hookimpl
def lorenz_register_tool_packs(register):
    register(Pack(name="notes", tools=[], resources=[note], prompts=[summarize]))


@hookimpl
def lorenz_register_trackers(register):
    register(Tracker())
"""


class PlainOffers:
    """A plain provider with every mistake the lint looks for in resources and prompts."""

    name = "plain"

    def tool_specs(self, settings: Any) -> list[Any]:
        return []

    async def execute_tool(self, name: str, input: Any, context: Any) -> Any:
        from lorenz import unsupported_tool_failure

        return unsupported_tool_failure(name, [])

    def resource_specs(self, settings: Any) -> list[Any]:
        from lorenz import ResourceSpec

        return [
            ResourceSpec(uri="plain://a", name="a", description="A."),
            ResourceSpec(uri="plain://a", name="again", description="Again."),
            ResourceSpec(uri="no-scheme", name="b", description="B."),
            ResourceSpec(uri="plain://{id}", name="c", description="C."),
            ResourceSpec(uri="plain://d", name="d"),
        ]

    def prompt_specs(self, settings: Any) -> list[Any]:
        from lorenz import PromptArgument, PromptSpec

        return [PromptSpec(name="plain_p", arguments=(PromptArgument(name="x"),))]


def test_lint_flags_resource_and_prompt_mistakes() -> None:
    from lorenz.authoring.lint import lint_pack

    found = [(d.rule, d.severity, d.message) for d in lint_pack(PlainOffers()) if d.rule.startswith(("offer", "res"))]
    assert found == [
        ("offer-unique", "error", "resource plain://a twice"),
        ("resource-uri", "error", "resource 'no-scheme' is not a URI (no scheme, like 'board://')"),
        ("resource-uri", "error", "resource plain://{id} has {variables} but is not a template"),
        ("offer-description", "warning", "resource plain://d has no description"),
        ("offer-description", "warning", "prompt plain_p has no description"),
        ("offer-description", "warning", "prompt plain_p: argument x has no description"),
    ]
    assert [d for d in lint_pack(BOARD, contract=False) if d.rule.startswith(("offer", "res"))] == []


DOC = Path(__file__).resolve().parents[1] / "docs" / "writing-a-pack.md"


async def test_the_documented_snippet_serves_its_resources_and_prompt(tmp_path: Path) -> None:
    from lorenz.testing import make_pack_host

    section = DOC.read_text(encoding="utf-8").split("### Resources and prompts\n", 1)[1].split("\n### ", 1)[0]
    (code,) = [part.split("```", 1)[0] for part in section.split("```python\n")[1:]]
    space: dict[str, Any] = {}
    exec(compile(code, "<writing-a-pack.md>", "exec"), space)
    server = make_pack_host(space["PACK"], base_dir=tmp_path).server()
    try:
        async with mcp.Client(server) as client:
            assert [str(r.uri) for r in (await client.list_resources()).resources] == ["weather://cities"]
            (listed,) = (await client.read_resource("weather://cities")).contents
            assert isinstance(listed, TextResourceContents) and listed.text == "bergen\noslo"
            (one,) = (await client.read_resource("weather://forecasts/oslo")).contents
            assert isinstance(one, TextResourceContents) and json.loads(one.text) == {"city": "oslo", "high": 4.5}
            pattern = r"forecasts/\{city\}: city: must match the pattern \^\[a-z\]\+\$"
            with pytest.raises(mcp.MCPError, match=pattern) as bad:
                await client.read_resource("weather://forecasts/Oslo")
            assert bad.value.error.code == -32602
            with pytest.raises(mcp.MCPError, match="No forecast for 'paris'"):
                await client.read_resource("weather://forecasts/paris")
            rendered = await client.get_prompt("weather_brief", {"city": "oslo", "days": "2"})
            assert rendered.messages[0].content.text == "Plan around the weather in oslo for 2 day(s)."  # type: ignore[union-attr]
            too_far = "invalid arguments for prompt weather_brief: days: must be at most 7"
            with pytest.raises(mcp.MCPError, match=too_far):
                await client.get_prompt("weather_brief", {"city": "oslo", "days": "9"})
    finally:
        await server._lorenz_state.aclose()  # type: ignore[attr-defined]
