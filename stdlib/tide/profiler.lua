-- stdlib/tide/profiler.lua — tide.profiler (tf.profiler.experimental): start
-- and stop a session that libtide records (every eager op, graph node and
-- run, input pipeline stage, with its thread), its Chrome trace in
-- TensorBoard's profile layout, user ranges, and the per-op summary.
local binding = require "tide.binding"
local json = require "tide.json"

local ffi, C = binding.ffi, binding.C
local M = {}

local session = nil -- { logdir = ..., t0 = os.time() } while recording

local CATEGORY = { [C.TIDE_PROF_OP] = "op", [C.TIDE_PROF_NODE] = "node", [C.TIDE_PROF_GRAPH] = "graph",
                   [C.TIDE_PROF_DATA] = "data", [C.TIDE_PROF_USER] = "user", [C.TIDE_PROF_WORKER] = "worker",
                   [C.TIDE_PROF_COMPILE] = "compile" }

-- The host name, for the trace's file name (from C: a sandboxed script's
-- io, which tide's code here shares, reaches no file outside its folder).
local function host_name()
  local buf = ffi.new("char[256]")
  C.tide_profiler_host_name(buf, 256)
  return (ffi.string(buf):gsub("[^%w%._-]", "_"))
end

-- Events a session keeps unless start is told otherwise (80 bytes each: 80 MB).
M.DEFAULT_MAX_EVENTS = C.TIDE_PROFILER_DEFAULT_MAX_EVENTS

-- Start recording. With `logdir`, stop() writes the trace to
-- <logdir>/plugins/profile/<run>/<host>.trace.json.gz, where TensorBoard's
-- profile plugin finds it; without, the events stay for summary() and write_trace().
-- options: {max_events = n}: keep at most n events (default
-- DEFAULT_MAX_EVENTS); later ones are dropped and counted (dropped_events()).
function M.start(logdir, options)
  binding.check_profiler("tide.profiler.start")
  if logdir ~= nil and type(logdir) ~= "string" then
    binding.error("tide.profiler.start: logdir must be a string (a folder), got " .. type(logdir))
  end
  if options ~= nil and type(options) ~= "table" then
    binding.error("tide.profiler.start: options must be a table {max_events=}, got " .. type(options))
  end
  local max_events = M.DEFAULT_MAX_EVENTS
  for k, v in pairs(options or {}) do
    if k ~= "max_events" then binding.error("tide.profiler.start: unknown option '" .. tostring(k) .. "' (max_events)") end
    if type(v) ~= "number" or v % 1 ~= 0 or v < 1 then
      binding.error("tide.profiler.start: max_events must be a positive integer, got " .. tostring(v))
    end
    max_events = v
  end
  if session or C.tide_profiler_active() ~= 0 then
    binding.error("tide.profiler.start: a profiling session is already running (call tide.profiler.stop() first)")
  end
  if C.tide_profiler_set_max_events(max_events) ~= 0 then binding.raise() end
  if C.tide_profiler_start() ~= 0 then binding.raise() end
  session = { logdir = logdir, started = os.time() }
end

-- True while a session records.
function M.active() return C.tide_profiler_active() ~= 0 end

-- Events the last (or current) session kept, and those it dropped (past max_events).
function M.event_count()
  binding.check_profiler("tide.profiler.event_count")
  return tonumber(C.tide_profiler_event_count())
end
function M.dropped_events()
  binding.check_profiler("tide.profiler.dropped_events")
  return tonumber(C.tide_profiler_dropped_events())
end

-- Write the last session's events to `path` as a Chrome trace (gzip when it ends in .gz).
function M.write_trace(path)
  binding.check_profiler("tide.profiler.write_trace")
  if type(path) ~= "string" then binding.error("tide.profiler.write_trace: path must be a string") end
  if C.tide_profiler_write_trace(path) ~= 0 then binding.raise() end
  return path
end

