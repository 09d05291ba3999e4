"""Fixtures shared by the bundled plugins' test suites."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    """The host-owned client a tracker or tool is given."""
    async with httpx.AsyncClient() as client:
        yield client
