"""A third-party plugin's import-time code under ``server.sandboxed_packs``: the survey child that
imports it at discovery, and the child computing its permissions from settings, are confined (no
file outside the Python installation, no network, no programs, a minimal environment), and the
host still starts and reports the plugin."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

from lorenz.isolation.report import pack_policy
from lorenz.plugins.model import Discovery
from lorenz.sandbox import landlock
from lorenz.workspace import Workspace, open_workspace

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        landlock.missing_feature(landlock.abi_version(), network=True) is not None, reason="no Landlock"
    ),
]

_REFUSED = ["READ_REFUSED", "CONNECT_REFUSED", "EXEC_REFUSED", "ENV_CLEAN"]


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """Where a plugin would exfiltrate to: whatever connects stays in its backlog."""
    server = socket.create_server(("127.0.0.1", 0))
    server.setblocking(False)
    yield server
    server.close()


@pytest.fixture
def home(tmp_path: Path, sandbox_packs: ModuleType, listener: socket.socket, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A planted secret, the snooping distributions installed, a workflow sandboxing every third
    party pack; the current directory is the workflow's."""
    secret = tmp_path / "home" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("SECRET42", encoding="utf-8")
    site = tmp_path / "site"
    site.mkdir()
    sandbox_packs.write_snoopers(site, secret, listener.getsockname()[1])
    monkeypatch.syspath_prepend(str(site))
    workflow = tmp_path / "workflow"
    workflow.mkdir()
    monkeypatch.chdir(workflow)
    monkeypatch.setenv("SNOOPED_TOKEN", "not for plugins")
    _write_workflow(workflow)
    return workflow


def _write_workflow(directory: Path, *, tools: bool = True, **server: str) -> None:
    extra = "".join(f"  {key}: {value}\n" for key, value in server.items())
    mounted = "tools:\n  snooper: {}\n  computer: {}\n" if tools else ""
    front = f"tracker:\n  kind: local\n  path: ./board\n{mounted}server:\n  sandboxed_packs: ['*']\n{extra}"
    (directory / "WORKFLOW.md").write_text(f"---\n{front}---\nWork the board.\n", encoding="utf-8")


def _open(directory: Path) -> Workspace:
    env = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    env["LORENZ_LOAD_PLUGINS"] = "lorenz-local,sbx-snooper,sbx-grabber"
    return open_workspace(cwd=directory, env=env)


def _nothing_connected(listener: socket.socket) -> bool:
    try:
        listener.accept()[0].close()
    except BlockingIOError:
        return True
    return False


@pytest.fixture(autouse=True)
def _forget_modules() -> Iterator[None]:
    yield
    for module in ("sbx_snooper", "sbx_grabber"):
        sys.modules.pop(module, None)


def test_a_plugins_import_time_code_is_confined_and_the_host_still_starts(home: Path, listener: socket.socket) -> None:
    opened = _open(home)
    try:
        snooper = opened.discovery.tools.get("snooper")
        assert snooper is not None and snooper.permissions is not None
        assert list(snooper.permissions.env) == [f"IMPORT_{probe}" for probe in _REFUSED]
        (grabber,) = [failure for failure in opened.discovery.failures if failure.distribution == "sbx-grabber"]
        assert "Permission denied" in grabber.error
        assert "imported confined at discovery: server.sandboxed_packs" in grabber.error
        assert "SECRET42" not in grabber.error
        assert _nothing_connected(listener)

        assert {"snooper", "computer"} <= set(opened.pack_names())
        computer = next(pack for pack in opened.packs() if pack.name == "computer")
        computed = pack_policy(computer, opened.settings, opened.discovery).declared
        assert computed is not None and list(computed.env) == [f"COMPUTE_{probe}" for probe in _REFUSED]
        assert _nothing_connected(listener)

        async def ping() -> bool:
            async with httpx.AsyncClient() as http:
                return (await opened.call("snooper_ping", {}, http)).success

        assert asyncio.run(ping())  # a pack whose import only reads the installation is served
    finally:
        opened.close()


