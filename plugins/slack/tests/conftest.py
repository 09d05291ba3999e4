"""Fixtures for the lorenz-slack tests: one loopback fake Slack Web API per session, reset per test."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from lorenz_slack.web_transport import clear_team_url_cache

sys.path.insert(0, str(Path(__file__).parent))

from slack_fake import FakeSlack

from lorenz.testing import loopback_server


@pytest.fixture(scope="session")
def slack_server() -> Iterator[FakeSlack]:
    fake = FakeSlack()
    with loopback_server(fake.app) as server:
        fake.url = f"{server.base_url}/api"
        yield fake


@pytest.fixture
def fake(slack_server: FakeSlack) -> FakeSlack:
    """The fake Slack, emptied: no channels, users or scripted faults."""
    slack_server.reset()
    clear_team_url_cache()
    return slack_server
