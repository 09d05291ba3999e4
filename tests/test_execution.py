"""Running tool calls: contained, bounded per pack, answered at the timeout, watched on the loop."""

from __future__ import annotations

import asyncio
import json
import logging
import math
import threading
import time
from typing import Any

import anyio
import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lorenz import Settings, ToolContext, ToolResult, run_in_thread, tool_success
from lorenz.host.ops.watchdog import LoopWatchdog
from lorenz.toolcall.execution import ToolRunner, call_pack
from lorenz.toolcall.wire import (
    ResultTooLarge,
    compact_json,
    encode_payload,
    json_survey,
    lone_surrogate_path,
    refuse_unsafe_arguments,
)

pytestmark = pytest.mark.anyio


class Pack:
    """A pack whose one tool runs ``behaviour``."""

    def __init__(self, name: str, behaviour: Any) -> None:
        self.name = name
        self.behaviour = behaviour

    async def execute_tool(self, name: str, input: Any, context: Any) -> ToolResult:
        return await self.behaviour()


def _context() -> ToolContext:
    return ToolContext(settings=Settings(), http=httpx.AsyncClient())


async def _run(runner: ToolRunner, pack: Pack, *, time_limit: float = 5.0, concurrency: int = 4) -> ToolResult:
    outcome = await runner.run(pack, "go", {}, _context(), time_limit=time_limit, concurrency=concurrency)
    return outcome.result


async def test_own_cancelled_error_is_a_failure_not_a_closed_connection() -> None:
    async def cancels() -> ToolResult:
        raise asyncio.CancelledError

    result = await _run(ToolRunner(), Pack("rude", cancels))
    assert result.success is False
    assert result.error == "pack rude: execute_tool raised CancelledError"


@pytest.mark.parametrize("exc", [SystemExit(2), KeyboardInterrupt(), MemoryError("full")])
async def test_base_exceptions_are_contained_in_line(exc: BaseException) -> None:
    async def raises() -> ToolResult:
        raise exc

    result = await call_pack(Pack("rude", raises), "go", {}, _context())  # type: ignore[arg-type]
    assert result.success is False
    assert result.error is not None and result.error.startswith(f"pack rude: execute_tool raised {type(exc).__name__}")


async def test_callers_cancellation_cancels_the_pack() -> None:
    """A client that cancels (or goes away) cancels the pack's task; the runner re-raises."""
    seen = threading.Event()

    async def waits() -> ToolResult:
        try:
            await anyio.sleep_forever()
        except asyncio.CancelledError:
            seen.set()
            raise
        raise AssertionError

    runner = ToolRunner()
    with anyio.move_on_after(0.2):
        await _run(runner, Pack("slow", waits))
    await anyio.sleep(0.05)
    assert seen.is_set()
    assert runner.abandoned() == []


async def test_a_call_cancelled_before_the_pack_starts_gives_its_slot_back() -> None:
    """A pack task cancelled before its first step (a client gone at once, the host stopping): its
    coroutine's own ``finally`` never runs, and its slot must come back all the same."""
    ran: list[bool] = []

    async def records() -> ToolResult:
        ran.append(True)
        return tool_success({})

    loop = asyncio.get_running_loop()

    def cancelled_at_birth(loop: asyncio.AbstractEventLoop, coro: Any) -> asyncio.Task[Any]:
        task = asyncio.Task(coro, loop=loop)
        if getattr(coro, "__name__", "") == "_guarded":
            task.cancel()
        return task

    runner = ToolRunner()
    loop.set_task_factory(cancelled_at_birth)
    try:
        for _ in range(3):  # more calls than the pack has slots
            assert (await _run(runner, Pack("quick", records), concurrency=2)).error == "tool go was cancelled"
    finally:
        loop.set_task_factory(None)
    await asyncio.sleep(0)
    assert ran == []
    assert runner.in_flight("quick") == 0
    assert (await _run(runner, Pack("quick", records), concurrency=2)).success


async def test_a_pack_stuck_in_a_thread_is_answered_at_the_deadline() -> None:
    release = threading.Event()

    async def stuck() -> ToolResult:
        await anyio.to_thread.run_sync(release.wait)  # not abandon_on_cancel: only the runner can answer
        return tool_success()

    runner = ToolRunner()
    started = time.monotonic()
    result = await _run(runner, Pack("stuck", stuck), time_limit=0.2)
    assert result.error == "tool go did not finish within 0.2 s (server.tool_timeout_seconds)"
    assert time.monotonic() - started < 3
    release.set()


