"""`nox -s devcheck`: every check this project must pass, in one command."""

import nox


@nox.session
def devcheck(session: nox.Session) -> None:
    """ruff (lint and format), mypy --strict, `lorenz lint` (the tool contract) and the tests."""
    session.install("-e", ".[dev]")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("mypy", "--strict", "lorenz_template_pack")
    session.run("lorenz", "lint", ".")
    session.run("pytest", *session.posargs)
