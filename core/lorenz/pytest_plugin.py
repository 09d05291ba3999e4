"""The pytest plugin ``lorenz-core`` installs (the ``pytest11`` entry point ``lorenz.testing``): the
``fake_tracker`` and ``lorenz_host`` fixtures. Every pytest run in an environment with Lorenz imports
it, so it loads :mod:`lorenz.testing` (and through it the host and the CLI) only when a test asks
for one of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pathlib import Path

    from lorenz.testing import FakeTracker, HostFactory, PackHost

__all__ = ["fake_tracker", "lorenz_host"]


@pytest.fixture
def fake_tracker() -> FakeTracker:
    """A fresh :class:`~lorenz.testing.FakeTracker` (kind ``lorenz-testing``); pass it to
    ``lorenz_host(tracker=...)``."""
    from lorenz.testing import FakeTracker  # on use: every pytest run imports this module

    return FakeTracker()


@pytest.fixture
def lorenz_host(tmp_path: Path) -> HostFactory:
    """A factory: ``lorenz_host(*packs, plugins=(), options=None, tracker=None, transport=None)``
    returns a :class:`~lorenz.testing.PackHost` whose workflow lives in a temporary directory."""
    from lorenz.testing import make_pack_host  # on use: every pytest run imports this module

    def make(*packs: Any, **kwargs: Any) -> PackHost:
        kwargs.setdefault("base_dir", tmp_path)
        return make_pack_host(*packs, **kwargs)

    return make
