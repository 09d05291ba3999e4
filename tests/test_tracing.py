"""OpenTelemetry (issue 14): MCP server spans per request following the semantic conventions, a
trace continued from ``params._meta`` or the HTTP header, the operation-duration metric, backend
calls as child spans, the trace id in the call log; and no OpenTelemetry SDK without the switch.

Each scenario runs in a subprocess: a tracer provider is process-global."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).parent
TRACE = "0af7651916cd43dd8448eb211c80319c"
PARENT = "b7ad6b7169203331"

SCENARIO = """
import asyncio, json, sys, time
from pathlib import Path

import httpx
import mcp
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

sys.path.insert(0, {here!r})
import host_pack

spans = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(spans))
trace.set_tracer_provider(provider)
reader = InMemoryMetricReader()
metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))

from lorenz.host import serve_in_thread

work = Path({work!r})
(work / "WORKFLOW.md").write_text("---\\ntracker: {{kind: demo}}\\nserver:\\n  call_log: calls.jsonl\\n---\\n")
parent = "00-{trace}-{parent}-01"


def call(tool, arguments, meta=None):
    params = {{"name": tool, "arguments": arguments}}
    if meta:
        params["_meta"] = meta
    return {{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": params}}


async def main(url):
    headers = {{"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}}
    async with httpx.AsyncClient(headers=headers) as http:
        (await http.post(url, json=call("demo_add", {{"a": 1, "b": 2}}, {{"traceparent": parent}}))).raise_for_status()
    async with mcp.Client(url, mode="legacy") as client:
        await client.call_tool("demo_fail", {{}})
    async with httpx.AsyncClient(headers={{**headers, "traceparent": "00-{trace2}-{parent}-01"}}) as http:
        (await http.post(url, json=call("demo_add", {{"a": 2, "b": 2}}))).raise_for_status()


with serve_in_thread(cwd=work, env={{"LORENZ_LOAD_PLUGINS": ""}}, plugins=[host_pack]) as server:
    asyncio.run(main(server.url))
    deadline = time.monotonic() + 30  # a span ends once its response is sent, maybe after the client read it
    while sum(s.name.startswith("tools/call") for s in spans.get_finished_spans()) < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
out = []
for span in spans.get_finished_spans():
    out.append({{"name": span.name, "kind": span.kind.name, "trace": format(span.context.trace_id, "032x"),
                "parent": format(span.parent.span_id, "016x") if span.parent else None,
                "attributes": dict(span.attributes or {{}})}})
data = reader.get_metrics_data()
metrics_ = [m for rm in data.resource_metrics for sm in rm.scope_metrics for m in sm.metrics]
names = [m.name for m in metrics_]
points = [dict(p.attributes) for m in metrics_ if m.name == "mcp.server.operation.duration" for p in m.data.data_points]
log = [json.loads(line) for line in (work / "calls.jsonl").read_text().splitlines()]
print(json.dumps({{"spans": out, "metrics": names, "points": points, "log": log}}))
"""


def _run(script: str, tmp_path: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        env={**{k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "LORENZ_"))}, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.slow
def test_spans_follow_the_mcp_conventions_and_continue_traces(tmp_path: Path) -> None:
    trace2 = "1" * 32
    script = SCENARIO.format(here=str(HERE), work=str(tmp_path), trace=TRACE, parent=PARENT, trace2=trace2)
    result: dict[str, Any] = json.loads(_run(script, tmp_path).splitlines()[-1])
    calls = [span for span in result["spans"] if span["name"].startswith("tools/call")]
    assert [span["name"] for span in calls] == ["tools/call demo_add", "tools/call demo_fail", "tools/call demo_add"]
    first, failed, from_header = calls
    assert first["kind"] == "SERVER"
    assert (first["trace"], first["parent"]) == (TRACE, PARENT)  # continued from params._meta
    assert first["attributes"]["mcp.method.name"] == "tools/call"
    assert first["attributes"]["gen_ai.tool.name"] == "demo_add"
    assert first["attributes"]["mcp.protocol.version"] == "2025-11-25"
    assert "jsonrpc.request.id" in first["attributes"]
    assert "error.type" not in first["attributes"]
    assert failed["attributes"]["error.type"] == "tool_error"
    assert from_header["trace"] == trace2  # continued from the HTTP traceparent header
    assert "mcp.server.operation.duration" in result["metrics"]
    failures = [point for point in result["points"] if point.get("gen_ai.tool.name") == "demo_fail"]
    assert [point.get("error.type") for point in failures] == ["tool_error"]  # the isError result
    traced = [line for line in result["log"] if line["tool"] == "demo_add"]
    assert traced[0]["traceId"] == TRACE


@pytest.mark.slow
def test_no_opentelemetry_sdk_without_the_switch(tmp_path: Path, host_pack: Any) -> None:
    """Without OTEL_* (and no provider), serving imports no OpenTelemetry SDK module, and the CLI's
    other commands import no OpenTelemetry at all."""
    script = textwrap.dedent(
        f"""
        import sys
        from pathlib import Path
        sys.path.insert(0, {str(HERE)!r})
        import host_pack
        from lorenz.cli import main
        main(["plugins"])
        assert not [m for m in sys.modules if m.startswith("opentelemetry")], "plugins imported opentelemetry"
        from lorenz.host import serve_in_thread
        work = Path({str(tmp_path)!r})
        (work / "WORKFLOW.md").write_text("---\\ntracker: {{kind: demo}}\\n---\\n")
        with serve_in_thread(cwd=work, env={{"LORENZ_LOAD_PLUGINS": ""}}, plugins=[host_pack]):
            pass
        print(sorted(m for m in sys.modules if m.startswith("opentelemetry.sdk")))
        """
    )
    assert _run(script, tmp_path, {"LORENZ_LOAD_PLUGINS": ""}).splitlines()[-1] == "[]"
