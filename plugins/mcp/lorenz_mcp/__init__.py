"""Lorenz's MCP plugin: the ``mcp`` pack mounts one upstream MCP server (a stdio command or a
Streamable HTTP URL) and serves its tools behind the host's guarantees.

The modules: :mod:`.options` (the ``tools.mcp`` keys), :mod:`.convert` (upstream tools and results
to Lorenz's), :mod:`.stderr` (a child's stderr, logged redacted), :mod:`.upstream` (one supervised
connection), :mod:`.pack` (the ``ToolProvider``) and :mod:`.plugin` (hooks only).
"""

__version__ = "0.1.0"
