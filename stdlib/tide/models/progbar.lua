-- stdlib/tide/models/progbar.lua — Keras 3's progress bar (keras.utils.Progbar), the one fit, evaluate and predict
-- print through ProgbarLogger and the one tide.utils.Progbar gives users. Keras 3's line, escapes included:
--   \e[1m469/469\e[0m \e[32m━━━━━━━━━━━━━━━━━━━━\e[0m\e[37m\e[0m \e[1m2s\e[0m 4ms/step - loss: 0.5100
-- redrawn in place (\b...\r) on a terminal; off one (a pipe, a file) only each finished line, as Keras 2 did.
-- Messages go through tide.utils.io_utils, so disable_interactive_logging silences them as Keras's print_msg.
local C = require("tide.binding").C
local binding = require "tide.binding"
local args = require "tide.args"
local io_utils = require "tide.utils.io_utils"

local fmt = string.format
local M = {}

-- True when file descriptor fd (1: stdout) is a terminal.
function M.isatty(fd) return C.tide_is_terminal(fd or 1) == 1 end

-- Seconds on a monotonic clock.
M.now = C.tide_monotonic_seconds

local Progbar = {}
Progbar.__index = Progbar
M.Progbar = Progbar

-- Characters (not bytes) of a UTF-8 string: Keras pads by len(), which counts the bar's ━ as one.
local function chars(s)
  local _, n = s:gsub("[\128-\191]", "")
  return #s - n
end

-- M.new{target=, width=20, verbose=1, interval=0.05, unit_name="step", stateful_metrics=, stateless_metrics=,
-- dynamic=isatty(1), write=}: stateful_metrics (a list of names; `true`: every name, as fit's running results)
-- are shown as given, the others averaged over the steps they cover, as Keras.
function M.new(opts)
  local self = setmetatable({}, Progbar)
  self.target = opts.target
  self.width = opts.width or 20
  self.verbose = opts.verbose == nil and 1 or opts.verbose
  self.interval = opts.interval or 0.05
  self.unit_name = opts.unit_name or "step"
  if opts.stateful_metrics ~= nil and opts.stateless_metrics ~= nil then
    binding.error("Progbar: only one of stateful_metrics and stateless_metrics can be given")
  end
  local function set(list)
    if list == true then return true end
    local s = {}
    for _, k in ipairs(list) do s[k] = true end
    return s
  end
  if opts.stateless_metrics ~= nil then self.stateless = set(opts.stateless_metrics)
  else self.stateful = set(opts.stateful_metrics or {}) end
  if opts.dynamic == nil then self.dynamic = M.isatty(1) else self.dynamic = opts.dynamic end
  self.write = opts.write or function(s) io_utils.print_msg(s, false) end
  self.values, self.order = {}, {}
  self.start = M.now()
  self.last_update = 0
  self.after_first_step = nil
  self.prev_width = 0
  self.seen = 0
  return self
end

local function format_avg(avg, signed)
  if avg ~= avg then return " nan" end
  if (signed and math.abs(avg) or avg) > 1e-3 then return fmt(" %.4f", avg) end
  return fmt(" %.4e", avg) -- Python's e-notation has at least two exponent digits, as C's
end

-- Python's "%.0f": an exact half goes to the even neighbour (LuaJIT's formatter rounds it away from zero).
local function round0(x)
  local f = math.floor(x)
  local d = x - f
  if d > 0.5 or (d == 0.5 and f % 2 == 1) then f = f + 1 end
  return fmt("%d", f)
end

local function format_time(t, unit)
  if t >= 1 or t == 0 then return " " .. round0(t) .. "s/" .. unit end
  if t >= 1e-3 then return " " .. round0(t * 1e3) .. "ms/" .. unit end
  return " " .. round0(t * 1e6) .. "us/" .. unit
end

-- Keras's estimate: the first step (compiling, warming caches) left out once there are more.
function Progbar:_step_duration(current, now)
  if current == 0 then return 0 end
  local per
  if self.after_first_step and current > 1 then per = (now - self.after_first_step) / (current - 1)
  else per = (now - self.start) / current end
  if current == 1 then self.after_first_step = now end
  return per
end

function Progbar:_metrics(signed)
  local parts = {}
  for _, k in ipairs(self.order) do
    local v = self.values[k]
    if type(v[1]) == "number" then parts[#parts + 1] = " - " .. k .. ":" .. format_avg(v[1] / math.max(1, v[2]), signed)
    else parts[#parts + 1] = " - " .. k .. ": " .. tostring(v[1]) end
  end
  return table.concat(parts)
end

local function number_of(v)
  if binding.istensor(v) then return v:item() end
  return v
end

-- update(current, values, finalize): values a list of {name, value} (numbers or 0-d tensors); finalize defaults to
-- current >= target. As Keras's Progbar.update.
function Progbar:update(current, values, finalize)
  if type(current) ~= "number" then binding.error(fmt("Progbar.update: current must be a number, got %s", type(current))) end
  if finalize == nil then finalize = self.target ~= nil and current >= self.target end
  if values ~= nil and type(values) ~= "table" then
    binding.error(fmt("Progbar.update: values must be a list of {name, value}, got %s", type(values)))
  end
  for _, kv in ipairs(values or {}) do
    if type(kv) ~= "table" or type(kv[1]) ~= "string" then
      binding.error("Progbar.update: each value must be {name, value} with a string name")
    end
    local k, v = kv[1], number_of(kv[2])
    if self.values[k] == nil then self.order[#self.order + 1] = k end
    local stateless
    if self.stateful then stateless = not (self.stateful == true or self.stateful[k]) else stateless = self.stateless == true or self.stateless[k] end
    if stateless and type(v) == "number" and not finalize then
      local base = math.max(current - self.seen, 1)
      local old = self.values[k]
      if old then old[1], old[2] = old[1] + v * base, old[2] + base
      else self.values[k] = { v * base, base } end
    else
      self.values[k] = { v, 1 }
    end
  end
  self.seen = current
  local now = M.now()
  local per_unit = self:_step_duration(current, now)
  if self.verbose == 1 then
    if now - self.last_update < self.interval and not finalize then return end
    self.last_update = now
    if not self.dynamic and not finalize then return end -- off a terminal: the finished line only
    local bar, special = nil, 0
    if self.target and self.target > 0 then
      local digits = math.floor(math.log10(self.target)) + 1
      bar = "\27[1m" .. fmt("%" .. digits .. "d/%d", current, self.target) .. "\27[0m "
      special = special + 8
      local w = math.floor(self.width * current / self.target)
      if w > 0 then
        bar = bar .. "\27[32m" .. string.rep("━", w) .. "\27[0m"
        special = special + 9
      end
      bar = bar .. "\27[37m" .. string.rep("━", math.max(self.width - w, 0)) .. "\27[0m"
      special = special + 9
    else
      bar = fmt("%7d/Unknown", current)
    end
    local info
    if self.target and self.target > 0 and not finalize then
      local eta = per_unit * (self.target - current)
      local e
      if eta > 3600 then e = fmt("%d:%02d:%02d", math.floor(eta / 3600), math.floor((eta % 3600) / 60), math.floor(eta % 60))
      elseif eta > 60 then e = fmt("%d:%02d", math.floor(eta / 60), math.floor(eta % 60))
      else e = fmt("%ds", math.floor(eta)) end
      info = " \27[1m" .. e .. "\27[0m"
    else
      info = " \27[1m" .. round0(now - self.start) .. "s\27[0m"
    end
    special = special + 8
    info = info .. format_time(per_unit, self.unit_name) .. self:_metrics(true)
    local width = chars(bar) + chars(info) - special
    local msg = (self.dynamic and (string.rep("\b", self.prev_width) .. "\r") or "") .. bar .. info
    if self.dynamic and self.prev_width > width then msg = msg .. string.rep(" ", self.prev_width - width) end
    if finalize then msg = msg .. "\n" end
    self.write(msg)
    self.prev_width = width
  elseif self.verbose == 2 then
    if finalize and self.target and self.target > 0 then
      local digits = math.floor(math.log10(self.target)) + 1
      local line = fmt("%" .. digits .. "d/%d - ", current, self.target) .. round0(now - self.start) .. "s -" ..
        format_time(per_unit, self.unit_name) .. self:_metrics(false)
      self.write(line .. "\n")
    end
    self.last_update = now
  end
end

-- add(n, values): update(seen + n, values).
function Progbar:add(n, values)
  if type(n) ~= "number" then binding.error(fmt("Progbar.add: n must be a number, got %s", type(n))) end
  self:update(self.seen + n, values)
end

local PUBLIC = { "target", keywords = { "width", "verbose", "interval", "stateful_metrics", "stateless_metrics",
  "unit_name" } }

-- keras.utils.Progbar(target, {width=20, verbose=1, interval=0.05, stateful_metrics=, stateless_metrics=,
-- unit_name="step"}) (also Progbar{target, ...}); target false/nil: unknown.
function M.public(...)
  local op = "Progbar"
  local o = args.parse(op, PUBLIC, ...)
  local target = o.target
  if target == false then target = nil end
  if target ~= nil and (type(target) ~= "number" or target < 0) then
    binding.error(fmt("Progbar: target must be a non-negative number of steps or nil, got %s", tostring(target)))
  end
  local verbose = o.verbose == nil and 1 or o.verbose
  if verbose ~= 0 and verbose ~= 1 and verbose ~= 2 then
    binding.error(fmt("Progbar: verbose must be 0, 1 or 2, got %s", tostring(verbose)))
  end
  for _, k in ipairs { "width", "interval" } do
    if o[k] ~= nil and (type(o[k]) ~= "number" or o[k] < 0) then
      binding.error(fmt("Progbar: %s must be a non-negative number, got %s", k, tostring(o[k])))
    end
  end
  for _, k in ipairs { "stateful_metrics", "stateless_metrics" } do
    if o[k] ~= nil and type(o[k]) ~= "table" then
      binding.error(fmt("Progbar: %s must be a list of metric names, got %s", k, type(o[k])))
    end
  end
  if o.unit_name ~= nil and type(o.unit_name) ~= "string" then
    binding.error(fmt("Progbar: unit_name must be a string, got %s", type(o.unit_name)))
  end
  return M.new { target = target, width = o.width, verbose = verbose, interval = o.interval,
    stateful_metrics = o.stateful_metrics, stateless_metrics = o.stateless_metrics, unit_name = o.unit_name }
end

return M
