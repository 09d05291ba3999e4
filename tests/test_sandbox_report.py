"""What the operator is shown of sandboxed packs (issue 35): ``lorenz check`` prints each sandboxed
pack's effective policy (and ``--json``), the landing page each pack's permissions, a ``sandboxed``
pill and the count of refused accesses, for a hostile pack served by a real ``lorenz serve``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import anyio
import httpx
import mcp
import pytest

from lorenz.sandbox import landlock
from lorenz.testing import ServedWorkflow

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        landlock.missing_feature(landlock.abi_version(), network=True) is not None, reason="no Landlock"
    ),
]


def _setup(tmp_path: Path, sandbox_packs: ModuleType) -> dict[str, str]:
    """A workflow sandboxing the hostile and the computed packs; the environment to run lorenz in."""
    site = tmp_path / "site"
    site.mkdir()
    sandbox_packs.write_site(site)
    (tmp_path / "shared").mkdir()
    (tmp_path / "granted").mkdir()
    (tmp_path / "secret.txt").write_text("the workflow's secret", encoding="utf-8")
    front = (
        "tracker:\n  kind: local\n"
        "tools:\n"
        "  hostile:\n    permissions:\n      network: ['api.example.com:443']\n      read: [./shared]\n"
        f"  computed:\n    dir: {tmp_path / 'granted'}\n"
        "server:\n  sandboxed_packs: [hostile, computed]\n  tool_timeout_seconds: 10\n"
    )
    (tmp_path / "WORKFLOW.md").write_text(f"---\n{front}---\nWork the board.\n", encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    env["LORENZ_LOAD_PLUGINS"] = "lorenz-local,sbx-hostile,sbx-computed"
    env["PYTHONPATH"] = os.pathsep.join([str(site), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def _lorenz(tmp_path: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lorenz", *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )


def test_lorenz_check_shows_each_sandboxed_packs_effective_policy(tmp_path: Path, sandbox_packs: ModuleType) -> None:
    env = _setup(tmp_path, sandbox_packs)
    shown = _lorenz(tmp_path, env, "check")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    start = lines.index("sandboxed hostile (confined by Landlock and the egress proxy):")
    assert lines[start + 1 : start + 8] == [
        "  network (through the proxy): api.example.com:443",
        f"  read: {tmp_path / 'shared'}",
        "  write: -",
        "  env: HOSTILE_TOKEN",
        "  subprocess: no",
        "  declared by the pack: env: HOSTILE_TOKEN; no subprocess",
        "  added in tools.hostile.permissions: network: api.example.com:443; read: ./shared; no subprocess",
    ]
    computed = lines.index("sandboxed computed (confined by Landlock and the egress proxy):")
    assert lines[computed + 2] == f"  read: {tmp_path / 'granted'}"
    assert lines[computed + 6] == f"  declared by the pack: read: {tmp_path / 'granted'}; no subprocess"
    assert "sandboxed local" not in shown.stdout  # bundled and not named: not sandboxed

    report = json.loads(_lorenz(tmp_path, env, "check", "--json").stdout)
    policies = report["sandboxedPacks"]
    assert set(policies) == {"hostile", "computed"}
    hostile = policies["hostile"]
    assert (hostile["sandboxed"], hostile["confined"], hostile["denials"]) == (True, True, 0)
    assert hostile["declared"]["env"] == ["HOSTILE_TOKEN"] and hostile["declared"]["read"] == []
    assert hostile["added"]["read"] == ["./shared"]
    effective = hostile["effective"]
    assert {key: effective[key] for key in ("network", "read", "write", "env", "subprocess")} == {
        "network": ["api.example.com:443"],
        "read": [str(tmp_path / "shared")],
        "write": [],
        "env": ["HOSTILE_TOKEN"],
        "subprocess": False,
    }
    assert effective["scratch"].startswith(os.path.realpath(os.environ.get("TMPDIR", "/tmp")))
    assert not os.path.exists(effective["scratch"])  # removed when the check's packs stopped
    assert policies["computed"]["dependsOnSettings"] is True
    assert policies["computed"]["declared"]["read"] == [str(tmp_path / "granted")]
    assert policies["computed"]["added"] is None


def test_a_workflow_without_sandboxed_packs_keeps_its_check_json(tmp_path: Path, sandbox_packs: ModuleType) -> None:
    env = _setup(tmp_path, sandbox_packs)
    workflow = tmp_path / "WORKFLOW.md"
    workflow.write_text(
        workflow.read_text(encoding="utf-8").replace("sandboxed_packs: [hostile, computed]", "isolated_packs: []"),
        encoding="utf-8",
    )
    shown = _lorenz(tmp_path, env, "check", "--json")
    assert shown.returncode == 0, shown.stderr
    assert "sandboxedPacks" not in json.loads(shown.stdout)
    assert "sandboxed" not in _lorenz(tmp_path, env, "check").stdout


def test_the_landing_page_shows_permissions_the_sandboxed_pill_and_denials(
    tmp_path: Path, sandbox_packs: ModuleType
) -> None:
    env = _setup(tmp_path, sandbox_packs)
    server = ServedWorkflow(tmp_path, env)
    try:
        before = httpx.get(server.base + "/").text
        assert '<span class="pill" data-denials="0">denials: 0</span>' in before

        async def scenario() -> None:
            async with mcp.Client(server.url) as client:
                for _ in range(2):
                    result = await client.call_tool("hostile_read", {"path": str(tmp_path / "secret.txt")})
                    assert result.is_error is True
                    assert "tools.hostile.permissions.read" in result.content[0].text

        anyio.run(scenario)
        page = httpx.get(server.base + "/").text
        hostile = page[page.index('id="pack-hostile"') :]
        hostile = hostile[: hostile.index("</details>")]
        assert '<span class="pill">isolated</span> <span class="pill">sandboxed</span>' in hostile
        assert "Permissions (enforced)" in hostile
        assert '<span class="pill" data-denials="2">denials: 2</span>' in hostile
        assert f"<li>read: <code>{tmp_path / 'shared'}</code></li>" in hostile
        assert "<li>network (through the proxy): <code>api.example.com:443</code></li>" in hostile
        assert "<li>declared: <code>env: HOSTILE_TOKEN; no subprocess</code></li>" in hostile
        local = page[page.index('id="pack-local"') :]
        local = local[: local.index("</details>")]
        assert "sandboxed" not in local.split("</h3>")[0]
        assert "Permissions (requested when sandboxed)" in local and "denials" not in local
        assert httpx.get(server.base + "/healthz").json()["isolatedPacks"][0]["denials"] == 2
    finally:
        server.stop()
