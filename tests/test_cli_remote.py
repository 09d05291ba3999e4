"""``lorenz tools --server`` and ``lorenz call --server`` (issue 32): the CLI asks a running
``lorenz serve`` over MCP, prints what the in-process commands print, and names a server it cannot
ask (refused, no token, a wrong path) in one line."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

LORENZ = Path(sys.executable).with_name("lorenz")
TOKEN = "remote-test-token"

# One parallel worker runs the module: its `lorenz serve` starts once, not once per worker.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("cli-remote")]


def _env(**extra: str) -> dict[str, str]:
    environ = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    return {**environ, "LORENZ_LOAD_PLUGINS": "lorenz-local", **extra}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real ``lorenz serve`` (subprocess) on the local board, behind a token; its /mcp URL."""
    root = tmp_path_factory.mktemp("remote")
    (root / "WORKFLOW.md").write_text("---\ntracker: {kind: local}\n---\n", encoding="utf-8")
    port = _free_port()
    server = subprocess.Popen(
        [str(LORENZ), "serve", "--port", str(port), "--no-reload"],
        cwd=root,
        env=_env(LORENZ_MCP_TOKEN=TOKEN),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert server.poll() is None and time.monotonic() < deadline, "lorenz serve did not start"
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.terminate()
        server.wait(timeout=30)


def lorenz(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LORENZ), *args], env=_env(**env), capture_output=True, text=True, check=False, timeout=60
    )


def test_tools_and_call_on_the_running_server(served: str, tmp_path: Path) -> None:
    listed = lorenz("tools", "--server", served, "--json", "--token", TOKEN)
    assert listed.returncode == 0, listed.stderr
    names = [tool["name"] for tool in json.loads(listed.stdout)["tools"]]
    assert names == ["local_update_status", "local_comment", "local_create_issue", "local_read_issue", "local_query"]
    text = lorenz("tools", "--server", served, LORENZ_MCP_TOKEN=TOKEN)
    assert text.stdout.splitlines()[0].startswith("local_update_status  Move a local board issue")
    created = lorenz("call", "--server", served, "local_create_issue", '{"title": "Remote"}', LORENZ_MCP_TOKEN=TOKEN)
    assert created.returncode == 0, created.stderr
    result = json.loads(created.stdout)
    assert result["success"] is True
    issue = result["result"]["issue"]["identifier"] if "issue" in result["result"] else result["result"]["identifier"]
    read = lorenz("call", "--server", served, "local_read_issue", json.dumps({"issueId": issue}), "--token", TOKEN)
    assert read.returncode == 0
    assert "Remote" in read.stdout


def test_tools_budget_on_the_running_server(served: str) -> None:
    """`--budget` prices what the server lists to this token, the same way as the in-process listing."""
    listed = json.loads(lorenz("tools", "--server", served, "--json", "--token", TOKEN).stdout)["tools"]
    budget = lorenz("tools", "--server", served, "--budget", "--json", "--token", TOKEN)
    assert budget.returncode == 0, budget.stderr
    report = json.loads(budget.stdout)
    costs = [-(-len(json.dumps(tool, separators=(",", ":"), ensure_ascii=False).encode()) // 4) for tool in listed]
    assert [tool["contextTokens"] for tool in report["tools"]] == costs
    assert report["contextTokens"] == sum(costs)
    text = lorenz("tools", "--server", served, "--budget", "--token", TOKEN).stdout.splitlines()
    assert text[0].split() == ["local_update_status", str(costs[0]), "tokens"]
    assert text[-1].startswith("total  ") and f" {sum(costs)} tokens for 5 tools " in text[-1]


def test_a_failed_call_exits_1_with_the_in_process_shape(served: str) -> None:
    failed = lorenz("call", "--server", served, "local_read_issue", '{"issueId": "BOARD-404"}', "--token", TOKEN)
    assert failed.returncode == 1
    error = json.loads(failed.stdout)
    assert error["error"] == "local board issue not found: BOARD-404"
    assert error["result"]["error"]["reason"] == "not_found"


@pytest.mark.parametrize(
    ("tool", "arguments", "key", "hint"),
    [
        ("local_read_issue", '{"issueId": "BOARD-404"}', "recovery", None),
        ("local_read_isue", '{"issueId": "BOARD-1"}', "supportedTools", '"local_read_issue"'),
        ("local_create_issue", '{"titel": "x"}', "recovery", None),
    ],
    ids=["not-found", "misspelt-tool", "bad-arguments"],
)
def test_a_failure_prints_the_same_both_ways(
    served: str, tmp_path: Path, tool: str, arguments: str, key: str, hint: str | None
) -> None:
    """Issue 44: the error object (reason, retryable, recovery) and the did-you-mean, locally and
    through ``--server`` alike."""
    (tmp_path / "WORKFLOW.md").write_text("---\ntracker: {kind: local}\n---\n", encoding="utf-8")
    local = subprocess.run(
        [str(LORENZ), "call", tool, arguments], env=_env(), cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    remote = lorenz("call", "--server", served, tool, arguments, "--token", TOKEN)
    assert (remote.returncode, json.loads(remote.stdout)) == (local.returncode, json.loads(local.stdout))
    assert key in json.loads(remote.stdout)["result"]["error"]
    if hint is not None:
        for stderr in (local.stderr, remote.stderr):
            assert f"(did you mean {hint}?)" in stderr.splitlines()[-1]


def test_a_url_without_mcp_is_suggested(served: str) -> None:
    base = served.removesuffix("/mcp")
    for url in (base, base + "/"):
        missing = lorenz("call", "--server", url, "local_query", "--token", TOKEN)
        assert missing.returncode == 1
        assert missing.stderr.strip().endswith(f"(did you mean {served}?)"), missing.stderr
        assert "Server returned an error response" not in missing.stderr


def test_a_server_that_cannot_be_asked_is_named(served: str) -> None:
    missing = lorenz("tools", "--server", served)
    assert missing.returncode == 1
    assert (
        missing.stderr.strip()
        == f"lorenz: {served}: 401 Unauthorized: set --token or LORENZ_MCP_TOKEN to the server's token"
    )
    wrong = lorenz("tools", "--server", served, "--token", "not-it")
    assert wrong.stderr.strip() == f"lorenz: {served}: 401 Unauthorized: the token was refused; check it"
    assert "not-it" not in wrong.stderr
    path = served.removesuffix("/mcp") + "/nope"
    assert lorenz("tools", "--server", path, "--token", TOKEN).stderr.strip() == (
        f"lorenz: {path}: 404 Not Found: lorenz serve answers MCP at /mcp"
    )
    closed = f"http://127.0.0.1:{_free_port()}/mcp"
    refused = lorenz("call", "--server", closed, "local_query")
    assert refused.returncode == 1
    assert refused.stderr.strip() == f"lorenz: {closed}: connection refused (is lorenz serve running there?)"