-- Stop recording; returns the trace's path when start was given a logdir.
function M.stop()
  binding.check_profiler("tide.profiler.stop")
  if not session then binding.error("tide.profiler.stop: no profiling session is running (call tide.profiler.start first)") end
  C.tide_profiler_stop()
  local s = session
  session = nil
  if not s.logdir then return nil end
  -- the run is named by the second it started (TF's name); a session that
  -- started in the same second as one already written (a step profiled
  -- every few steps) gets a suffix instead of overwriting it
  local run = os.date("!%Y_%m_%d_%H_%M_%S", s.started)
  local base = s.logdir .. "/plugins/profile/" .. run
  local file = "/" .. host_name() .. ".trace.json.gz"
  local dir, n = base, 1
  while true do
    local f = io.open(dir .. file, "rb")
    if not f then break end
    f:close()
    n = n + 1
    dir = base .. "_" .. n
  end
  if C.tide_make_dirs(dir) ~= 0 then binding.raise() end
  return M.write_trace(dir .. file)
end

-- fn(...) recorded as a range named `name` (tf.profiler.experimental.Trace);
-- returns fn's results. Costs two clock reads when no session records. In a
-- sandbox without the profiler, fn just runs (nothing is recorded).
function M.trace(name, fn, ...)
  if type(name) ~= "string" then binding.error("tide.profiler.trace: name must be a string") end
  if type(fn) ~= "function" then binding.error("tide.profiler.trace: fn must be a function") end
  if not binding.profiler_allowed() then return fn(...) end
  local t0 = C.tide_profiler_now_ns()
  local function finish(ok, ...)
    C.tide_profiler_add(name, t0, C.tide_profiler_now_ns())
    if not ok then error(..., 0) end
    return ...
  end
  return finish(pcall(fn, ...))
end

-- The Chrome trace at `path` (gzip or plain) as Lua data.
function M.read_trace(path)
  if type(path) ~= "string" then binding.error("tide.profiler.read_trace: path must be a string") end
  local len = ffi.new("int64_t[1]")
  local text = C.tide_profiler_read_text(path, len)
  if text == nil then binding.raise() end
  local s = ffi.string(text, len[0])
  C.tide_profiler_free_text(text)
  return json.decode(s, string.format("tide.profiler.read_trace: '%s' is not a Chrome trace", path))
end

-- The last session's events by category and name, busiest (self time)
-- first: { {name=, category=, calls=, total_ms=, self_ms=, share=}, ...,
-- dropped_events = n }, share being the row's self time over all rows' but
-- the "worker" ones (nested events count once; a worker row is the time the
-- pool's threads spent in an op's chunks, the caller's part included, over
-- that same total). Prints the table (and a line when the session dropped
-- events) unless opts.print is false; opts.top limits rows printed (default
-- 20), opts.category keeps one category ("op", "node", "worker", "compile", ...).
function M.summary(opts)
  binding.check_profiler("tide.profiler.summary")
  opts = opts or {}
  if type(opts) ~= "table" then binding.error("tide.profiler.summary: options must be a table") end
  if session then binding.error("tide.profiler.summary: stop the session first (tide.profiler.stop())") end
  local n = C.tide_profiler_summary(nil, 0)
  if n < 0 then binding.raise() end
  local buf = ffi.new("tide_profile_row[?]", math.max(n, 1))
  n = C.tide_profiler_summary(buf, n)
  if n < 0 then binding.raise() end
  local rows, self_total = {}, 0
  for i = 0, n - 1 do
    local r = buf[i]
    local cat = CATEGORY[r.category] or "user"
    -- the total is over every row, kept or not: a share means the same with or without opts.category
    if cat ~= "worker" then self_total = self_total + tonumber(r.self_ns) / 1e6 end
    if not opts.category or opts.category == cat then
      rows[#rows + 1] = { name = ffi.string(r.name), category = cat, calls = tonumber(r.calls),
                          total_ms = tonumber(r.total_ns) / 1e6, self_ms = tonumber(r.self_ns) / 1e6 }
    end
  end
  for _, r in ipairs(rows) do r.share = self_total > 0 and r.self_ms / self_total or 0 end
  table.sort(rows, function(a, b)
    if a.self_ms ~= b.self_ms then return a.self_ms > b.self_ms end
    return a.name < b.name
  end)
  if opts.print ~= false then
    local top = opts.top or 20
    print(string.format("%-32s %-6s %9s %12s %12s %7s", "name", "kind", "calls", "total ms", "self ms", "share"))
    for i = 1, math.min(top, #rows) do
      local r = rows[i]
      print(string.format("%-32s %-6s %9d %12.3f %12.3f %6.1f%%", r.name:sub(1, 32), r.category, r.calls,
        r.total_ms, r.self_ms, 100 * r.share))
    end
    if #rows > top then print(string.format("(%d more rows)", #rows - top)) end
  end
  rows.dropped_events = M.dropped_events()
  if rows.dropped_events > 0 and opts.print ~= false then
    print(string.format("(%d events dropped: the session kept its first %d; start with {max_events=} to keep more)",
      rows.dropped_events, tonumber(C.tide_profiler_event_count())))
  end
  return rows
end

return M
