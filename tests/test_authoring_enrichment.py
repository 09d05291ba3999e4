"""Enrichment (``tool(..., enrichment=...)``, ``ctx.enrich``) and ``ctx.is_enabled`` (issue 30, items 1
and 7): what reaches an official SDK client over real HTTP, what the builder refuses when a tool is
defined, and what ``lorenz lint`` flags."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import mcp
import pytest
from attrs import field, frozen
from jsonschema import Draft202012Validator

from lorenz import ToolProvider, hookimpl
from lorenz.authoring import CallContext, ErrorContract, Pack, describe, disabled, tool
from lorenz.authoring.lint import lint_pack
from lorenz.host import serve_in_thread
from lorenz.testing import FakeTracker, make_pack_host

pytestmark = pytest.mark.anyio


@frozen(kw_only=True)
class SearchArgs:
    query: str = field(metadata=describe("Words to look for."))
    limit: int = field(default=2, metadata=describe("At most this many notes."))


@frozen(kw_only=True)
class Found:
    notes: list[str] = field(metadata=describe("Matching note titles, best first."))


@frozen(kw_only=True)
class SearchContext:
    words: list[str] = field(metadata=describe("The query split into the words matched."))


NOTES = ["Oslo trip", "Oslo budget", "Oslo museums", "Bergen rain"]


@tool(
    name="notes_search_notes",
    description="Search the notes by title words.",
    input=SearchArgs,
    output=Found,
    enrichment=SearchContext,
    errors=[ErrorContract(reason="query_refused", when="The query is refused.", recovery="Ask with other words.")],
    format=lambda found: "\n".join(f"- {title}" for title in found.notes) or "No notes.",
)
async def search_notes(ctx: CallContext, args: SearchArgs) -> Found:
    words = args.query.lower().split()
    ctx.enrich.echo(args.query.strip())
    ctx.enrich.set(words=words)
    hits = [title for title in NOTES if all(word in title.lower() for word in words)]
    ctx.enrich.total(len(hits))
    if "refused" in words:  # after enriching: a failure must drop what was set
        raise ctx.fail("query_refused")
    if not hits:
        ctx.enrich.notice(f"No notes matched {args.query!r}. Try fewer words.")
    return Found(notes=hits[: args.limit])


@frozen(kw_only=True)
class ProbeArgs:
    names: list[str] = field(metadata=describe("Tool names to ask about."))


@frozen(kw_only=True)
class Probe:
    enabled: dict[str, bool] = field(metadata=describe("Whether each tool is callable by this caller."))


@tool(name="notes_probe_tools", description="Say which tools are enabled.", input=ProbeArgs, output=Probe)
async def probe_tools(ctx: CallContext, args: ProbeArgs) -> Probe:
    return Probe(enabled={name: ctx.is_enabled(name) for name in args.names})


@frozen(kw_only=True)
class TitleArgs:
    title: str = field(metadata=describe("Note title."))


@tool(name="notes_read_note", description="Read a note.", input=TitleArgs)
async def read_note(ctx: CallContext, args: TitleArgs) -> dict[str, Any]:
    return {"title": args.title}


@tool(name="notes_delete_note", description="Delete a note.", input=TitleArgs)
async def delete_note(ctx: CallContext, args: TitleArgs) -> dict[str, Any]:
    return {"deleted": args.title}


@tool(name="notes_archive_note", description="Archive a note.", input=TitleArgs)
async def archive_note(ctx: CallContext, args: TitleArgs) -> dict[str, Any]:
    return {"archived": args.title}


PACK = Pack(
    name="notes",
    tools=[
        search_notes,
        probe_tools,
        read_note,
        archive_note,
        disabled(delete_note, reason="Deleting is off.", hint="not here"),
    ],
)

ASKED = ["notes_search_notes", "notes_read_note", "notes_delete_note", "notes_archive_note", "notes_nope"]


class Plugin:
    """Registers :data:`PACK` and a fake tracker, as an installed plugin would."""

    __name__ = "notes-plugin"

    @hookimpl
    def lorenz_register_tool_packs(self, register: Callable[[ToolProvider], None]) -> None:
        register(PACK)

    @hookimpl
    def lorenz_register_trackers(self, register: Callable[[Any], None]) -> None:
        register(FakeTracker(packs=["notes"]))


FULL, SCOPED = "full-token-value-1", "scoped-token-value-2"


@pytest.fixture
def server(tmp_path: Path) -> Any:
    front = (
        "tracker:\n  kind: lorenz-testing\nserver:\n  token: $FULL_TOKEN\n"
        '  disabled_tools: ["notes_archive_*"]\n'
        '  tokens:\n    - {token: $SCOPED_TOKEN, tools: ["notes_search_*", "notes_probe_*"], name: ci}\n'
    )
    (tmp_path / "WORKFLOW.md").write_text(f"---\n{front}---\n", encoding="utf-8")
    env = {"LORENZ_LOAD_PLUGINS": "", "FULL_TOKEN": FULL, "SCOPED_TOKEN": SCOPED, "PATH": os.environ.get("PATH", "")}
    with serve_in_thread(cwd=tmp_path, env=env, plugins=[Plugin()], reload=False) as running:
        yield running


async def _session(url: str, token: str, mode: str, work: Callable[[mcp.Client], Any]) -> Any:
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http:
        transport = mcp.client.streamable_http.streamable_http_client(url, http_client=http)
        async with mcp.Client(transport, mode=mode) as client:
            return await work(client)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_enriched_empty_result_over_http(server: Any, mode: str) -> None:
    """An empty result carries its notice, echo and total in structuredContent and in the text; the
    outputSchema lists the enrichment fields and the result validates against it."""

    async def work(client: mcp.Client) -> Any:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        return tools["notes_search_notes"], await client.call_tool("notes_search_notes", {"query": " Tromso cafe "})

    listed, result = await _session(server.url, FULL, mode, work)
    schema = listed.output_schema
    assert schema is not None
    assert {"notice", "echo", "total", "words"} <= set(schema["properties"])
    for name in ("notice", "echo", "total", "words"):
        assert name not in schema.get("required", [])
    assert result.is_error is False
    notice = "No notes matched ' Tromso cafe '. Try fewer words."
    assert result.structured_content == {
        "notes": [],
        "notice": notice,
        "echo": "Tromso cafe",
        "total": 0,
        "words": ["tromso", "cafe"],
    }
    Draft202012Validator(schema).validate(result.structured_content)
    (text,) = [block.text for block in result.content if block.type == "text"]
    assert text == f'No notes.\n\nnotice: {notice}\necho: Tromso cafe\ntotal: 0\nwords: ["tromso", "cafe"]'


async def test_total_is_the_count_before_the_limit_and_failure_drops_enrichment(server: Any) -> None:
    async def work(client: mcp.Client) -> Any:
        hits = await client.call_tool("notes_search_notes", {"query": "oslo", "limit": 1})
        refused = await client.call_tool("notes_search_notes", {"query": "oslo refused"})
        return hits, refused

    hits, refused = await _session(server.url, FULL, "auto", work)
    assert hits.structured_content == {"notes": ["Oslo trip"], "echo": "oslo", "total": 3, "words": ["oslo"]}
    assert hits.content[0].text.endswith('\n\necho: oslo\ntotal: 3\nwords: ["oslo"]')
    assert refused.is_error is True
    assert set(refused.structured_content) == {"error"}
    assert refused.structured_content["error"]["reason"] == "query_refused"
    text = refused.content[0].text
    assert "echo:" not in text and "total:" not in text and "words:" not in text


async def test_is_enabled_follows_policy_and_the_callers_token(server: Any) -> None:
    """False for a pack-disabled tool, an operator-disabled one, an unknown one, and one outside a
    scoped token's globs; true otherwise."""

    async def work(client: mcp.Client) -> Any:
        return (await client.call_tool("notes_probe_tools", {"names": ASKED})).structured_content

    full = await _session(server.url, FULL, "auto", work)
    assert full == {
        "enabled": {
            "notes_search_notes": True,
            "notes_read_note": True,
            "notes_delete_note": False,  # the pack's own disabled()
            "notes_archive_note": False,  # server.disabled_tools
            "notes_nope": False,
        }
    }
    scoped = await _session(server.url, SCOPED, "legacy", work)
    assert scoped["enabled"]["notes_search_notes"] is True
    assert scoped["enabled"]["notes_read_note"] is False  # outside the token's globs


