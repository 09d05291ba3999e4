"""Fixtures for the lorenz-slack tests: one loopback fake Slack Web API per session, reset per test."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from lorenz_slack.transport import clear_team_url_cache

sys.path.insert(0, str(Path(__file__).parent))

from slack_fake import FakeSlack, LoopbackServer


@pytest.fixture(scope="session")
def slack_server() -> Iterator[FakeSlack]:
    fake = FakeSlack()
    server = LoopbackServer(fake.app).start()
    fake.url = f"http://127.0.0.1:{server.port}/api"
    try:
        yield fake
    finally:
        server.stop()


@pytest.fixture
def fake(slack_server: FakeSlack) -> FakeSlack:
    """The fake Slack, emptied: no channels, users or scripted faults."""
    slack_server.reset()
    clear_team_url_cache()
    return slack_server


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    """The host-owned client a tracker or tool is given."""
    async with httpx.AsyncClient() as client:
        yield client
