"""A pytest plugin (``-p sandboxed_suite``) running a test suite with the bundled packs sandboxed.

Every workflow loaded gets ``server.sandboxed_packs: [local, jira, linear, slack]``; each pack
declares what it reaches (its board, its configured site), so no test grants anything. The run
fails unless some pack really started confined (not merely isolated after a fallback).
"""

from __future__ import annotations

from typing import Any

import pytest

import lorenz.settings.workflow as workflow_module
from lorenz.sandbox.host import PackSandbox

BUNDLED = ["local", "jira", "linear", "slack"]
CONFINED: list[str] = []


@pytest.fixture(autouse=True)
def _sandbox_every_bundled_pack(monkeypatch: pytest.MonkeyPatch) -> None:
    parse = workflow_module.parse_workflow_content

    def sandboxed(text: str, **kwargs: Any) -> Any:
        parsed = parse(text, **kwargs)
        server = parsed.config.setdefault("server", {})
        if isinstance(server, dict):
            server.setdefault("sandboxed_packs", BUNDLED)
        return parsed

    start = PackSandbox.start

    async def started(self: PackSandbox) -> Any:
        sandbox = await start(self)
        if sandbox is not None:
            CONFINED.append(self.pack)
        return sandbox

    monkeypatch.setattr(workflow_module, "parse_workflow_content", sandboxed)
    monkeypatch.setattr(PackSandbox, "start", started)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if exitstatus == 0 and session.testscollected and not CONFINED:
        session.exitstatus = 1
        print("\nsandboxed_suite: no bundled pack was confined: the run proved nothing")


def pytest_terminal_summary(terminalreporter: Any) -> None:
    terminalreporter.write_line(f"sandboxed_suite: packs confined: {sorted(set(CONFINED))} ({len(CONFINED)} starts)")
