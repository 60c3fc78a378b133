-- stdlib/tide/callbacks/gradient_health.lua — the GradientHealth callback:
-- every `freq` batches, each layer's gradient norm (of fit's own step, or
-- of a probe batch), logged to TensorBoard, and a warning naming the layer
-- when gradients vanish or explode.
local binding = require "tide.binding"
local callback = require "tide.callbacks.callback"
local summary = require "tide.summary"
local tape_mod = require "tide.tape"
local health = require "tide.debugging.gradient_health"

local fmt = string.format
local M = {}

local GradientHealth = callback.Callback:extend("GradientHealth")
M.GradientHealth = GradientHealth

local OPTIONS = { data = true, log_dir = true, freq = true, warn = true, vanish_ratio = true, explode_ratio = true,
  min_norm = true, max_norm = true }

-- GradientHealth{log_dir = "logs", freq = 100, warn = true, data = {x, y},
-- vanish_ratio=, explode_ratio=, min_norm=, max_norm=}: every freq batches
-- (default once an epoch, at its end) it checks the gradients of fit's last
-- step: while the callback runs, fit's traced step also writes each
-- variable's gradient norm (one reduction per variable per step). With
-- `data`, a probe batch, it checks that batch's gradients instead, taken with
-- an eager GradientTape (a forward and backward pass more per check; the
-- way for custom loops and train_on_batch). With log_dir the
-- norms go to <log_dir>/train as gradient_norm/<layer> at the global
-- batch; without, nowhere (see `reports`). A warning is printed once per
-- fit for each status (vanishing, exploding); `reports` keeps every check's
-- result ({step=, layers=, status=, message=}).
function GradientHealth:__init(opts)
  if type(opts) ~= "table" then binding.error("GradientHealth: expects a table of options, e.g. {data = {x, y}}") end
  for k in pairs(opts) do
    if not OPTIONS[k] then binding.error(fmt("GradientHealth: unknown option '%s'", tostring(k))) end
  end
  local d = opts.data
  if d ~= nil and (type(d) ~= "table" or d[1] == nil) then
    binding.error("GradientHealth: data must be a probe batch {x, y} (a few dozen samples of the training data)")
  end
  local freq = opts.freq == nil and "epoch" or opts.freq
  if freq ~= "epoch" and (type(freq) ~= "number" or freq < 1 or freq % 1 ~= 0) then
    binding.error(fmt("GradientHealth: freq must be \"epoch\" or a positive integer, got %s", tostring(freq)))
  end
  if opts.log_dir ~= nil and (type(opts.log_dir) ~= "string" or opts.log_dir == "") then
    binding.error("GradientHealth: log_dir must be a folder name")
  end
  self.data, self.freq, self.log_dir, self.warn = d, freq, opts.log_dir, opts.warn ~= false
  self.thresholds = {}
  for k in pairs(health.DEFAULTS) do self.thresholds[k] = opts[k] end
  self.reports = {}
end

-- One recorder of step norms per model, kept across fits while its
-- variables stay the same: fit's train step, traced once, writes into it.
local kept_norms = setmetatable({}, { __mode = "k" })
local function step_norms_for(model)
  local vars = model.trainable_weights
  local sn = kept_norms[model]
  local same = sn ~= nil and #sn.vars == #vars
  for i = 1, same and #vars or 0 do same = same and sn.vars[i] == vars[i] end
  if not same then
    sn = health.step_norms(vars)
    kept_norms[model] = sn
  end
  return sn
end

function GradientHealth:on_train_begin()
  self._batch = 0
  self._warned = {}
  if not self.data then
    self._norms = step_norms_for(self.model)
    rawset(self.model, "_gradient_norms", self._norms)
  end
  if self.log_dir and not self._writer then
    local dir = self.log_dir:sub(-1) == "/" and self.log_dir .. "train" or self.log_dir .. "/train"
    self._writer = summary.create_file_writer(dir)
  end
end

-- The gradients to judge: the probe batch's (the compiled loss, eagerly),
-- or the norms fit's last step recorded.
local function probe_gradients(model, data)
  local x, y, sw = data[1], data[2], data[3]
  local tape = tape_mod.GradientTape()
  local loss = tape:run(function()
    local p = model(x, { training = true })
    return model:compute_loss(x, y, p, sw)
  end)
  return tape:gradient(loss, model.trainable_weights)
end

-- Check now.
function GradientHealth:check(step)
  local model = self.model
  local grads = self.data and probe_gradients(model, self.data) or self._norms:grads()
  local o = { step = step, writer = self._writer, warn = false }
  for k, v in pairs(self.thresholds) do o[k] = v end
  if not self._writer then o.writer = false end -- no log_dir: reported, not logged
  local report = health.gradient_health(grads, model, o)
  report.step = step
  self.reports[#self.reports + 1] = report
  if report.message and self.warn and not self._warned[report.status] then
    self._warned[report.status] = true
    io.stderr:write(report.message, "\n")
  end
  return report
end

function GradientHealth:on_train_batch_end()
  self._batch = self._batch + 1
  if self.freq ~= "epoch" and self._batch % self.freq == 0 then self:check(self._batch) end
end

function GradientHealth:on_epoch_end()
  if self.freq == "epoch" then self:check(self._batch) end
end

function GradientHealth:on_train_end()
  if self._norms and rawget(self.model, "_gradient_norms") == self._norms then rawset(self.model, "_gradient_norms", nil) end
  if self._writer then
    self._writer:close()
    self._writer = nil
  end
end

return M