def test_without_landlock_the_survey_fails_closed_unless_the_operator_accepts_it(
    home: Path, listener: socket.socket, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(landlock, "abi_version", lambda: 0)
    _write_workflow(home, tools=False)  # a pack of a failed plugin is unknown: mount none
    opened = _open(home)
    try:
        failures = {failure.distribution: failure.error for failure in opened.discovery.failures}
        assert "this kernel lacks Landlock" in failures["sbx-snooper"]
        assert "it was not imported (server.sandbox_fallback: warn" in failures["sbx-snooper"]
        assert "snooper" not in opened.pack_names() and "sbx_snooper" not in sys.modules
        assert _nothing_connected(listener)
    finally:
        opened.close()
    _write_workflow(home, tools=False, sandbox_fallback="warn")
    opened = _open(home)
    try:
        snooper = opened.discovery.tools.get("snooper")
        assert snooper is not None and snooper.permissions is not None
        assert "IMPORT_READ_SECRET42" in snooper.permissions.env  # unconfined, as the operator accepted
    finally:
        opened.close()


def test_permissions_computed_in_the_confined_child_resolve_paths_as_the_host_does(
    tmp_path: Path, sandbox_packs: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The child sees ``HOME`` and the variables its settings name (``$NAME``)."""
    site = tmp_path / "site"
    site.mkdir()
    sandbox_packs.install(site, "sbx-expander", "sbx_expander", sandbox_packs.EXPANDER)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.setenv("SBX_AREA", "area")
    workflow = tmp_path / "workflow"
    workflow.mkdir()
    monkeypatch.chdir(workflow)
    front = (
        "tracker:\n  kind: local\n  path: ./board\ntools:\n  expander:\n    dir: ~/$SBX_AREA/$SBX_LEAF\n"
        "server:\n  sandboxed_packs: [expander]\n"
    )
    (workflow / "WORKFLOW.md").write_text(f"---\n{front}---\nWork the board.\n", encoding="utf-8")
    monkeypatch.setenv("SBX_LEAF", "leaf")
    env = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    opened = open_workspace(cwd=workflow, env={**env, "LORENZ_LOAD_PLUGINS": "lorenz-local,sbx-expander"})
    try:
        expander = next(pack for pack in opened.packs() if pack.name == "expander")
        declared = pack_policy(expander, opened.settings, opened.discovery).declared
        assert declared is not None
        assert declared.read_paths() == (str(tmp_path / "user" / "area" / "leaf"),)
    finally:
        opened.close()
        sys.modules.pop("sbx_expander", None)


def test_a_plugin_the_workflow_does_not_mount_is_never_imported_in_the_host(
    home: Path, listener: socket.socket
) -> None:
    """Under a workflow sandboxing only some packs, a surveyed plugin none of whose packs the
    workflow mounts stands in (its survey was confined); one it mounts unsandboxed is imported."""
    front = "tracker:\n  kind: local\n  path: ./board\nserver:\n  sandboxed_packs: [elsewhere]\n"
    (home / "WORKFLOW.md").write_text(f"---\n{front}---\nWork the board.\n", encoding="utf-8")
    opened = _open(home)
    try:
        snooper = opened.discovery.tools.get("snooper")
        assert snooper is not None and getattr(snooper, "isolation_source", None) is not None
        assert snooper.permissions is not None and "IMPORT_READ_REFUSED" in snooper.permissions.env
        assert "sbx_snooper" not in sys.modules and "snooper" not in opened.pack_names()
    finally:
        opened.close()
    assert _nothing_connected(listener)
    mounting = front.replace("server:", "tools:\n  snooper: {}\nserver:")
    (home / "WORKFLOW.md").write_text(f"---\n{mounting}---\nWork the board.\n", encoding="utf-8")
    opened = _open(home)
    try:
        assert "snooper" in opened.pack_names() and "sbx_snooper" in sys.modules  # as the workflow asks
    finally:
        opened.close()


def _discover(directory: Path) -> Discovery:
    from lorenz.plugins.discovery import discover
    from lorenz.plugins.hint import in_doubt, isolation_hint, mounts_hint, sandbox_hint

    path = directory / "WORKFLOW.md"
    env = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    env["LORENZ_LOAD_PLUGINS"] = "lorenz-local,sbx-snooper,sbx-grabber"
    return discover(
        env=env,
        isolate=isolation_hint(path),
        sandbox=sandbox_hint(path),
        unimported=in_doubt(path),
        mounts=mounts_hint(path),
    )


def _plain(directory: Path, tools: str) -> None:
    front = f"tracker:\n  kind: local\n  path: ./board\ntools:\n{tools}"
    (directory / "WORKFLOW.md").write_text(f"---\n{front}---\nWork the board.\n", encoding="utf-8")


def test_a_plain_workflow_imports_a_plugin_whose_survey_failed_only_for_what_nothing_else_provides(
    home: Path,
) -> None:
    """A workflow that neither isolates nor sandboxes: the grabber's import fails confined; it is
    reported failed and never imported here while every mounted pack is found elsewhere, and
    imported (as the user asked, unsandboxed) once the workflow mounts what only it may provide."""
    _plain(home, "  snooper: {}\n")
    found = _discover(home)
    assert "sbx_snooper" in sys.modules and getattr(found.tools.get("snooper"), "isolation_source", 1) == 1
    (grabber,) = [failure for failure in found.failures if failure.distribution == "sbx-grabber"]
    assert "Permission denied" in grabber.error and "SECRET42" not in grabber.error
    assert "imported confined at discovery: lorenz runs third-party plugin code unconfined only" in grabber.error
    assert "sbx_grabber" not in sys.modules  # (the snooper, mounted unsandboxed, ran here as asked)

    _plain(home, "  local: {}\n  grabbed: {}\n")  # provided by no surveyed or bundled plugin
    found = _discover(home)
    (grabber,) = [failure for failure in found.failures if failure.distribution == "sbx-grabber"]
    assert "sbx_grabber" in sys.modules and "never registered while confined" in grabber.error


def test_a_confined_survey_is_kept_and_a_corrupt_entry_is_surveyed_afresh(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lorenz.isolation import survey

    started: list[str | None] = []
    real_start = survey._start

    def counting(source: Any, confine: Any = None) -> Any:
        started.append(source.distribution)
        return real_start(source, confine)

    monkeypatch.setattr(survey, "_start", counting)
    _plain(home, "  local: {}\n")
    first = _discover(home)
    assert sorted(started) == ["sbx-grabber", "sbx-snooper"]
    started.clear()
    again = _discover(home)
    assert started == ["sbx-grabber"]  # a failed survey is never kept
    assert again.tools.get("snooper").permissions == first.tools.get("snooper").permissions  # type: ignore[union-attr]

    (entry,) = list((Path(os.environ["XDG_CACHE_HOME"]) / "lorenz" / "surveys").iterdir())
    kept = entry.read_bytes()
    entry.write_bytes(b"not a report")
    started.clear()
    afresh = _discover(home)
    assert sorted(started) == ["sbx-grabber", "sbx-snooper"] and afresh.tools.get("snooper") is not None
    assert entry.read_bytes() == kept
