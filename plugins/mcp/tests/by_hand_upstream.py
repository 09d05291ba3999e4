"""An upstream MCP server written by hand, JSON-RPC lines over stdio: its one tool ``sum``
declares ``{"sum": integer}`` and answers ``{"sum": "five"}`` when asked to add ``a`` to itself, else
the right sum. Without the SDK it starts at once, however loaded the machine; it greets on stderr."""

import json
import sys

print("hello from by-hand", file=sys.stderr, flush=True)

TOOL = {
    "name": "sum",
    "inputSchema": {"type": "object", "properties": {"a": {"type": "integer"}}},
    "outputSchema": {"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]},
}
for line in sys.stdin:
    message = json.loads(line)
    method, ident = message.get("method"), message.get("id")
    if ident is None:
        continue
    if method == "initialize":
        result = {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "by-hand", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": [TOOL]}
    elif method == "tools/call":
        a = message["params"]["arguments"]["a"]
        total = "five" if a == 5 else a + a
        result = {"content": [{"type": "text", "text": str(total)}], "structuredContent": {"sum": total}}
    else:
        result = {}
    print(json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}), flush=True)
