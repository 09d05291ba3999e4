"""One redactor for every text that leaves the host (issue 28): the workflow's secrets, the
environment's secret-looking variables, a call's argument values in the call log, and absolute
paths in a pack's unexpected exception."""

from __future__ import annotations

import json
import os
import sys
import textwrap
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import mcp
import pytest

import lorenz
from lorenz import ToolSpec, tool_success
from lorenz.host import serve_in_thread
from lorenz.redact import redact_text

TOKEN = "acme-tok-9f8e7d6c5b4a"
VALUE = "hunter2-SUPERSECRET-VALUE"


def test_an_environment_secret_is_redacted_without_being_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    from lorenz.redact import environment_secrets, is_secret_env_name

    monkeypatch.setenv("ACME_API_TOKEN", TOKEN)
    monkeypatch.setenv("STRIPE_KEY", "sk-live-0123456789")
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "false")  # a flag, not a secret: too short
    monkeypatch.setenv("ACME_GREETING", "hello-world-1234")  # not a secret-looking name
    text = redact_text(f"auth failed for {TOKEN} / {json.dumps(TOKEN)} / sk-live-0123456789; false hello-world-1234")
    assert TOKEN not in text and "sk-live" not in text
    assert text.endswith("false hello-world-1234")
    assert TOKEN in environment_secrets()
    assert not is_secret_env_name("PWD") and not is_secret_env_name("KEYRING_BACKEND")


def test_the_secret_key_pattern_has_one_home() -> None:
    from lorenz import redact
    from lorenz.settings import secrets

    assert secrets.is_secret_key is redact.is_secret_key
    assert secrets.MIN_SECRET_LENGTH == redact.MIN_SECRET_LENGTH


def test_argument_values_become_placeholders() -> None:
    message = f'invalid board issue id: "{VALUE}" (also {VALUE!r}, and "a\\"b-c")'
    text = redact_text(message, arguments={"issueId": VALUE, "filters": {"q": 'a"b-c'}, "n": 3})
    assert (
        text == 'invalid board issue id: "«argument issueId»" (also \'«argument issueId»\', and "«argument filters»")'
    )


def test_too_many_argument_values_withhold_the_text() -> None:
    arguments = {"many": [f"value-{i}" for i in range(5000)]}
    assert "value-" not in redact_text("bad value-4999", arguments=arguments)


def test_absolute_paths_are_shortened_but_urls_are_not(tmp_path: Path) -> None:
    from lorenz.redact import shorten_paths

    base = tmp_path / "work"
    text = (
        f"[Errno 2] No such file or directory: '/home/op/secret project/plan.txt'; "
        f'File "/usr/lib/python3/site-packages/acme/x.py", line 3; at {base}/.lorenz/local/A-1.md; '
        "see https://example.com/a/b/c or file:///etc/hosts; /mcp and and/or stay"
    )
    assert shorten_paths(text, base) == (
        "[Errno 2] No such file or directory: '…/plan.txt'; "
        'File "…/x.py", line 3; at .lorenz/local/A-1.md; '
        "see https://example.com/a/b/c or file:///etc/hosts; /mcp and and/or stay"
    )
    assert shorten_paths(f"{base}/../../etc/passwd", base) == "…/passwd"


# --- through the host: what the agent gets, and what the call log keeps -----------------------------


class LeakyPack:
    name = "leaky"

    def __init__(self, outside: Path) -> None:
        self.outside = outside

    def tool_specs(self, settings: Any) -> list[ToolSpec]:
        return [
            ToolSpec(name="leaky_read", description="Reads an issue."),
            ToolSpec(name="leaky_open", description="Opens a file outside the workflow."),
            ToolSpec(name="leaky_env", description="Quotes the environment."),
        ]

    async def execute_tool(self, name: str, input: Any, context: Any) -> Any:
        if name == "leaky_read":
            raise ValueError(f"invalid board issue id: {json.dumps(input['issueId'])}")
        if name == "leaky_open":
            (self.outside / "plan.txt").read_text()  # raises: it does not exist
            return tool_success({})
        raise RuntimeError(f"upstream said no to {os.environ['ACME_API_TOKEN']}")


