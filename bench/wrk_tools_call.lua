-- wrk script for bench/workers_throughput.py and bench/peers.py: every request is one stateless
-- `tools/call` (JSON response) of the tool and arguments in $WRK_TOOL / $WRK_ARGS, in the protocol era
-- $WRK_ERA (2025-11-25 by default; 2026-07-28 adds the `_meta` envelope and Mcp-Method/Mcp-Name headers).
-- An answer that is not HTTP 200 with a JSON-RPC result free of isError (and, when $WRK_EXPECT is set,
-- containing that text) counts as an error.

local tool = os.getenv("WRK_TOOL") or "local_read_issue"
local args = os.getenv("WRK_ARGS") or '{"issueId": "BOARD-1"}'
local era = os.getenv("WRK_ERA") or "2025-11-25"
local expect = os.getenv("WRK_EXPECT") or ""

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = era
local meta = ""
if era == "2026-07-28" then
  wrk.headers["Mcp-Method"] = "tools/call"
  wrk.headers["Mcp-Name"] = tool
  meta = ',"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
    .. '"io.modelcontextprotocol/clientCapabilities":{}}'
end
local token = os.getenv("LORENZ_MCP_TOKEN")
if token and token ~= "" then
  wrk.headers["Authorization"] = "Bearer " .. token
end
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"' .. tool .. '","arguments":'
  .. args .. meta .. '}}'

local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(arguments)
  bad = 0
end

function response(status, headers, body)
  if status ~= 200 or not body:find('"result"', 1, true) or body:find('"isError":true', 1, true)
      or not body:find(expect, 1, true) then
    bad = bad + 1
  end
end

function done(summary, latency, requests)
  local errors = 0
  for _, thread in ipairs(threads) do
    errors = errors + thread:get("bad")
  end
  io.write(string.format("lorenz-bench: requests=%d bad=%d p50_us=%d p99_us=%d\n",
    summary.requests, errors, latency:percentile(50), latency:percentile(99)))
end