async def test_hung_calls_fill_only_their_own_packs_slots() -> None:
    """Two hung calls take a concurrency-2 pack's slots: its next call waits and is told it is busy,
    while another pack answers at once."""
    release = anyio.Event()

    async def hangs() -> ToolResult:
        await release.wait()
        return tool_success()

    async def quick() -> ToolResult:
        return tool_success({"ok": True})

    runner = ToolRunner()
    hung = Pack("hung", hangs)
    async with anyio.create_task_group() as tg:
        for _ in range(2):
            tg.start_soon(lambda: _run(runner, hung, concurrency=2))
        await anyio.sleep(0.05)
        assert runner.in_flight("hung") == 2
        busy = await _run(runner, hung, time_limit=0.1, concurrency=2)
        assert busy.error is not None and busy.error.startswith("pack hung is busy: all 2 of its call slots")
        assert (await _run(runner, Pack("other", quick), concurrency=2)).result == {"ok": True}
        release.set()
    assert runner.in_flight("hung") == 0


async def test_run_in_thread_counts_against_the_packs_own_limit() -> None:
    """Inside a tool call, run_in_thread uses the pack's thread limiter, not the shared pool."""
    seen: list[int] = []
    gate = threading.Event()

    async def threads() -> ToolResult:
        def work() -> None:
            gate.wait(2)

        limiter = anyio.to_thread.current_default_thread_limiter()
        before = limiter.borrowed_tokens
        task = asyncio.ensure_future(run_in_thread(work))
        await anyio.sleep(0.05)
        seen.append(limiter.borrowed_tokens - before)
        gate.set()
        await task
        return tool_success()

    assert (await _run(ToolRunner(), Pack("threads", threads))).success
    assert seen == [0]


async def test_watchdog_names_the_pack_blocking_the_loop(caplog: pytest.LogCaptureFixture) -> None:
    async def blocks() -> ToolResult:
        time.sleep(0.5)  # noqa: ASYNC251 - the misbehaviour under test
        return tool_success()

    watchdog = LoopWatchdog(asyncio.get_running_loop(), blocked_after=0.15)
    watchdog.start()
    try:
        with caplog.at_level(logging.WARNING, logger="lorenz.host"):
            assert (await _run(ToolRunner(), Pack("sleepy", blocks))).success
            await anyio.sleep(0.3)
    finally:
        watchdog.stop()
    named = [record for record in caplog.records if "pack sleepy blocks the event loop in tool go" in record.message]
    assert len(named) == 1  # one block, named once (a loaded machine may starve the loop into blocks of its own)
    assert watchdog.blocks >= 1


def test_results_are_bounded_before_they_are_built() -> None:
    with pytest.raises(ResultTooLarge, match="more than 1,000 bytes of JSON"):
        encode_payload({"blob": "x" * 5000}, max_bytes=1000)
    with pytest.raises(ResultTooLarge):
        encode_payload({"items": ["é" * 300] * 2}, max_bytes=1000)  # 1,200 bytes of UTF-8 from 600 characters
    payload, text = encode_payload({"ok": [1, 2]}, max_bytes=1000)
    assert payload == {"ok": [1, 2]} and text == '{\n  "ok": [\n    1,\n    2\n  ]\n}'


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4),
    max_leaves=30,
)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(_JSON_VALUES)
def test_result_text_is_the_pretty_json_of_the_payload_whichever_encoder_writes_it(value: Any) -> None:
    """The fast encoder (plain data) and the json module (floats, anything else) write one text."""
    payload, text = encode_payload({"value": value}, max_bytes=1 << 20)
    assert payload == {"value": value}
    assert text == json.dumps({"value": value}, indent=2, ensure_ascii=False)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(_JSON_VALUES | st.sets(st.integers(), max_size=2) | st.just({"lone": "a\ud800"}))
def test_compact_json_writes_plain_data_and_leaves_the_rest_to_the_json_module(value: Any) -> None:
    """What an isolated pack's frames are written with: the same values as ``json.dumps``, for plain
    data only (a set, a lone surrogate: ``None``, the json module's turn)."""
    fast = compact_json(value)
    assert (fast is not None) is (json_survey(value, math.inf)[1] and value != {"lone": "a\ud800"})
    if fast is not None:
        assert json.loads(fast) == json.loads(json.dumps(value, ensure_ascii=False))


_EDGE_FLOATS = [0.0, -0.0, 1e-4, 9.999999999999999e-05, 1e16, 9999999999999998.0, 1e-5, 1e-7, 1e22, -2.5, 0.1]


