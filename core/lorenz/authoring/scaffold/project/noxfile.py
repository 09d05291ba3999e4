"""`nox -s devcheck`: every check this project must pass, in one command."""

from pathlib import Path

import nox

# `lorenz new-pack` put a wheel of the lorenz-core that generated this project in wheelhouse/: the
# check installs that same core first, whether or not your package index has lorenz-core. Once it
# does (`pip index versions lorenz-core`), delete wheelhouse/ and the core comes from the index.
WHEELHOUSE = Path(__file__).parent / "wheelhouse"


@nox.session
def devcheck(session: nox.Session) -> None:
    """ruff (lint and format), mypy --strict, `lorenz lint` (the tool contract) and the tests."""
    for wheel in sorted(WHEELHOUSE.glob("lorenz_core-*.whl")):
        session.install(str(wheel))
    session.install("-e", ".[dev]")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("mypy", "--strict", "lorenz_template_pack")
    session.run("lorenz", "lint", ".")
    session.run("pytest", *session.posargs)
