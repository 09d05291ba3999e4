"""One pack mounted under several ``tools:`` keys (``provider:``), with ``prefix:`` and ``rename:``:
each instance answers with its own options, over the official SDK client on real HTTP, under the
host's token scopes, disabled tools, call log and isolation."""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import httpx
import mcp
import pytest

from lorenz.host import serve_in_thread
from lorenz.mounting.model import MountError
from lorenz.mounting.skills import mounted_skills
from lorenz.settings import ConfigError
from lorenz.testing import make_pack_host
from lorenz.workspace import open_workspace

pytestmark = pytest.mark.anyio

#: A typed pack written for one mount, as any pack author writes it: it reads its options from
#: ``tools.greeter`` and knows nothing of instances.
PACK_SOURCE = """
import os

from attrs import field, frozen

from lorenz import hookimpl
from lorenz.authoring import CallContext, Pack, describe, disabled, tool


@frozen(kw_only=True)
class Who:
    who: str = field(metadata=describe("Whom to greet."))


@frozen(kw_only=True)
class Options:
    greeting: str = "hello"
    pings: bool = True


@tool(name="greeter_greet", description="Greet someone.", input=Who)
async def greet(ctx: CallContext, args: Who) -> dict:
    text = f"{ctx.options.greeting}, {args.who}"
    return {"text": text, "pid": os.getpid(), "can_ping": ctx.is_enabled("greeter_ping")}


@frozen(kw_only=True)
class Nothing:
    pass


@tool(name="greeter_ping", description="Answer pong.", input=Nothing)
async def ping(ctx: CallContext, args: Nothing) -> dict:
    return {"pong": ctx.options.greeting}


SKILLS = os.path.join(os.path.dirname(os.path.realpath(__file__)), "greeter_skills", "greeting")

PACK = Pack(
    name="greeter",
    options=Options,
    skills=(SKILLS,),
    tools=[greet, disabled(ping, unless=lambda options: options.pings, reason="pings are off")],
)


@hookimpl
def lorenz_register_tool_packs(register):
    register(PACK)
"""

TWO_INSTANCES = {
    "en": {"provider": "greeter", "greeting": "hello", "prefix": "en_"},
    "fr": {"provider": "greeter", "greeting": "bonjour", "prefix": "fr_"},
}


@pytest.fixture
def greeter(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """The pack as an importable module (an isolated pack's process imports it by name)."""
    root = tmp_path_factory.mktemp("greeter-site")
    (root / "greeter_pack.py").write_text(PACK_SOURCE, encoding="utf-8")
    skill = root / "greeter_skills" / "greeting"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: greeting\ndescription: How to greet.\n---\nSay hello.\n")
    monkeypatch.syspath_prepend(str(root))
    sys.modules.pop("greeter_pack", None)
    module = importlib.import_module("greeter_pack")
    yield module
    sys.modules.pop("greeter_pack", None)


def _host(greeter: ModuleType, tools: dict[str, Any]) -> Any:
    return make_pack_host(plugins=[greeter], config={"tools": tools})


# -- mounting --------------------------------------------------------------------------------------


async def test_one_pack_mounted_twice_answers_with_each_instances_options(greeter: ModuleType) -> None:
    host = _host(greeter, TWO_INSTANCES)
    assert host.tool_names() == ["en_greeter_greet", "en_greeter_ping", "fr_greeter_greet", "fr_greeter_ping"]
    assert "provider" not in host.settings.tool_options["en"] and "prefix" not in host.settings.tool_options["fr"]
    en = (await host.call_tool("en_greeter_greet", {"who": "Ada"})).result.result
    fr = (await host.call_tool("fr_greeter_greet", {"who": "Ada"})).result.result
    assert en["text"] == "hello, Ada" and fr["text"] == "bonjour, Ada"
    # the pack asks about its own name; the host answers for the instance's served one
    assert en["can_ping"] is True
    assert (await host.call_tool("fr_greeter_ping", {})).result.result == {"pong": "bonjour"}
    assert host.workspace.tool_owners()["fr_greeter_ping"] == "fr"
    # its skills describe the pack, not an instance: served once
    assert [skill.name for skill in mounted_skills(host.workspace.packs())] == ["greeting"]


async def test_rename_and_a_pack_option_disabling_a_renamed_tool(greeter: ModuleType) -> None:
    tools = {"greeter": {"rename": {"greeter_greet": "say_hi"}, "prefix": "g_", "pings": False}}
    host = _host(greeter, tools)
    assert host.tool_names() == ["say_hi"]  # greeter_ping is disabled by the pack's own option
    assert (await host.call_tool("say_hi", {"who": "Bo"})).result.result["text"] == "hello, Bo"
    off = host.workspace.mounted.disabled["g_greeter_ping"]
    assert off.pack == "greeter" and off.reason == "pings are off"


def test_two_instances_without_a_prefix_clash_and_are_told_how_to_fix_it(greeter: ModuleType) -> None:
    tools = {"en": {"provider": "greeter"}, "fr": {"provider": "greeter", "greeting": "salut"}}
    with pytest.raises(MountError) as caught:
        _host(greeter, tools)
    message = str(caught.value)
    assert message.startswith('tool name collision: greeter_greet is declared by both the "en" and "fr" packs')
    assert '(both are instances of the "greeter" pack)' in message
    assert "prefix:" in message and "rename:" in message and "tools: {fr: {prefix: fr_}}" in message


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ({"provider": "greeterr"}, 'tools.x.provider: unsupported tool pack: greeterr (did you mean "greeter"?)'),
        ({"provider": 3}, "tools.x.provider must be the name of an installed tool pack"),
        ({"provider": "greeter", "prefix": "a b"}, "tools.x.prefix must be letters, digits"),
        ({"provider": "greeter", "rename": ["a"]}, "tools.x.rename must map a tool's name"),
        ({"provider": "greeter", "rename": {"greeter_greet": "no spaces"}}, "tools.x.rename.greeter_greet:"),
        (
            {"provider": "greeter", "rename": {"greeter_wave": "wave"}},
            'tools.x.rename: the "greeter" pack has no tool greeter_wave (its tools: greeter_greet, greeter_ping)',
        ),
        ({"provider": "greeter", "greting": "hi"}, 'tools.x: Unrecognized key: "greting"'),
    ],
)
def test_host_keys_are_checked_with_errors_naming_the_key(
    greeter: ModuleType, entry: dict[str, Any], expected: str
) -> None:
    with pytest.raises((ConfigError, ValueError)) as caught:
        _host(greeter, {"x": entry})
    assert expected in str(caught.value)
    assert "tools.greeter" not in str(caught.value)  # the pack's message names the instance's key


