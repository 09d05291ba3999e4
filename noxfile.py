"""Developer sessions: ``nox -s tests``, ``nox -s lint``, ``nox -s typecheck``, ``nox -s fuzz``,
``nox -s docs``, ``nox -s sandboxed``, ``nox -s soak``."""

import nox

nox.options.sessions = ["tests", "lint", "typecheck"]
PACKAGES = [
    "core/lorenz",
    *(f"plugins/{name}/lorenz_{name}" for name in ("local", "jira", "linear", "slack", "mcp", "quota")),
]


@nox.session
def tests(session: nox.Session) -> None:
    """The whole suite, against editable installs of the core and every bundled plugin."""
    session.install("-r", "requirements-dev.txt")
    session.run("python", "-m", "pytest", *session.posargs)


@nox.session
def sandboxed(session: nox.Session) -> None:
    """Every bundled pack's end-to-end tests with the pack sandboxed (``server.sandboxed_packs``)."""
    session.install("-r", "requirements-dev.txt")
    session.env["PYTHONPATH"] = "tests"
    tests = ["plugins/local/tests", "plugins/jira/tests", "plugins/linear/tests", "plugins/slack/tests"]
    session.run("python", "-m", "pytest", "-p", "sandboxed_suite", *(session.posargs or tests))


@nox.session
def lint(session: nox.Session) -> None:
    """ruff (lint and format check) over everything, and `lorenz lint` over the bundled packs and the example."""
    session.install("-r", "requirements-dev.txt")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("lorenz", "lint")
    session.run("lorenz", "lint", "examples/weather")


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy --strict over the core and every plugin package."""
    session.install("-r", "requirements-dev.txt")
    for package in PACKAGES:
        session.run("mypy", "--strict", package)


@nox.session
def fuzz(session: nox.Session) -> None:
    """The fuzz targets (``-m fuzz``) at the ``fuzz`` hypothesis profile: >= 5,000 examples each."""
    session.install("-r", "requirements-dev.txt")
    session.env["LORENZ_HYPOTHESIS_PROFILE"] = "fuzz"
    session.run("python", "-m", "pytest", "-m", "fuzz", *session.posargs)


@nox.session
def soak(session: nox.Session) -> None:
    """The concurrency tests at full size (``LORENZ_SOAK=1``): four workers writing one board."""
    session.install("-r", "requirements-dev.txt")
    session.env["LORENZ_SOAK"] = "1"
    session.run("python", "-m", "pytest", "tests/test_host_workers.py", "-k", "lose_nothing", *session.posargs)


@nox.session
def docs(session: nox.Session) -> None:
    """The README's and docs/*.md's console sessions, run as written (also part of ``tests``)."""
    session.install("-r", "requirements-dev.txt")
    session.run("python", "-m", "pytest", "tests/test_docs_commands.py", *session.posargs)
