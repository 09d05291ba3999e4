"""Shared pytest configuration: async tests run on asyncio through anyio's pytest plugin, and
hypothesis profiles: a fast default for the normal suite, ``fuzz`` (``nox -s fuzz``) for long runs."""

import os

import pytest
from hypothesis import HealthCheck, settings

# The normal suite runs 200 examples per fuzz target (targets leave max_examples to the
# profile); `nox -s fuzz` selects the `fuzz` profile (LORENZ_HYPOTHESIS_PROFILE=fuzz): 5,000 each.
settings.register_profile("default", max_examples=200, deadline=None)
settings.register_profile(
    "fuzz", max_examples=5000, deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.load_profile(os.environ.get("LORENZ_HYPOTHESIS_PROFILE", "default"))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
