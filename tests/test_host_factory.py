"""``lorenz.host:create_app`` in this process under a plain uvicorn, and what ``lorenz serve``
refuses before starting any worker: stateful with several workers, beyond loopback without a
token, in-process plugins that cannot reach worker processes."""

from __future__ import annotations

import logging
import os
import shutil
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest
import uvicorn

from lorenz.cli import main
from lorenz.host import create_app, factory, serve
from lorenz.host.factory import STARTUP_FAILURE, ServerCheck, plugin_reference
from lorenz.host.http.loopback import serve_app_in_thread
from lorenz.host.refusals import http_refusal, is_loopback
from lorenz.settings.model import ServerSettings

HERE = Path(__file__).parent
HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
DEMO = "tracker:\n  kind: demo\n"


def workspace(directory: Path, front_matter: str = DEMO) -> Path:
    (directory / "WORKFLOW.md").write_text(f"---\n{front_matter}---\nprompt\n")
    shutil.copy(HERE / "host_pack.py", directory / "host_pack.py")
    return directory


@pytest.fixture
def lorenz_logs(caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> pytest.LogCaptureFixture:
    """The ``lorenz`` loggers' records. The factory's own logging setup (a stderr handler that stops
    propagation, as a server process of its own wants) is left out, so they reach caplog."""
    monkeypatch.setattr(factory, "configure_logging", lambda **options: None)
    monkeypatch.setattr(logging.getLogger("lorenz"), "propagate", True)
    caplog.set_level(logging.INFO, logger="lorenz")
    return caplog


@pytest.fixture
def factory_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A process environment as an operator sets one for `uvicorn --factory lorenz.host:create_app`,
    and a ``host_pack`` module imported afresh from it."""
    directory = workspace(tmp_path, DEMO + "server:\n  read_timeout_seconds: 0.5\n")
    for key in [key for key in os.environ if key.startswith("LORENZ_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("LORENZ_LOAD_PLUGINS", "")
    monkeypatch.setenv("LORENZ_PLUGIN_MODULES", str(directory / "host_pack.py"))
    monkeypatch.chdir(directory)
    saved = sys.modules.pop("host_pack", None)
    yield directory
    sys.modules.pop("host_pack", None)
    if saved is not None:
        sys.modules["host_pack"] = saved


def test_create_app_serves_the_workflow_of_the_environment(
    factory_env: Path, lorenz_logs: pytest.LogCaptureFixture
) -> None:
    """Under a plain uvicorn: the tools of ./WORKFLOW.md with the plugin of LORENZ_PLUGIN_MODULES,
    /healthz naming this process; the first request logs what the server lacks (read deadlines)."""
    app = create_app()
    with serve_app_in_thread(app, lifespan="on") as server, httpx.Client(headers=HEADERS) as http:
        health = http.get(server.base_url + "/healthz").json()
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
        body["params"] = {"name": "demo_add", "arguments": {"a": 2, "b": 3}}
        answer = http.post(server.base_url + "/mcp", json=body).json()
        foreign = http.get(server.base_url + "/healthz", headers={"Host": "evil.example"})
    assert health["pid"] == os.getpid() and health["tools"] == 4
    assert answer["result"]["structuredContent"] == {"sum": 5}
    assert foreign.status_code == 421  # the same Host check as `lorenz serve`
    hints = [record.message for record in lorenz_logs.records if "read deadlines" in record.message]
    assert len(hints) == 1
    assert "--http lorenz.host:ReadDeadlineProtocol" in hints[0]


def test_create_app_under_uvicorn_with_the_lorenz_protocol(
    factory_env: Path, lorenz_logs: pytest.LogCaptureFixture
) -> None:
    """`--http lorenz.host:ReadDeadlineProtocol` with a plain uvicorn Config: the workflow's
    read_timeout_seconds applies (a client that never finishes its headers gets 408), no hint."""
    app = create_app()
    protocol = "lorenz.host:ReadDeadlineProtocol"  # the import string operators pass
    with serve_app_in_thread(app, lifespan="on", config=uvicorn.Config, http=protocol) as server:
        with httpx.Client() as http:
            assert http.get(server.base_url + "/healthz").status_code == 200
        with socket.create_connection((server.host, server.port), timeout=10) as slow:
            slow.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            started = time.monotonic()
            reply = slow.recv(200)
            waited = time.monotonic() - started
    assert reply.startswith(b"HTTP/1.1 408 ")
    assert waited < 5  # the workflow's 0.5 s, not the 10 s default
    assert not [record for record in lorenz_logs.records if "read deadlines" in record.message]


def test_create_app_refuses_a_broken_workflow_with_its_message(
    factory_env: Path, lorenz_logs: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    """A workflow that does not mount: its exact message, and the exit code supervisors do not restart."""
    workspace(factory_env, DEMO + "tools:\n  nowhere: {}\n")
    with pytest.raises(SystemExit) as exited:
        create_app()
    assert exited.value.code == STARTUP_FAILURE == 3
    err = capsys.readouterr().err
    assert err.startswith("lorenz: ") and "nowhere" in err
    assert "Traceback" not in err


def test_create_app_names_a_plugin_module_that_does_not_import(
    factory_env: Path,
    lorenz_logs: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("LORENZ_PLUGIN_MODULES", f"{factory_env / 'host_pack.py'}{os.pathsep}no_such_plugin_module")
    with pytest.raises(SystemExit) as exited:
        create_app()
    assert exited.value.code == STARTUP_FAILURE
    assert capsys.readouterr().err.startswith(
        "lorenz: LORENZ_PLUGIN_MODULES: cannot import plugin module 'no_such_plugin_module'"
    )


def test_server_check_warns_of_a_public_address_without_a_token(lorenz_logs: pytest.LogCaptureFixture) -> None:
    """Only the server knows its address: the first request on a non-loopback one, with no token, is
    logged once."""
    settings = SimpleNamespace(server=ServerSettings())
    live = SimpleNamespace(snapshot=lambda: SimpleNamespace(settings=settings))
    check = ServerCheck(lambda scope, receive, send: None, live=live)  # type: ignore[arg-type]
    check.check({"type": "http", "server": ("10.1.2.3", 4040), "state": {"lorenz.read_deadlines": True}})
    check.check({"type": "http", "server": ("127.0.0.1", 4040), "state": {"lorenz.read_deadlines": True}})
    messages = [record.message for record in lorenz_logs.records]
    assert (
        len(messages) == 1
        and "serving 10.1.2.3, beyond this machine, without an access token for clients" in messages[0]
    )


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.9.9.9", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("::", False),
        ("10.0.0.4", False),
        ("lorenz.example", False),
    ],
)
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_http_refusals() -> None:
    """Stateful with several workers is refused whatever the bind; beyond loopback needs a token or
    an explicit --allow-no-token."""
    plain, stateful, with_token = ServerSettings(), ServerSettings(stateful=True), ServerSettings(token="s3cret-token")
    assert http_refusal(plain, host="127.0.0.1", workers=4, allow_no_token=False) is None
    assert http_refusal(stateful, host="127.0.0.1", workers=1, allow_no_token=False) is None
    assert "Mcp-Session-Id" in (http_refusal(stateful, host="127.0.0.1", workers=2, allow_no_token=False) or "")
    assert "without an access token for clients" in (
        http_refusal(plain, host="0.0.0.0", workers=1, allow_no_token=False) or ""
    )
    assert http_refusal(plain, host="0.0.0.0", workers=1, allow_no_token=True) is None
    assert http_refusal(with_token, host="0.0.0.0", workers=2, allow_no_token=False) is None


@pytest.mark.parametrize(
    ("front_matter", "workers"),
    [(DEMO + "server:\n  stateful: true\n", 2), (DEMO + "server:\n  stateful: true\n  workers: 3\n", None)],
)
def test_stateful_with_workers_is_refused_at_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], front_matter: str, workers: int | None
) -> None:
    """`server.stateful: true` with --workers 2 (or `server.workers: 3`): exit 1 before anything
    listens, saying why and how to run stateful behind sticky sessions."""
    directory = workspace(tmp_path, front_matter)
    code = serve(
        workflow=None,
        host=None,
        port=0,
        stdio=False,
        plugins=[load_host_pack(directory)],
        cwd=directory,
        env={"LORENZ_LOAD_PLUGINS": ""},
        workers=workers,
    )
    err = capsys.readouterr().err
    assert code == 1
    count = workers or 3
    assert err.startswith(f"lorenz: server.stateful: true cannot run {count} worker processes: ")
    assert "session affinity on the Mcp-Session-Id header" in err
    assert "one worker each" in err


def test_beyond_loopback_without_a_token_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    directory = workspace(tmp_path)
    code = serve(
        workflow=None,
        host="0.0.0.0",
        port=0,
        stdio=False,
        plugins=[load_host_pack(directory)],
        cwd=directory,
        env={"LORENZ_LOAD_PLUGINS": ""},
    )
    assert code == 1
    assert capsys.readouterr().err.startswith(
        "lorenz: refusing to listen on 0.0.0.0, beyond this machine, without an access token for clients: "
        "set LORENZ_MCP_TOKEN"
    )


def test_workers_need_plugins_that_are_modules(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An in-process plugin object (not a module) cannot be imported again by a worker: refused."""
    directory = workspace(tmp_path)
    code = serve(
        workflow=None,
        host=None,
        port=0,
        stdio=False,
        plugins=[load_host_pack(directory), SimpleNamespace()],
        cwd=directory,
        env={"LORENZ_LOAD_PLUGINS": ""},
        workers=2,
    )
    assert code == 1
    assert "lorenz: --workers: the in-process plugin namespace() is not a module" in capsys.readouterr().err


def test_plugin_reference(tmp_path: Path) -> None:
    """A module with a .py file is named by its file (a lone file has no importable name), else by name."""
    module = load_host_pack(workspace(tmp_path))
    assert plugin_reference(module) == str(tmp_path / "host_pack.py")
    assert plugin_reference(socket) == socket.__file__
    assert plugin_reference(sys) == "sys"
    with pytest.raises(ValueError, match="not a module"):
        plugin_reference(object())


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["serve", "--stdio", "--workers", "2"], "--workers serves HTTP; --stdio is one process"),
        (["serve", "--workers", "0"], "workers must be a whole number, 1 or more"),
        (["serve", "--stdio", "--reload"], "--reload serves HTTP from workers it replaces; not with --stdio"),
        (
            ["serve", "--reload", "--no-reload"],
            "--reload serves HTTP from workers it replaces; not with --stdio or --no-reload",
        ),
    ],
)
def test_workers_command_line_mistakes(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own errors
        code = exc.code
    assert code in (1, 2)
    assert message in capsys.readouterr().err


def load_host_pack(directory: Path) -> object:
    import importlib.util

    spec = importlib.util.spec_from_file_location("host_pack", directory / "host_pack.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
