"""The call log: one JSON line per ``tools/call`` (its record), written off the event loop and
rotated (the writer), counted for the landing page (the stats), and read back by ``lorenz calls``.
Internal: not part of the public API (docs/api.md)."""
