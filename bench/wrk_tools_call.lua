-- wrk script for bench/workers_throughput.py: every request is one stateless `tools/call`
-- (MCP 2025-11-25, JSON response) of the tool and arguments in $WRK_TOOL / $WRK_ARGS.
-- An answer that is not HTTP 200 with a JSON-RPC result free of isError counts as an error.

local tool = os.getenv("WRK_TOOL") or "local_read_issue"
local args = os.getenv("WRK_ARGS") or '{"issueId": "BOARD-1"}'

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2025-11-25"
local token = os.getenv("LORENZ_MCP_TOKEN")
if token and token ~= "" then
  wrk.headers["Authorization"] = "Bearer " .. token
end
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"' .. tool .. '","arguments":' .. args .. '}}'

local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(arguments)
  bad = 0
end

function response(status, headers, body)
  if status ~= 200 or not body:find('"result"', 1, true) or body:find('"isError":true', 1, true) then
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
