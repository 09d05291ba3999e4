"""The core's version: ``lorenz.__version__``, kept below the package's facade so the modules under
it can read it without importing the facade (which names every public module)."""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