class LeakyTracker:
    kind = "leaky"

    def create_client(self, settings: Any, context: Any) -> Any:
        raise NotImplementedError

    def default_tool_packs(self, settings: Any) -> list[str]:
        return ["leaky"]


def leaky_plugin(outside: Path) -> ModuleType:
    module = ModuleType("leaky_plugin")

    @lorenz.hookimpl
    def lorenz_register_tool_packs(register: Any) -> None:
        register(LeakyPack(outside))

    @lorenz.hookimpl
    def lorenz_register_trackers(register: Any) -> None:
        register(LeakyTracker())

    module.lorenz_register_tool_packs = lorenz_register_tool_packs  # type: ignore[attr-defined]
    module.lorenz_register_trackers = lorenz_register_trackers  # type: ignore[attr-defined]
    return module


def read_lines(path: Path, count: int) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 5
    while True:
        lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
        if len(lines) >= count or time.monotonic() > deadline:
            return [json.loads(line) for line in lines]
        time.sleep(0.05)


@pytest.mark.anyio
async def test_the_call_log_and_the_agent_get_redacted_texts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACME_API_TOKEN", TOKEN)
    work, outside = tmp_path / "work", tmp_path / "home" / "op" / "secret-project"
    work.mkdir()
    outside.mkdir(parents=True)
    (work / "WORKFLOW.md").write_text("---\ntracker:\n  kind: leaky\nserver:\n  call_log: calls.jsonl\n---\n")
    env = {"LORENZ_LOAD_PLUGINS": ""}
    with serve_in_thread(cwd=work, env=env, plugins=[leaky_plugin(outside)]) as server:
        async with mcp.Client(server.url, mode="legacy") as client:
            read = await client.call_tool("leaky_read", {"issueId": VALUE})
            opened = await client.call_tool("leaky_open", {})
            quoted = await client.call_tool("leaky_env", {})
        lines = await anyio.to_thread.run_sync(read_lines, work / "calls.jsonl", 3)
    # The agent sent the argument: its own answer may quote it. Secrets and server paths never.
    assert VALUE in read.content[0].text  # type: ignore[union-attr]
    assert "…/plan.txt" in opened.content[0].text and str(outside) not in opened.content[0].text  # type: ignore[union-attr]
    assert TOKEN not in quoted.content[0].text and "[REDACTED]" in quoted.content[0].text  # type: ignore[union-attr]
    assert [line["error"] for line in lines] == [
        'invalid board issue id: "«argument issueId»"',
        "[Errno 2] No such file or directory: '…/plan.txt'",
        "upstream said no to [REDACTED]",
    ]
    log = (work / "calls.jsonl").read_text(encoding="utf-8")
    assert VALUE not in log and TOKEN not in log and str(outside) not in log


def test_lorenz_plugins_verbose_redacts_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from lorenz.cli import main

    monkeypatch.setenv("ACME_API_TOKEN", TOKEN)
    monkeypatch.setenv("LORENZ_LOAD_PLUGINS", "")
    monkeypatch.chdir(tmp_path)
    plugin = tmp_path / "leaky_hook.py"
    plugin.write_text(
        textwrap.dedent(
            """
            import os
            import lorenz

            @lorenz.hookimpl
            def lorenz_register_tool_packs(register):
                raise RuntimeError("cannot log in with " + os.environ["ACME_API_TOKEN"])
            """
        ),
        encoding="utf-8",
    )
    try:
        main(["plugins", "-v", "-p", str(plugin)])
    finally:
        sys.modules.pop("leaky_hook", None)
    captured = capsys.readouterr()
    assert "cannot log in with [REDACTED]" in captured.out + captured.err
    assert "Traceback" in captured.out + captured.err
    assert TOKEN not in captured.out + captured.err