async def test_in_process_everything_mounted_and_not_disabled_is_enabled(tmp_path: Path) -> None:
    host = make_pack_host(PACK, base_dir=tmp_path)
    result = await host.call("notes_probe_tools", {"names": ASKED})
    assert result.result == {
        "enabled": {
            "notes_search_notes": True,
            "notes_read_note": True,
            "notes_delete_note": False,
            "notes_archive_note": True,  # no server.disabled_tools here
            "notes_nope": False,
        }
    }
    outcome = await host.call_tool("notes_probe_tools", {"names": ["notes_read_note", "notes_delete_note"]})
    assert outcome.mcp.structured_content == {"enabled": {"notes_read_note": True, "notes_delete_note": False}}


# -- what the builder refuses, and what a handler cannot do ---------------------------------------


@frozen(kw_only=True)
class Counted:
    items: list[str]
    total: int


def _define(output: type, enrichment: Any) -> Any:
    async def handler(ctx: CallContext, args: TitleArgs) -> Any:
        raise NotImplementedError

    return tool(name="notes_x", description="d", input=TitleArgs, output=output, enrichment=enrichment)(handler)


def test_enrichment_must_be_disjoint_from_the_output() -> None:
    with pytest.raises(ValueError, match=r"Counted\.total clashes with a built-in enrichment field"):
        _define(Counted, True)

    @frozen
    class Clash:
        notes: list[str]

    with pytest.raises(ValueError, match=r"Found\.notes clashes with an enrichment field of the same name"):
        _define(Found, Clash)

    @frozen
    class Builtin:
        notice: str

    with pytest.raises(ValueError, match=r"enrichment field 'notice' of Builtin is a built-in"):
        _define(Found, Builtin)
    with pytest.raises(ValueError, match="has enrichment but no output class"):
        tool(name="notes_y", description="d", input=TitleArgs, enrichment=True)(read_note.handler)