@given(st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from(_EDGE_FLOATS))
def test_floats_pydantic_core_writes_as_repr_does_take_the_fast_encoder(value: float) -> None:
    """Between 1e-4 and 1e16 (and 0) pydantic_core writes a float as ``repr`` does; outside it one
    writes ``1e16``/``1e-5`` where the other writes ``1e+16``/``1e-05``, so the json module does."""
    from lorenz.toolcall.wire import _survey

    fast = value == 0.0 or 1e-4 <= abs(value) < 1e16
    assert _survey({"value": [value]}, 1 << 20)[1] is fast
    _, text = encode_payload({"value": [value]}, max_bytes=1 << 20)
    assert text == json.dumps({"value": [value]}, indent=2, ensure_ascii=False)


def test_lone_surrogates_become_replacement_characters_in_results() -> None:
    payload, text = encode_payload({"status": "\ud800", "\udfff": ["a\ud83d"]}, max_bytes=1000)
    assert payload == {"status": "\ufffd", "\ufffd": ["a\ufffd"]}
    text.encode("utf-8")  # encodable


def test_arguments_holding_lone_surrogates_are_refused_naming_the_field() -> None:
    assert lone_surrogate_path({"a": ["ok", {"b": "x\ud800"}]}) == "a.1.b"
    assert lone_surrogate_path({"fine": "😀"}) is None
    refused = refuse_unsafe_arguments("local_update_status", {"issueId": "BOARD-1", "status": "\ud800"})
    assert refused is not None
    assert refused.error == (
        "invalid arguments for tool local_update_status: status: contains a lone surrogate, which is not valid Unicode"
    )


_NESTED = st.recursive(
    st.none() | st.integers() | st.text(alphabet=st.characters(codec=None, exclude_categories=())),
    lambda children: (
        st.lists(children, max_size=5)
        | st.dictionaries(st.text(alphabet=st.characters(exclude_categories=()), max_size=3), children, max_size=5)
    ),
    max_leaves=40,
)


def _total_values(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + sum(_total_values(item) for item in value.values())
    if isinstance(value, list):
        return 1 + sum(_total_values(item) for item in value)
    return 1


@given(_NESTED, st.integers(0, 60))
def test_the_argument_checks_fast_paths_agree_with_their_full_walks(value: Any, limit: int) -> None:
    """The quick count and surrogate scan decide as the walks that name the path do."""
    from lorenz.toolcall.wire import _any_surrogate, _count_exceeds, _values_over

    assert _count_exceeds(value, limit) is (_total_values(value) > limit)
    assert (_values_over(value, limit) is not None) is (_total_values(value) > limit)
    assert _any_surrogate(value) is (lone_surrogate_path(value) is not None)


def _values_over_as_before(value: Any, limit: int) -> tuple[str, int] | None:
    """The count of values as it was before issue 28 (a path spelled per value): the reference."""
    count, largest = 0, ("", 0)
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, path = stack.pop()
        count += 1
        if isinstance(item, dict):
            children = [(child, f"{path}.{key}" if path else str(key)) for key, child in item.items()]
        elif isinstance(item, list):
            children = [(child, f"{path}.{index}" if path else str(index)) for index, child in enumerate(item)]
        else:
            children = []
        if len(children) > largest[1]:
            largest = (path, len(children))
        if count + len(children) > limit:
            return largest
        stack.extend(children)
    return largest


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=3), inner, max_size=6),
    max_leaves=60,
)


@given(value=JSON_VALUES, limit=st.integers(min_value=1, max_value=40))
@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
def test_too_many_values_names_the_same_path_as_before(value: Any, limit: int) -> None:
    """Issue 28: the count spells a path only when it refuses; the path it names is unchanged."""
    from lorenz.toolcall.wire import _count_exceeds, _values_over

    expected = _values_over_as_before(value, limit) if _count_exceeds(value, limit) else None
    assert _values_over(value, limit) == expected


def test_too_many_values_does_not_walk_the_list_that_passes_the_limit() -> None:
    """Issue 28: a 150,000-item list is refused after its length is read, with no path per item."""
    from collections.abc import Iterator, Mapping

    walked: list[str] = []

    class Entries(Mapping[str, int]):
        def __init__(self, size: int) -> None:
            self.size = size

        def __getitem__(self, key: str) -> int:
            return 0

        def __len__(self) -> int:
            return self.size

        def __iter__(self) -> Iterator[str]:
            walked.append("keys")
            return (str(index) for index in range(self.size))

        def items(self) -> Any:
            walked.append("items")
            return super().items()

    refused = refuse_unsafe_arguments("local_query", {"where": {"value": Entries(150_000)}})
    assert refused is not None and refused.error == (
        "invalid arguments for tool local_query: where.value: 150,000 values; one call may hold at most 20,000 in all"
    )
    assert "items" not in walked
