"""Fixtures for the lorenz-jira tests: loopback fakes (REST and MCP) and settings builders."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fakes"))

from jira_fake_mcp import FakeJiraMcp
from jira_fake_rest import FakeJira

from lorenz.testing import loopback_server


@pytest.fixture(scope="session")
def jira_server() -> Iterator[FakeJira]:
    fake = FakeJira()
    with loopback_server(fake.app) as server:
        fake.base_url = server.base_url
        yield fake


@pytest.fixture
def jira(jira_server: FakeJira) -> FakeJira:
    """The fake Jira site, emptied: no issues, no comments, nothing scripted."""
    jira_server.reset()
    return jira_server


@pytest.fixture(scope="session")
def jira_mcp_server() -> Iterator[FakeJiraMcp]:
    fake = FakeJiraMcp()
    with loopback_server(fake.app) as server:
        fake.url = f"{server.base_url}/mcp"
        yield fake


@pytest.fixture
def jira_mcp(jira_mcp_server: FakeJiraMcp) -> FakeJiraMcp:
    """The fake remote Jira MCP server, emptied."""
    jira_mcp_server.reset()
    return jira_mcp_server