def test_check_settings_problems_name_the_instance(greeter: ModuleType) -> None:
    from lorenz.plugins.validate_settings import check_pack_settings

    module = greeter
    pack = module.PACK

    class Checked:
        name = "checked"

        def tool_specs(self, settings: Any) -> list[Any]:
            return pack.tool_specs(settings)

        def validate_options(self, options: Any) -> None:
            if set(options) - {"token"}:
                raise ValueError("tools.checked: only token is known")

        def check_settings(self, settings: Any) -> list[str]:
            options = (settings.tool_options or {}).get("checked") or {}
            return [] if options.get("token") else ["tools.checked.token is required"]

        async def execute_tool(self, name: str, input: Any, context: Any) -> Any:
            raise NotImplementedError

    host = make_pack_host(
        Checked(),
        config={"tools": {"a": {"provider": "checked", "token": "t"}, "b": {"provider": "checked", "prefix": "b_"}}},
    )
    assert check_pack_settings(host.settings, host.workspace.packs()) == ["pack b: tools.b.token is required"]


# -- over HTTP, with the official SDK client ---------------------------------------------------------


def _read_lines(path: Path, count: int) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if path.exists():
            lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
            if len(lines) >= count:
                return lines
        time.sleep(0.02)
    raise AssertionError(f"fewer than {count} lines in {path}")


WORKFLOW = """---
tools:
  en: {provider: greeter, greeting: hello, prefix: en_}
  fr: {provider: greeter, greeting: bonjour, prefix: fr_}
server:
  call_log: calls.jsonl
  disabled_tools: [fr_greeter_ping]
  tokens:
    - {token: $EN_TOKEN, tools: ["en_*"], name: en-only}
---
"""


async def test_instances_over_http_with_a_scoped_token_disabled_tools_and_the_call_log(
    greeter: ModuleType, tmp_path: Path
) -> None:
    (tmp_path / "WORKFLOW.md").write_text(WORKFLOW, encoding="utf-8")
    env = {"LORENZ_LOAD_PLUGINS": "", "PATH": os.environ.get("PATH", ""), "EN_TOKEN": "en-token-0123456789"}
    with serve_in_thread(cwd=tmp_path, env=env, plugins=[greeter], token="full-token-0123456789") as server:
        async with httpx.AsyncClient(headers={"Authorization": "Bearer full-token-0123456789"}) as http:
            transport = mcp.client.streamable_http.streamable_http_client(server.url, http_client=http)
            async with mcp.Client(transport) as client:
                names = sorted(tool.name for tool in (await client.list_tools()).tools)
                en = await client.call_tool("en_greeter_greet", {"who": "Ada"})
                fr = await client.call_tool("fr_greeter_greet", {"who": "Ada"})
                off = await client.call_tool("fr_greeter_ping", {})
                on = await client.call_tool("en_greeter_ping", {})
            page = (await http.get(server.base_url + "/")).text
        async with httpx.AsyncClient(headers={"Authorization": "Bearer en-token-0123456789"}) as http:
            transport = mcp.client.streamable_http.streamable_http_client(server.url, http_client=http)
            async with mcp.Client(transport) as client:
                scoped = sorted(tool.name for tool in (await client.list_tools()).tools)
                refused = await client.call_tool("fr_greeter_greet", {"who": "Ada"})
                allowed = await client.call_tool("en_greeter_greet", {"who": "Bo"})
        lines = await anyio.to_thread.run_sync(_read_lines, tmp_path / "calls.jsonl", 6)
    assert names == ["en_greeter_greet", "en_greeter_ping", "fr_greeter_greet"]
    assert en.structured_content["text"] == "hello, Ada" and fr.structured_content["text"] == "bonjour, Ada"
    assert fr.structured_content["can_ping"] is False  # fr_greeter_ping is switched off by the operator
    assert off.is_error is True and 'Tool "fr_greeter_ping" is disabled' in off.content[0].text
    assert on.is_error is False and on.structured_content == {"pong": "hello"}
    assert scoped == ["en_greeter_greet", "en_greeter_ping"]
    assert refused.is_error is True and allowed.structured_content["text"] == "hello, Bo"
    assert 'id="pack-en">en <span class="muted">(greeter)</span>' in page
    assert 'id="pack-fr">fr <span class="muted">(greeter)</span>' in page
    recorded = [(line["tool"], line["pack"], line.get("instance"), line["outcome"]) for line in lines]
    assert recorded[:2] == [
        ("en_greeter_greet", "greeter", "en", "success"),
        ("fr_greeter_greet", "greeter", "fr", "success"),
    ]
    assert ("en_greeter_greet", "greeter", "en", "success") in recorded[4:]


