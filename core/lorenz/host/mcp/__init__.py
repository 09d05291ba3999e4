"""The MCP surface: the SDK server and its handlers, the stateless ``/mcp`` endpoint, tool
replies, grants, skills as resources, and the stdio transport."""
