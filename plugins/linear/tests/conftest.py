"""Fixtures for the lorenz-linear tests: one loopback fake Linear for the session, reset per test."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from linear_fake import FakeLinear

from lorenz.testing import loopback_server


@pytest.fixture(scope="session")
def linear_server() -> Iterator[FakeLinear]:
    fake = FakeLinear()
    with loopback_server(fake.app) as server:
        fake.url = f"{server.base_url}/graphql"
        yield fake


@pytest.fixture
def fake(linear_server: FakeLinear) -> FakeLinear:
    """The fake Linear endpoint, emptied: no issues, no projects, no scripted responses."""
    linear_server.reset()
    return linear_server
