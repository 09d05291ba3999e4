"""``lorenz.sandboxed_command``: a program confined like a sandboxed pack, failing closed."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from lorenz import Permissions, SandboxUnavailable, sandboxed_command
from lorenz.sandbox import landlock


async def _enter(**kwargs: object) -> None:
    async with sandboxed_command("srv", ["/bin/true"], Permissions(), **kwargs):  # type: ignore[arg-type]
        pass


def test_a_kernel_without_landlock_tcp_rules_starts_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(landlock, "abi_version", lambda: 3)
    with pytest.raises(SandboxUnavailable, match=r"srv is sandboxed but this kernel lacks Landlock TCP rules"):
        asyncio.run(_enter())


@pytest.mark.skipif(landlock.missing_feature(landlock.abi_version(), network=True) is not None, reason="no Landlock")
def test_a_runtime_directory_holding_the_workflow_is_refused(tmp_path: Path) -> None:
    workflow = tmp_path / "project"
    workflow.mkdir()
    with pytest.raises(ValueError, match=rf"the runtime directory {tmp_path} holds {workflow}"):
        asyncio.run(_enter(runtime=[str(tmp_path)], workflow_dir=str(workflow)))


@pytest.mark.skipif(landlock.missing_feature(landlock.abi_version(), network=True) is not None, reason="no Landlock")
def test_a_refusal_is_named_from_the_programs_own_error(tmp_path: Path) -> None:
    readable = tmp_path / "shared"
    readable.mkdir()

    async def scenario() -> None:
        async with sandboxed_command("srv", ["/bin/true"], Permissions(read=[str(readable)])) as confined:
            assert confined.argv[-2:] == ("--", "/bin/true")
            secret = tmp_path / "secret"
            denied = confined.denial(f"Error: EACCES: permission denied, open '{secret}'", 0.0)
            assert denied == f"pack srv tried to read {secret}; add it to tools.srv.permissions.read"
            wrote = confined.denial(f"[Errno 13] Permission denied: '{readable / 'x'}'", 0.0)
            assert wrote == f"pack srv tried to write to {readable / 'x'}; add it to tools.srv.permissions.write"
            dialed = confined.denial("connect EACCES 10.0.0.7:5432", 0.0)
            assert dialed == "pack srv tried to connect to 10.0.0.7:5432; add it to tools.srv.permissions.network"
            assert confined.denial(f"no such file: {secret}", 0.0) is None  # not a refusal
            env = confined.env({"HOME": "/home/me", "SECRET_TOKEN": "x", "PATH": "/usr/bin"})
            assert env["HOME"] == confined.sandbox.temp_dir and "SECRET_TOKEN" not in env
            assert env["HTTPS_PROXY"] == f"http://127.0.0.1:{confined.sandbox.proxy_port}"

    asyncio.run(scenario())
