"""Developer sessions: ``nox -s tests``, ``nox -s lint``, ``nox -s typecheck``."""

import nox

nox.options.sessions = ["tests", "lint", "typecheck"]
PLUGINS = ["plugins/local", "plugins/jira", "plugins/linear", "plugins/slack"]


@nox.session
def tests(session: nox.Session) -> None:
    """The whole suite, against editable installs of the core and every bundled plugin."""
    session.install("-r", "requirements-dev.txt")
    session.run("python", "-m", "pytest", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff over the core, the plugins, tests and benchmarks."""
    session.install("ruff")
    session.run("ruff", "check", ".")


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy --strict over the core and every plugin package."""
    session.install("-r", "requirements-dev.txt")
    session.run("mypy", "--strict", "core/lorenz")
    for plugin in PLUGINS:
        session.run("mypy", "--strict", plugin, success_codes=[0])