# -- isolation and the command line ----------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("isolated", ["en", "greeter"])
async def test_isolated_instances_run_in_processes_of_their_own(
    greeter: ModuleType, tmp_path: Path, isolated: str
) -> None:
    tools = "  en: {provider: greeter, greeting: hello, prefix: en_}\n  fr: {provider: greeter, prefix: fr_}\n"
    front = f"tools:\n{tools}server:\n  isolated_packs: [{isolated}]\n"
    (tmp_path / "WORKFLOW.md").write_text(f"---\n{front}---\n", encoding="utf-8")
    env = {"LORENZ_LOAD_PLUGINS": "", "PATH": os.environ.get("PATH", "")}
    workspace = open_workspace(cwd=tmp_path, env=env, plugins=[greeter])
    try:
        async with httpx.AsyncClient() as http:
            en = await workspace.call("en_greeter_greet", {"who": "Ada"}, http)
            fr = await workspace.call("fr_greeter_greet", {"who": "Ada"}, http)
        status = workspace.isolation.status(workspace.packs())
    finally:
        workspace.close()
    en_pid, fr_pid = en.result["pid"], fr.result["pid"]
    assert en.result["text"] == "hello, Ada" and fr.result["text"] == "hello, Ada"
    assert en_pid != os.getpid()
    if isolated == "en":
        assert fr_pid == os.getpid()
        assert [(s["pack"], s["provider"]) for s in status] == [("en", "greeter")]
    else:  # the provider's name isolates every instance of it, each in its own processes
        assert fr_pid not in (os.getpid(), en_pid)
        assert sorted(s["pack"] for s in status) == ["en", "fr"]


def test_lorenz_tools_shows_the_instances(
    greeter: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from lorenz.cli import main

    (tmp_path / "WORKFLOW.md").write_text(
        "---\ntools:\n  en: {provider: greeter, prefix: en_}\n  greeter: {rename: {greeter_ping: ping}}\n---\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LORENZ_LOAD_PLUGINS", "")
    assert main(["-p", "greeter_pack", "tools"]) == 0
    text = capsys.readouterr().out
    assert "en_greeter_greet  [en (greeter)]" in text
    assert "ping              [greeter]" in text
    assert main(["-p", "greeter_pack", "tools", "--json"]) == 0
    listed = {
        tool["name"]: (tool["pack"], tool.get("instance")) for tool in json.loads(capsys.readouterr().out)["tools"]
    }
    assert listed == {
        "en_greeter_greet": ("greeter", "en"),
        "en_greeter_ping": ("greeter", "en"),
        "greeter_greet": ("greeter", None),
        "ping": ("greeter", None),
    }


@pytest.mark.parametrize(
    ("tools", "expected"),
    [
        (
            "  en: {provider: greter, prefix: en_}\n",
            'tools.en.provider: unsupported tool pack: greter (did you mean "greeter"?)',
        ),
        (
            "  en: {provider: greeter, rename: {greeter_wave: wave}}\n",
            'tools.en.rename: the "greeter" pack has no tool',
        ),
        ("  en: {provider: greeter, greeting: 3}\n", "tools.en.greeting"),
    ],
)
def test_lorenz_check_validates_instances(
    greeter: ModuleType,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tools: str,
    expected: str,
) -> None:
    from lorenz.cli import main

    (tmp_path / "WORKFLOW.md").write_text(f"---\ntools:\n{tools}---\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LORENZ_LOAD_PLUGINS", "")
    assert main(["-p", "greeter_pack", "check"]) != 0
    assert expected in capsys.readouterr().err
    (tmp_path / "WORKFLOW.md").write_text(
        "---\ntools:\n  en: {provider: greeter, prefix: en_}\n---\n", encoding="utf-8"
    )
    assert main(["-p", "greeter_pack", "check"]) == 0
