"""The project files ``lorenz new-pack`` writes around the example pack (packaging, the plugin hook,
the tracker, the README), as :class:`string.Template` texts (``$$`` is a literal ``$``). A generated
project passes its own ``nox -s devcheck`` as generated, and tests/test_authoring_scaffold.py runs
those checks against one; the pack's code and tests are in :mod:`.example_pack`."""

from __future__ import annotations

PYPROJECT = """\
[build-system]
requires = ["hatchling>=1.25"]
build-backend = "hatchling.build"

[project]
name = "${distribution}"
version = "0.1.0"
description = "A Lorenz tool pack: ${pack}"
readme = "README.md"
requires-python = ">=3.11"
dependencies = ["lorenz-core>=0.1", "attrs>=24.2"]

[project.optional-dependencies]
test = ["pytest>=8", "anyio>=4"]
# `nox -s devcheck` installs these: the tests' and the checkers'.
dev = ["${distribution}[test]", "ruff>=0.8", "mypy>=1.13"]

# How Lorenz finds the pack once it is installed: `lorenz plugins` lists it.
[project.entry-points."lorenz.tool_packs"]
${pack} = "${module}.plugin"

[tool.hatch.build.targets.wheel]
packages = ["${module}"]

[tool.pytest.ini_options]
testpaths = ["tests"]
# lorenz.testing ships with lorenz-core: the lorenz_host and fake_tracker fixtures.
addopts = ["-p", "lorenz.testing", "--import-mode=importlib"]

[tool.ruff]
line-length = 120
target-version = "py311"
extend-exclude = [".nox"]

[tool.ruff.lint]
select = ["E", "F", "W", "I", "B", "UP", "RUF", "SIM", "PT", "ASYNC"]

[tool.ruff.lint.isort]
known-first-party = ["${module}"]

[tool.mypy]
strict = true
python_version = "3.11"
"""

NOXFILE = '''\
"""`nox -s devcheck`: every check this project must pass, in one command."""

import nox


@nox.session
def devcheck(session: nox.Session) -> None:
    """ruff (lint and format), mypy --strict, `lorenz lint` (the tool contract) and the tests."""
    session.install("-e", ".[dev]")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("mypy", "--strict", "${module}")
    session.run("lorenz", "lint", ".")
    session.run("pytest", *session.posargs)
'''


INIT = '''\
"""The ``${pack}`` Lorenz tool pack."""

from __future__ import annotations

from .tools import PACK

__all__ = ["PACK"]
'''

PLUGIN = '''\
"""Entry point ``lorenz.tool_packs: ${pack}``."""

from __future__ import annotations

from collections.abc import Callable

from lorenz import ToolProvider, hookimpl

from .tools import PACK

__all__ = ["lorenz_register_tool_packs"]


@hookimpl
def lorenz_register_tool_packs(register: Callable[[ToolProvider], None]) -> None:
    """Pack ``${pack}``."""
    register(PACK)
'''

PLUGIN_TRACKER = '''\
"""Entry points of ``${pack}``: its tracker and its tool pack."""

from __future__ import annotations

from collections.abc import Callable

from lorenz import ToolProvider, TrackerProvider, hookimpl

from .tools import PACK
from .tracker import TRACKER

__all__ = ["lorenz_register_tool_packs", "lorenz_register_trackers"]


@hookimpl
def lorenz_register_trackers(register: Callable[[TrackerProvider], None]) -> None:
    """Tracker kind ``${pack}``."""
    register(TRACKER)


@hookimpl
def lorenz_register_tool_packs(register: Callable[[ToolProvider], None]) -> None:
    """Pack ``${pack}``."""
    register(PACK)
'''

TRACKER = '''\
"""The ``${pack}`` tracker: replace the example issues with calls to your tracker's API
(through ``context.http``, the host's ``httpx.AsyncClient``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lorenz import Issue, Settings, TrackerContext

__all__ = ["TRACKER", "${cls}Client", "${cls}Tracker"]

EXAMPLE_ISSUES = (
    Issue(
        id="1",
        identifier="${upper}-1",
        title="Try the ${pack} pack",
        state="Todo",
        state_type="unstarted",
    ),
    Issue(
        id="2",
        identifier="${upper}-2",
        title="Ship it",
        state="Done",
        state_type="completed",
    ),
)


class ${cls}Client:
    def __init__(self, issues: Sequence[Issue], active_states: Sequence[str]) -> None:
        self._issues = tuple(issues)
        self._active = {state.casefold() for state in active_states}

    async def fetch_candidate_issues(self) -> list[Issue]:
        return [issue for issue in self._issues if issue.state.casefold() in self._active]

    async def fetch_issues_by_ids(self, ids: Sequence[str]) -> list[Issue]:
        by_key = {key: issue for issue in self._issues for key in (issue.id, issue.identifier)}
        return [by_key[key] for key in ids if key in by_key]


class ${cls}Tracker:
    kind = "${pack}"

    def create_client(self, settings: Settings, context: TrackerContext) -> ${cls}Client:
        return ${cls}Client(EXAMPLE_ISSUES, settings.tracker.active_states)

    def default_tool_packs(self, settings: Settings) -> list[str]:
        """The packs mounted with this tracker."""
        return ["${pack}"]

    def project_url(self, settings: Settings) -> Any:
        return None


TRACKER = ${cls}Tracker()
'''

README = """\
# ${distribution}

A [Lorenz](https://pypi.org/project/lorenz-core/) tool pack: `${pack}`.

| Tool | What it does |
|---|---|
| `${tool}` | Reverse a text and report its length (an example: replace it with yours). |
| `${pack}_save_note` | Save a note under `notes_dir` once the user confirms (an example write tool). |

## Install

```sh
pip install ${distribution}   # or, from this directory: pip install .
lorenz plugins                # lists ${pack} (${distribution} 0.1.0) and its packs
```

Mount it in `WORKFLOW.md`${mount_note}:

```yaml
---
tracker:
  kind: ${tracker_kind}
tools:
  ${pack}:
    max_length: 1000
    notes_dir: notes   # relative to WORKFLOW.md
---
```

```sh
lorenz tools
lorenz call ${tool} '{"text": "stressed"}'
```

## Develop

```sh
nox -s devcheck        # ruff, mypy --strict, `lorenz lint .` and pytest, in a fresh virtualenv
```

Or one check at a time, in an environment of your own:

```sh
pip install -e '.[dev]'
pytest                 # the lorenz.testing fixtures: lorenz_host, fake_tracker
lorenz lint .          # naming, schemas, error contracts, format parity
```

`nox -R -s devcheck` reuses the session's virtualenv and skips the install.
"""

GITIGNORE = """\
__pycache__/
*.egg-info/
dist/
build/
.venv/
.nox/
.mypy_cache/
.ruff_cache/
.pytest_cache/
"""
