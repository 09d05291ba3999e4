"""Calls that outrun a rate limit from several tasks at once, and the bounds R·t + B puts on how
many calls a token bucket accepts meanwhile (the quota tests' helper, not a test module)."""

from __future__ import annotations

import itertools
import time
from collections.abc import Sequence
from typing import Any

import anyio
import mcp
from attrs import frozen


@frozen
class Tally:
    accepted: int
    refusals: list[dict[str, Any]]
    #: The fewest and the most calls R·t + B allows, from when the calls were sent and answered.
    least: float
    most: float


async def hammer(clients: Sequence[mcp.Client], rate: float, burst: float, *, tasks: int = 4) -> Tally:
    """One ``ping`` on each client (its connection made), then ``tasks`` tasks calling ``ping`` on
    the clients in turn until, past 1.5 s, a call is refused (the bucket is empty then: no token is
    left unclaimed). With several calls in flight the calls outrun the rate however slow the machine,
    so the bucket fills, and tokens are lost, only while the server stalls."""
    accepted, refusals = 0, []
    first_sent = time.monotonic()
    for client in clients:
        accepted += not (await client.call_tool("ping", {})).is_error
    started = time.monotonic()
    answered = [started]
    ended_by: list[float] = []  # when the refusal that ended it was sent

    async def calls(turn: int) -> None:
        nonlocal accepted
        while not ended_by and answered[-1] - started < 30:
            sent = time.monotonic()
            result = await clients[turn % len(clients)].call_tool("ping", {})
            turn += 1
            answered.append(time.monotonic())
            if not result.is_error:
                accepted += 1
                continue
            assert result.structured_content is not None
            refusals.append(result.structured_content["error"])
            if answered[-1] - started >= 1.5 and not ended_by:
                ended_by.append(sent)

    async with anyio.create_task_group() as group:
        for turn in range(tasks):
            group.start_soon(calls, turn)
    # A stall longer than burst/rate with no answer: a full bucket could not hold what it earned.
    times = sorted(answered)
    lost = sum(max(0.0, after - before - burst / rate) * rate for before, after in itertools.pairwise(times))
    # The bucket filled at the first decision (between first_sent and started) and was empty at the
    # ending refusal's (after ended_by).
    end = ended_by[0] if ended_by else started
    return Tally(accepted, refusals, rate * (end - started) + burst - lost, rate * (times[-1] - first_sent) + burst)
