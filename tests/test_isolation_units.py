"""Isolated packs without processes: the pipe's framing, the messages the host accepts from a
child, which packs are isolated, and the slice of the settings a child is told (issue 17)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from lorenz.client_input import InputRequired
from lorenz.contracts import PromptArgument, PromptSpec, ResourceSpec, ToolSpec
from lorenz.isolation.frames import HEADER, FrameReader, ProtocolError
from lorenz.isolation.plan import is_isolated, isolation_hint, pack_settings, plan_for
from lorenz.isolation.protocol import (
    CONVERTER,
    Ready,
    Source,
    encode,
    reply_result,
    structure,
)
from lorenz.isolation.replies import read_event, read_reply
from lorenz.isolation.stand_ins import IsolatedPackStub
from lorenz.isolation.survey import describe_exit
from lorenz.plugins.model import Discovery, PluginInfo
from lorenz.plugins.registry import ToolRegistry, TrackerRegistry
from lorenz.results import FormattedResult, tool_failure, tool_success
from lorenz.settings.model import ScopedToken, ServerSettings, Settings, TrackerSettings


def test_frames_split_anywhere_come_out_whole() -> None:
    data = encode({"op": "result", "id": 1, "success": True}) + encode({"op": "result", "id": 2, "success": False})
    reader = FrameReader(1000)
    frames = [frame for index in range(len(data)) for frame in reader.feed(data[index : index + 1])]
    assert [frame["id"] for frame in frames] == [1, 2]


def test_a_frame_over_the_limit_is_refused_before_it_is_read() -> None:
    reader = FrameReader(100)
    with pytest.raises(ProtocolError, match=r"a frame of 4,294,967,295 bytes \(more than 100\)"):
        reader.feed(b"\xff\xff\xff\xff")


def test_a_frame_that_is_not_json_is_refused() -> None:
    with pytest.raises(ProtocolError, match="not JSON"):
        FrameReader(100).feed(HEADER.pack(3) + b"\xff{}")


@pytest.mark.parametrize("fast", [False, True])
def test_what_json_cannot_hold_is_sent_as_the_mcp_wire_would_show_it(fast: bool) -> None:
    frame = encode({"nan": math.nan, "set": {1}, "lone": "a\ud800b", "big": 1e300}, fast=fast)
    assert json.loads(frame[HEADER.size :]) == {"nan": None, "set": "{1}", "lone": "a\ufffdb", "big": 1e300}


def test_a_fast_reader_reads_what_the_json_module_reads() -> None:
    """Calls and replies are parsed by pydantic_core; what it refuses (nesting past 200, an escaped
    lone surrogate) is still read as the json module reads it, and what neither reads is refused."""
    deep = "[" * 300 + "]" * 300
    bodies = [deep, '["a\\ud800b"]', '{"n": 12345678901234567890123, "f": 1.5e300, "s": "\u00e9"}']
    reader = FrameReader(10_000, fast=True)
    for body in bodies:
        data = body.encode()
        assert reader.feed(HEADER.pack(len(data)) + data) == [json.loads(body)]
    both = b"".join(HEADER.pack(len(data)) + data for data in (body.encode() for body in bodies))
    assert reader.feed(both[:7]) == [] and reader.feed(both[7:]) == [json.loads(body) for body in bodies]
    with pytest.raises(ProtocolError, match="not JSON"):
        reader.feed(HEADER.pack(3) + b"\xff{}")


def test_a_reply_carries_only_what_is_set() -> None:
    plain = encode(reply_result(5, "n", tool_success({"sum": 3}), outcome="success"), fast=True)
    wire = json.loads(plain[HEADER.size :])
    assert wire == {"op": "result", "id": 5, "nonce": "n", "success": True, "result": {"sum": 3}}
    stopped = json.loads(encode(reply_result(6, "n", tool_failure("stopped"), outcome="cancelled"))[HEADER.size :])
    assert (stopped["error"], stopped["outcome"]) == ("stopped", "cancelled")
    reply = read_reply(stopped)
    assert (reply.success, reply.error, reply.text, reply.outcome) == (False, "stopped", None, "cancelled")


def test_a_malformed_reply_or_event_is_refused_naming_the_fields_at_fault() -> None:
    with pytest.raises(ProtocolError) as caught:
        read_reply({"op": "result", "id": True, "nonce": "n", "success": "yes", "content": [1]})
    assert str(caught.value) == (
        "a malformed reply frame (id: expected integer, got boolean; success: expected boolean, got string; "
        "content.0: expected object, got integer)"
    )
    with pytest.raises(ProtocolError, match=r"\(nonce: required field missing\)"):
        read_reply({"op": "result", "id": 1, "success": True})
    with pytest.raises(ProtocolError, match=r"op: expected 'result', got 'ready'"):
        read_reply({"op": "ready", "id": 1, "nonce": "n", "success": True})
    asked = {"requests": {"confirm": 1}, "state": None}
    with pytest.raises(ProtocolError) as caught:
        read_reply({"op": "result", "id": 1, "nonce": "n", "success": True, "inputRequired": asked})
    assert "inputRequired.requests.confirm: expected object, got integer" in str(caught.value)
    assert "inputRequired.state: expected string, got null" in str(caught.value)
    with pytest.raises(ProtocolError, match="not an object but list"):
        read_reply([1, "n", True])
    with pytest.raises(ProtocolError, match=r"\(done: expected number, got boolean; level: expected string"):
        read_event({"op": "progress", "id": 1, "nonce": "n", "done": True, "level": 3})
    with pytest.raises(ProtocolError, match="too large"):
        read_event({"op": "progress", "id": 1, "nonce": "n", "done": 10**400})
    event = read_event({"op": "progress", "id": 1, "nonce": "n", "done": 1, "total": 2})
    assert (event.done, event.total, event.level, event.message) == (1.0, 2.0, "info", None)


def test_a_malformed_message_from_a_child_names_the_fields_at_fault() -> None:
    with pytest.raises(ProtocolError) as caught:
        structure({"op": "ready", "pid": "7", "specs": [{"name": 3, "description": "d"}]}, Ready)
    assert "pid: expected integer, got string" in str(caught.value)
    assert "specs.0.name: expected string, got integer" in str(caught.value)
    with pytest.raises(ProtocolError, match="not an object but list"):
        structure([], Ready)


def test_ready_round_trips_in_camel_case() -> None:
    ready = Ready(
        op="ready",
        pid=7,
        specs=(ToolSpec(name="a_b", description="B.", output_schema={"type": "object"}),),
        validates_arguments=True,
        options_error=None,
        resources=(ResourceSpec(uri="a://x", name="x", mime_type="text/plain"),),
        prompts=(PromptSpec(name="a_p", arguments=(PromptArgument(name="topic"),)),),
        asking=("a_b",),
    )
    wire = json.loads(encode(ready)[HEADER.size :])
    assert wire["resources"][0]["mimeType"] == "text/plain"
    assert wire["validatesArguments"] is True and wire["specs"][0]["outputSchema"] == {"type": "object"}
    assert structure(wire, Ready) == ready


def test_a_reply_with_text_is_a_formatted_result() -> None:
    reply = read_reply({"op": "result", "id": 3, "nonce": "n", "success": False, "error": "no", "text": "Error: no"})
    result = reply.to_result()
    assert isinstance(result, FormattedResult) and result.text == "Error: no" and result.error == "no"


def test_a_round_of_questions_crosses_as_a_reply_and_only_askable_ones() -> None:
    elicit = {"method": "elicitation/create", "params": {"message": "Sure?", "requestedSchema": {}}}
    sent = InputRequired(requests={"confirm": elicit}, state='{"v":1}')
    wire = json.loads(encode(reply_result(4, "n", sent))[HEADER.size :])
    assert wire["inputRequired"] == {"requests": {"confirm": elicit}, "state": '{"v":1}'}
    result = read_reply(wire).to_result()
    assert isinstance(result, InputRequired) and result.requests == {"confirm": elicit} and result.state == '{"v":1}'
    wire["inputRequired"]["requests"]["confirm"]["method"] = "tools/call"
    refused = read_reply(wire).to_result()
    assert not isinstance(refused, InputRequired) and refused.success is False
    assert refused.error == "the pack asked the client something it cannot be asked: tools/call"


def test_settings_round_trip_through_the_strict_converter_secrets_included(tmp_path: Path) -> None:
    settings = Settings(
        tracker=TrackerSettings(kind="acme", api_key="k3y-value", options={"deep": [1, {"x": None}]}),
        tool_options={"acme": {"limit": 5}},
        server=ServerSettings(tokens=(ScopedToken(token="tok-value", name="ci"),), pack_memory_mb=256),
        workflow_path=tmp_path / "WORKFLOW.md",
        base_dir=tmp_path,
        secrets=frozenset({"k3y-value", "tok-value"}),
    )
    wire = json.loads(json.dumps(CONVERTER.unstructure(settings)))
    assert CONVERTER.structure(wire, Settings) == settings


def test_third_party_means_not_shipped_with_lorenz() -> None:
    assert is_isolated("acme", "acme-pack", ("*",))
    assert is_isolated("acme", None, ("*",))  # a -p module
    assert not is_isolated("local", "lorenz-local", ("*",))
    assert not is_isolated("local", "Lorenz_Local", ("*",))
    assert is_isolated("local", "lorenz-local", ("local",))
    assert not is_isolated("acme", "acme-pack", ("beta",))


def test_the_hint_is_read_leniently(tmp_path: Path) -> None:
    path = tmp_path / "WORKFLOW.md"
    assert isolation_hint(None) == () and isolation_hint(path) == ()
    path.write_text("---\nserver:\n  isolated_packs: [acme, '*']\n---\n", encoding="utf-8")
    assert isolation_hint(path) == ("acme", "*")
    path.write_text("---\nserver:\n  isolated_packs: acme\n---\n", encoding="utf-8")
    assert isolation_hint(path) == ()  # the full parse names the problem
    path.write_text("---\nserver: [\n---\n", encoding="utf-8")
    assert isolation_hint(path) == ()


def _settings() -> Settings:
    return Settings(
        tracker=TrackerSettings(
            kind="acme", endpoint="https://acme.example", api_key="tracker-secret", options={"a": 1}
        ),
        tool_options={"acme": {"token": "acme-secret"}, "beta": {"token": "beta-secret"}},
        server=ServerSettings(token="mcp-secret", tool_timeout_seconds=7, pack_memory_mb=300, port=9999),
        body="The prompt.",
        secrets=frozenset({"tracker-secret", "acme-secret", "beta-secret", "mcp-secret"}),
    )


def test_a_child_is_told_only_its_slice_and_its_own_secrets() -> None:
    sliced = pack_settings(_settings(), "acme", own_tracker=False)
    assert sliced.tool_options == {"acme": {"token": "acme-secret"}}
    assert sliced.tracker.kind == "acme" and sliced.tracker.api_key is None and sliced.tracker.endpoint is None
    assert sliced.tracker.options == {}
    assert sliced.server.token is None and sliced.server.port == ServerSettings().port
    assert (sliced.server.tool_timeout_seconds, sliced.server.pack_memory_mb) == (7, 300)
    assert sliced.body == "" and sliced.secrets == frozenset({"acme-secret"})


def test_the_pack_of_the_trackers_distribution_gets_the_tracker() -> None:
    sliced = pack_settings(_settings(), "acme", own_tracker=True)
    assert sliced.tracker.api_key == "tracker-secret" and sliced.tracker.options == {"a": 1}
    assert sliced.secrets == frozenset({"acme-secret", "tracker-secret"})


def _discovery(*infos: PluginInfo, stub: IsolatedPackStub | None = None) -> Discovery:
    tools = ToolRegistry()
    if stub is not None:
        tools.register(stub)
    return Discovery(tools=tools, trackers=TrackerRegistry(), plugins=infos)


def test_a_plan_withholds_the_environment_variables_of_other_secrets() -> None:
    source = Source(distribution="acme-pack", version="1.0", entry_point="acme")
    stub = IsolatedPackStub("acme", source)
    info = PluginInfo(name="acme", distribution="acme-pack", version="1.0", packs=("acme",))
    settings = _settings()
    settings = Settings(
        tracker=settings.tracker,
        tool_options=settings.tool_options,
        server=ServerSettings(token="mcp-secret", isolated_packs=("*",)),
        secrets=settings.secrets,
    )
    env = {"LORENZ_MCP_TOKEN": "mcp-secret", "ACME": "acme-secret", "URL": "https://u:tracker-secret@x", "HOME": "/h"}
    plan = plan_for(stub, settings, _discovery(info, stub=stub), env)
    assert plan is not None and plan.source == source
    assert plan.withheld == frozenset({"LORENZ_MCP_TOKEN", "URL"})
    assert plan.secrets == settings.secrets  # the host redacts the child's stderr with all of them


def test_a_plan_is_the_same_for_the_same_pack_and_slice() -> None:
    source = Source(distribution="acme-pack", version="1.0", entry_point="acme")
    stub = IsolatedPackStub("acme", source)
    discovery = _discovery(stub=stub)
    isolating = ServerSettings(isolated_packs=("acme",))
    first = plan_for(stub, Settings(server=isolating, body="one"), discovery, {})
    second = plan_for(stub, Settings(server=isolating, body="two"), discovery, {})
    third = plan_for(stub, Settings(server=isolating, tool_options={"acme": {"x": 1}}), discovery, {})
    assert first is not None and second is not None and third is not None
    assert first.key == second.key != third.key
    assert plan_for(stub, Settings(), discovery, {}) is None  # not isolated


def test_an_object_handed_in_process_cannot_be_isolated() -> None:
    class Pack:
        name = "objpack"

    with pytest.raises(ValueError, match="cannot run isolated"):
        plan_for(Pack(), Settings(server=ServerSettings(isolated_packs=("objpack",))), _discovery(), {})  # type: ignore[arg-type]


def test_exits_read_as_signals_or_codes() -> None:
    assert describe_exit(-11) == "signal 11"
    assert describe_exit(3) == "exit code 3"


class _Pipe:
    """The stderr pipe's transport as the relay sees it: paused or reading."""

    def __init__(self) -> None:
        self.reading = True
        self.pauses = 0

    def is_reading(self) -> bool:
        return self.reading

    def pause_reading(self) -> None:
        self.reading, self.pauses = False, self.pauses + 1

    def resume_reading(self) -> None:
        self.reading = True


def test_a_flooded_stderr_pipe_is_paused_while_its_lines_are_dropped() -> None:
    """Past the bucket the relay stops reading for a moment, so a flooding pack waits on its own
    full pipe instead of the host reading what it throws away; it reads again afterwards."""
    import asyncio
    import logging

    from lorenz import StderrRelay
    from lorenz.isolation.process import STDERR_LIMITS

    async def flood() -> tuple[int, bool, bool]:
        name = "lorenz: pack acme [pid 1]"
        relay = StderrRelay(logging.getLogger("lorenz.isolation"), lambda: name, [], STDERR_LIMITS)
        pipe = _Pipe()
        relay.transport = pipe  # type: ignore[assignment]
        relay.feed(b"within the burst\n" * 10)
        quiet = pipe.pauses
        relay.feed(b"x\n" * (STDERR_LIMITS.line_burst + 100))
        paused = not pipe.reading
        await asyncio.sleep(STDERR_LIMITS.pause_seconds * 3)
        relay.flush()
        return quiet, paused, pipe.reading

    quiet, paused, reading_again = asyncio.run(flood())
    assert (quiet, paused, reading_again) == (0, True, True)
