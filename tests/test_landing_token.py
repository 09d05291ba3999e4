"""The landing page for a browser holding the bearer token (issue 32): the anonymous page offers a
token form whose script keeps the token in sessionStorage and sends it in an Authorization header,
never in a URL; the page fetched with the header shows the inventory, each pack's distribution and
version, and a button to forget the token."""

from __future__ import annotations

from pathlib import Path

import httpx

from lorenz.calllog.stats import tail_view
from lorenz.host import serve_in_thread

TOKEN = "landing-form-token"
ENV = {"LORENZ_LOAD_PLUGINS": "lorenz-local"}


def test_the_anonymous_page_offers_a_token_form(tmp_path: Path) -> None:
    (tmp_path / "WORKFLOW.md").write_text("---\ntracker: {kind: local}\n---\n", encoding="utf-8")
    with serve_in_thread(cwd=tmp_path, env=ENV, token=TOKEN, reload=False) as server:
        base = server.url.removesuffix("/mcp")
        anonymous = httpx.get(base + "/")
        assert anonymous.status_code == 200
        assert '<form id="token-form"' in anonymous.text
        assert '<script src="/landing.js"></script>' in anonymous.text
        assert 'name="token"' not in anonymous.text  # a form sent without the script carries no token
        assert "local_read_issue" not in anonymous.text
        policy = anonymous.headers["content-security-policy"]
        assert "script-src 'self'" in policy and "form-action 'none'" in policy and "unsafe-inline'" in policy
        script = httpx.get(base + "/landing.js")
        assert script.headers["content-type"].startswith("text/javascript")
        assert "sessionStorage" in script.text
        assert '"Authorization": "Bearer " + token' in script.text
        assert "?token" not in script.text and "token=" not in script.text
        held = httpx.get(base + "/", headers={"Authorization": f"Bearer {TOKEN}"})
        assert '<body data-grant="yes">' in held.text
        assert "local_read_issue" in held.text
        assert '<h3 id="pack-local">local <span class="muted">lorenz-local 0.1.0</span></h3>' in held.text
        assert 'id="token-forget"' in held.text
        assert '<form id="token-form"' not in held.text
        wrong = httpx.get(base + "/", headers={"Authorization": "Bearer not-it"})
        assert "data-grant" not in wrong.text


def test_without_a_token_the_page_has_no_form(tmp_path: Path) -> None:
    (tmp_path / "WORKFLOW.md").write_text("---\ntracker: {kind: local}\n---\n", encoding="utf-8")
    with serve_in_thread(cwd=tmp_path, env=ENV, reload=False) as server:
        page = httpx.get(server.url.removesuffix("/mcp") + "/").text
        assert "local_read_issue" in page
        assert "token-form" not in page and "token-forget" not in page


def test_tail_view_reads_the_shared_log(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    log.write_text(
        '{"ts": "2026-12-01T12:00:00.000Z", "tool": "a", "outcome": "success", "durationMs": 2.0}\n'
        "not json\n"
        '{"ts": "2026-12-01T12:00:01.000Z", "tool": "a", "outcome": "failure", "durationMs": 4.0, "error": "x"}\n'
        '{"ts": "2026-12-01T12:00:02.000Z", "tool": "b", "outcome": "success", "durationMs": 1.0}\n',
        encoding="utf-8",
    )
    recent, tools = tail_view(str(log))
    assert [call.tool for call in recent] == ["b", "a", "a"]
    assert [(tool.tool, tool.calls, tool.failures) for tool in tools] == [("a", 2, 1), ("b", 1, 0)]
    assert tail_view(str(tmp_path / "missing.jsonl")) == ([], [])
