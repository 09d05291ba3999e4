"""``python -m lorenz.sandbox.launch POLICY -- PROGRAM ARGS…``: apply a :class:`Sandbox` (JSON) to
this process, then ``exec`` the program, which inherits the confinement (and everything it starts).

The system's and the runtime's directories are executable whatever ``subprocess`` says (the program
must start from them); the temporary directory and ``write`` paths only when ``subprocess`` is true.
"""

from __future__ import annotations

import json
import os
import sys

import cattrs

from . import landlock, seccomp
from .policy import Sandbox, ruleset_for

__all__ = ["CONVERTER", "main"]

CONVERTER = cattrs.Converter()


def main(argv: list[str]) -> None:
    if len(argv) < 4 or argv[2] != "--":
        sys.exit("usage: python -m lorenz.sandbox.launch POLICY -- PROGRAM [ARGS...]")
    sandbox = CONVERTER.structure(json.loads(argv[1]), Sandbox)
    seccomp.restrict()
    landlock.restrict(ruleset_for(sandbox, execute_runtime=True))
    try:
        os.execvp(argv[3], argv[3:])
    except OSError as exc:
        sys.exit(f"lorenz: sandboxed {sandbox.pack} could not start {argv[3]}: {exc}")


if __name__ == "__main__":
    main(sys.argv)