def test_without_enrichment_the_output_schema_is_unchanged() -> None:
    assert "notice" not in (_define(Counted, None).output_schema or {})["properties"]
    assert set(_define(Found, True).output_schema["properties"]) == {"notes", "notice", "echo", "total", "error"}


@frozen(kw_only=True)
class Misuse:
    how: str = field(metadata=describe("Which mistake to make."))


@tool(name="notes_misuse_enrich", description="Misuse ctx.enrich.", input=Misuse, output=Found, enrichment=True)
async def misuse(ctx: CallContext, args: Misuse) -> Found:
    if args.how == "undeclared":
        ctx.enrich.set(words=["x"])
    elif args.how == "type":
        ctx.enrich.total(-1)
    return Found(notes=[])


@tool(name="notes_plain_read", description="Read without enrichment.", input=TitleArgs, output=Found)
async def plain_read(ctx: CallContext, args: TitleArgs) -> Found:
    ctx.enrich.notice("nobody declared me")
    return Found(notes=[])


async def test_undeclared_field_or_bad_value_fails_the_call(tmp_path: Path) -> None:
    host = make_pack_host(Pack(name="notes", tools=[misuse, plain_read]), base_dir=tmp_path)
    undeclared = await host.call("notes_misuse_enrich", {"how": "undeclared"})
    assert undeclared.success is False
    assert "declares no enrichment field 'words'" in (undeclared.error or "")
    bad = await host.call("notes_misuse_enrich", {"how": "type"})
    assert bad.success is False and "enrichment field 'total'" in (bad.error or "")
    none = await host.call("notes_plain_read", {"title": "x"})
    assert none.success is False and "declares no enrichment" in (none.error or "")


def test_lint_flags_undeclared_enrichment() -> None:
    diagnostics = lint_pack(Pack(name="notes", tools=[misuse, plain_read, search_notes]), contract=False)
    found = {(d.rule, d.tool) for d in diagnostics if d.rule.startswith("enrich")}
    assert found == {
        ("enrich-undeclared-field", "notes_misuse_enrich"),
        ("enrich-undeclared", "notes_plain_read"),
    }
    (field_diag,) = [d for d in diagnostics if d.rule == "enrich-undeclared-field"]
    assert "sets 'words'" in field_diag.message and "test_authoring_enrichment.py:" in field_diag.message


# -- the snippets of docs/writing-a-pack.md ---------------------------------------------------------

DOC = Path(__file__).resolve().parents[1] / "docs" / "writing-a-pack.md"


def _blocks(heading: str, language: str) -> list[str]:
    section = DOC.read_text(encoding="utf-8").split(f"### {heading}\n", 1)[1].split("\n## ", 1)[0]
    return [part.split("```", 1)[0] for part in section.split(f"```{language}\n")[1:]]


async def test_the_documented_snippets_run(tmp_path: Path) -> None:
    """The enrichment snippet runs and prints what the guide shows; the is_enabled one runs."""
    (code,) = _blocks("Enrichment: context beside the output", "python")
    (shown,) = _blocks("Enrichment: context beside the output", "text")
    space: dict[str, Any] = {}
    exec(compile(code, str(DOC), "exec"), space)
    (code,) = _blocks("Suggesting another tool: `ctx.is_enabled`", "python")
    exec(compile(code, str(DOC), "exec"), space)
    host = make_pack_host(Pack(name="weather", tools=[space["search_cities"], space["list_alerts"]]), base_dir=tmp_path)
    outcome = await host.call_tool("weather_search_cities", {"query": "paris"})
    assert outcome.mcp.content[0].text == shown.strip()
    assert outcome.mcp.structured_content is not None and outcome.mcp.structured_content["total"] == 0
    alerts = await host.call("weather_list_alerts", {"city": "Oslo"})
    assert alerts.result == {"alerts": [], "next_tools": []}  # weather_set_alert is not mounted here


async def test_the_calling_an_api_snippet_uses_its_endpoint_option() -> None:
    section = DOC.read_text(encoding="utf-8").split("## 7. Calling an API\n", 1)[1].split("\n### ", 1)[0]
    (code,) = [part.split("```", 1)[0] for part in section.split("```python\n")[1:]]
    space: dict[str, Any] = {}
    exec(compile(code, str(DOC), "exec"), space)
    seen: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        if request.url.params["city"] == "Atlantis":
            return httpx.Response(404)
        return httpx.Response(200, json={"summary": "sunny"})

    options = {"weather": {"endpoint": "http://staging.test/v2"}}
    host = make_pack_host(space["weather"], options=options, transport=httpx.MockTransport(answer))
    done = await host.call("weather_get_forecast", {"city": "Oslo"})
    missing = await host.call("weather_get_forecast", {"city": "Atlantis"})
    assert done.result == {"city": "Oslo", "summary": "sunny"}
    assert seen[0] == "http://staging.test/v2/forecast?city=Oslo"
    assert missing.success is False and missing.result["error"]["reason"] == "city_not_found"
