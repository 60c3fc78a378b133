-- stdlib/tide/models/progbar.lua — Keras's progress bar: redrawn in place
-- with \r on a terminal, only the finished line when stdout is not one,
-- and verbose 2's one summary line per epoch:
--   469/469 [==============================] - 2s 4ms/step - loss: 0.5100 - accuracy: 0.8200
local C = require("tide.binding").C

local M = {}

-- True when file descriptor fd (1: stdout) is a terminal.
function M.isatty(fd) return C.tide_is_terminal(fd or 1) == 1 end

-- Seconds on a monotonic clock.
M.now = C.tide_monotonic_seconds

local Progbar = {}
Progbar.__index = Progbar
M.Progbar = Progbar

-- Progbar{target=, width=30, verbose=1, interval=0.05, unit_name="step",
-- dynamic=isatty(1), write=io.stdout:write}
function M.new(opts)
  local self = setmetatable({}, Progbar)
  self.target = opts.target
  self.width = opts.width or 30
  self.verbose = opts.verbose == nil and 1 or opts.verbose
  self.interval = opts.interval or 0.05
  self.unit_name = opts.unit_name or "step"
  if opts.dynamic == nil then self.dynamic = M.isatty(1) else self.dynamic = opts.dynamic end
  self.write = opts.write or function(s) io.stdout:write(s); io.stdout:flush() end
  self.values, self.order = {}, {}
  self.start = M.now()
  self.last_update = 0
  self.total_width = 0
  self.seen = 0
  return self
end

local function format_value(v)
  if type(v) ~= "number" then return " " .. tostring(v) end
  if v ~= v then return " nan" end
  if math.abs(v) > 1e-3 then return string.format(" %.4f", v) end
  local s = string.format(" %.4e", v) -- Python's e-notation has at least two exponent digits, as C's
  return s
end

local function format_time(t, unit)
  if t >= 1 or t == 0 then return string.format(" %.0fs/%s", t, unit) end
  if t >= 1e-3 then return string.format(" %.0fms/%s", t * 1e3, unit) end
  return string.format(" %.0fus/%s", t * 1e6, unit)
end

local function metrics_text(self)
  local parts = {}
  for _, k in ipairs(self.order) do parts[#parts + 1] = " - " .. k .. ":" .. format_value(self.values[k]) end
  return table.concat(parts)
end

-- update(current, values, finalize): values a list of {name, number}, shown
-- as they are (fit's metrics are running results already).
function Progbar:update(current, values, finalize)
  if finalize == nil then finalize = self.target ~= nil and current >= self.target end
  for _, kv in ipairs(values or {}) do
    local k, v = kv[1], kv[2]
    if self.values[k] == nil then self.order[#self.order + 1] = k end
    self.values[k] = v
  end
  self.seen = current
  local now = M.now()
  local elapsed = now - self.start
  local per_unit = current > 0 and elapsed / current or 0
  if self.verbose == 1 then
    if not finalize and (now - self.last_update < self.interval) then return end
    if not self.dynamic and not finalize then return end -- one line per epoch off a terminal
    local prev = self.total_width
    local line
    if self.target then
      local digits = math.floor(math.log10(self.target)) + 1
      line = string.format("%" .. digits .. "d/%d [", current, self.target)
      local prog = current / self.target
      local w = math.floor(self.width * prog)
      if w > 0 then
        line = line .. string.rep("=", w - 1) .. (current < self.target and ">" or "=")
      end
      line = line .. string.rep(".", self.width - w) .. "]"
    else
      line = string.format("%7d/Unknown", current)
    end
    local info = string.format(" - %.0fs", elapsed)
    if self.target == nil or finalize then
      info = info .. format_time(per_unit, self.unit_name)
    else
      local eta = per_unit * (self.target - current)
      local eta_text
      if eta > 3600 then eta_text = string.format("%d:%02d:%02d", math.floor(eta / 3600), math.floor((eta % 3600) / 60), math.floor(eta % 60))
      elseif eta > 60 then eta_text = string.format("%d:%02d", math.floor(eta / 60), math.floor(eta % 60))
      else eta_text = string.format("%ds", math.floor(eta)) end
      info = " - ETA: " .. eta_text
    end
    line = line .. info .. metrics_text(self)
    self.total_width = #line
    if self.dynamic and prev > #line then line = line .. string.rep(" ", prev - #line) end
    local out = (self.dynamic and "\r" or "") .. line
    if finalize then out = out .. "\n" end
    self.write(out)
    self.last_update = now
  elseif self.verbose == 2 and finalize then
    local digits = self.target and (math.floor(math.log10(self.target)) + 1) or 1
    local line = string.format("%" .. digits .. "d/%d - %.0fs", current, self.target or current, elapsed)
    line = line .. metrics_text(self)
    line = line .. string.format(" - %.0fs/epoch", elapsed) .. format_time(per_unit, self.unit_name):gsub("^ ", " - ")
    self.write(line .. "\n")
  end
end

return M
