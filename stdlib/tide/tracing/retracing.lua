-- stdlib/tide/tracing/retracing.lua — TF's frequent-retracing detector, with
-- reasons: which argument changed between traces and what to do about it.
local binding = require "tide.binding"
local context = require "tide.trace_context"
local T = require "tide.tracing.trace_type"
local first_difference, describe, where = T.first_difference, T.describe, T.where

-- One instance per Lua state (busted clears package.loaded between spec
-- files): the settings and the per-prototype counters
-- must stay shared by every Function, however often the module is loaded.
local REGISTRY_KEY = "tide.tracing.retracing"
local registry = debug.getregistry()
if registry[REGISTRY_KEY] then return registry[REGISTRY_KEY] end

local M = {
  -- The retracing warning (TF's rule): warn when `threshold` of the last
  -- `window` calls of one Lua function traced; `enabled` false turns it off.
  settings = { enabled = true, threshold = 5, window = 10 },
  last_warning = nil, -- the last warning's text (for tests and tools)
}
registry[REGISTRY_KEY] = M

---------------------------------------------------------------------------
-- Retracing diagnostics (TF's frequent-tracing detector, with reasons)
---------------------------------------------------------------------------
-- Counted per Lua function prototype (TF keys by the Python function's code
-- object): every closure made from the same `function ... end`, and every
-- Function wrapping one, share a detector, so tide.trace applied again on
-- each pass of a loop is caught. TF's bookkeeping: `q` holds, per trace in
-- the window, the calls from that trace up to the next; `calls` their sum.

local detectors = setmetatable({}, { __mode = "k" })

local function proto_of(fn)
  local ok, ju = pcall(require, "jit.util")
  if ok then
    local info = ju.funcinfo(fn)
    if info and info.proto then return info.proto end
  end
  return fn
end

-- A detector of its own (one Lua function's, or a Function's that must not
-- share one: the backward functions of gradient.lua).
local function new_detector()
  return { q = {}, head = 1, tail = 0, calls = 0, warned = false, wraps = 0, closures = setmetatable({}, { __mode = "k" }),
           nclosures = 0 }
end
M.new_detector = new_detector

local function detector_for(fn)
  local key = proto_of(fn)
  local d = detectors[key]
  if not d then
    d = new_detector()
    detectors[key] = d
  end
  if not d.closures[fn] then
    d.closures[fn] = true
    d.nclosures = d.nclosures + 1
  end
  d.wraps = d.wraps + 1
  return d
end

-- A detector's counters are updated a field at a time, and an error can
-- cut in between (an interrupt, a debug hook): a queue slot read as nil
-- counts 0, so a cut leaves a count off by one, never a detector that fails
-- every later call.

-- TF's called_without_tracing.
local function called_without_tracing(d)
  local t = d.tail
  if t < d.head then
    t = t + 1
    d.tail = t
    d.q[t] = 0
  end
  d.q[t] = (d.q[t] or 0) + 1
  d.calls = d.calls + 1
end

-- The warning's explanation: what changed between the last two traces and what to do.
local function retrace_reason(fnobj, d, prev, last)
  local lines = {}
  local suggest = {}
  local same_function = rawequal(prev.fn, last.fn)
  local path, a, b, why
  if prev.args then path, a, b, why = first_difference(prev.args, last.args, "#0") end
  if path then
    local i = tonumber(path:match("^#0%[(%d+)%]"))
    local at
    if i then
      local rest = path:gsub("^#0%[%d+%]", "")
      at = where(last.fn, "#" .. i .. rest)
    else
      at = "the number of arguments"
    end
    if why == "structure" and not i then
      lines[#lines + 1] = string.format("The last two traces had different numbers of arguments (%d, then %d).",
        #prev.args.items, #last.args.items)
    else
      lines[#lines + 1] = string.format("Between the last two traces, %s changed from %s to %s.", at, describe(a),
        describe(b))
    end
    if why == "shape" then
      suggest[#suggest + 1] = "pass reduce_retracing=true so that dims that change become tide.None, or give " ..
        "an input_signature with tide.None for the dims that vary"
    elseif why == "rank" then
      suggest[#suggest + 1] = "pass reduce_retracing=true so that a rank that changes becomes unknown, give an " ..
        "input_signature whose TensorSpec has shape nil (one trace for every rank), or reshape to one rank before " ..
        "the call"
    elseif why == "dtype" then
      suggest[#suggest + 1] = "cast to one dtype before the call, or give an input_signature (every call is then " ..
        "checked against it)"
    elseif why == "value" then
      suggest[#suggest + 1] = "pass the value as a tensor (tide.tensor(v)) so that one graph serves every value " ..
        "(each Lua number, string or boolean is baked into its own graph), or give an input_signature (Lua " ..
        "numbers then become tensors); reduce_retracing does not merge Lua values"
    elseif why == "object" then
      suggest[#suggest + 1] = "pass the same object each time, give its class a __tracing_type method that " ..
        "returns what the trace depends on, or pass tensors instead"
    else
      suggest[#suggest + 1] = "call it with arguments of one structure, or give an input_signature"
    end
  end
  if not same_function then
    if d.nclosures > 1 then
      lines[#lines + 1] = string.format("tide.trace was applied to %d different closures of this Lua function " ..
        "(each `function ... end` evaluated again is a new closure) and %d times in all: each tide.trace makes " ..
        "a new Function whose cache starts empty, so each one traces again.", d.nclosures, d.wraps)
    else
      lines[#lines + 1] = string.format("tide.trace was applied to this Lua function %d times (as if inside a " ..
        "loop): each tide.trace makes a new Function whose cache starts empty, so each one traces again.", d.wraps)
    end
    table.insert(suggest, 1, "call tide.trace once, outside the loop, and reuse the Function (input_signature " ..
      "and reduce_retracing act within one Function, so they cannot help here)")
  end
  if #suggest == 0 then suggest[1] = "give an input_signature, or pass reduce_retracing=true" end
  return table.concat(lines, " "), "To avoid it: " .. table.concat(suggest, "; ") .. "."
end

-- TF's called_with_tracing: count the trace and warn when `threshold` of
-- the last `window` calls traced (once per burst: again only after the rate
-- has dropped below the threshold).
local function called_with_tracing(fnobj, d, args_template)
  local q = d.q
  d.calls = d.calls + 1
  d.tail = d.tail + 1
  q[d.tail] = 1
  d.prev, d.last = d.last, { fn = fnobj, args = args_template }
  local cfg = M.settings
  while d.tail >= d.head and d.calls - (q[d.head] or 0) > cfg.window do
    d.calls = d.calls - (q[d.head] or 0)
    q[d.head] = nil
    d.head = d.head + 1
  end
  local traces = d.tail - d.head + 1
  if traces < cfg.threshold then
    d.warned = false
    return
  end
  if d.warned or not cfg.enabled or not d.prev or fnobj._quiet then return end
  d.warned = true
  local why, fix = retrace_reason(fnobj, d, d.prev, d.last)
  local msg = string.format("tide: warning: %d of the last %d calls to %s (defined at %s, called at %s) traced " ..
    "a new graph; tracing is slow (it runs the Lua function, then builds and optimizes a graph).\n  %s\n  %s\n",
    traces, d.calls, fnobj.name, fnobj._defined, context.user_line(), why, fix)
  io.stderr:write(msg)
  M.last_warning = msg
end

-- tide.config.set_retracing_warning{threshold=5, window=10} (or false to
-- turn it off, true to turn it back on).
function M.set_retracing_warning(opts)
  local cfg = M.settings
  if opts == false or opts == true then
    cfg.enabled = opts
    return
  end
  if type(opts) ~= "table" then
    binding.error("set_retracing_warning: expected {threshold=, window=} or a boolean, got " .. type(opts))
  end
  local threshold = opts.threshold == nil and cfg.threshold or opts.threshold
  local window = opts.window == nil and cfg.window or opts.window
  for k in pairs(opts) do
    if k ~= "threshold" and k ~= "window" and k ~= "enabled" then
      binding.error("set_retracing_warning: unknown option '" .. tostring(k) .. "' (expected: threshold, window, enabled)")
    end
  end
  local function check(name, v)
    if type(v) ~= "number" or v < 1 or v ~= math.floor(v) then
      binding.error(string.format("set_retracing_warning: %s must be a positive integer, got %s", name, tostring(v)))
    end
  end
  check("threshold", threshold)
  check("window", window)
  if threshold > window then
    binding.error(string.format("set_retracing_warning: threshold (%d) must be at most window (%d)", threshold, window))
  end
  cfg.threshold, cfg.window = threshold, window
  if opts.enabled ~= nil then cfg.enabled = opts.enabled and true or false end
end

-- The current settings: { enabled=, threshold=, window= }.
function M.get_retracing_warning()
  local cfg = M.settings
  return { enabled = cfg.enabled, threshold = cfg.threshold, window = cfg.window }
end
M.proto_of, M.detector_for = proto_of, detector_for
M.called_with_tracing, M.called_without_tracing = called_with_tracing, called_without_tracing

return M
