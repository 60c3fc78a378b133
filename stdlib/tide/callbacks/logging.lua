-- stdlib/tide/callbacks/logging.lua — small Keras callbacks: CSVLogger,
-- TerminateOnNaN, LearningRateScheduler and LambdaCallback.
local binding = require "tide.binding"
local callback = require "tide.callbacks.callback"

local Callback = callback.Callback
local M = {}

---------------------------------------------------------------------------
-- CSVLogger
---------------------------------------------------------------------------

local CSVLogger = Callback:extend("CSVLogger")
M.CSVLogger = CSVLogger

-- CSVLogger(filename, {separator=",", append=false}): one row per epoch,
-- "epoch" then the logs' names sorted.
function CSVLogger:__init(...)
  local opts = callback.options("CSVLogger", { "filename", "separator", "append" }, ...)
  local filename = opts.filename
  if type(filename) ~= "string" or filename == "" then
    binding.error("CSVLogger: filename must be a file name, e.g. \"training.csv\"")
  end
  self.filename = filename
  self.sep = opts.separator or ","
  self.append = opts.append == true
end

local function csv_value(v)
  if type(v) == "number" then
    if v ~= v then return "nan" end
    if v == math.floor(v) and math.abs(v) < 1e15 then return string.format("%d", v) end
    return string.format("%.17g", v)
  end
  return tostring(v)
end

function CSVLogger:on_train_begin()
  local exists = false
  if self.append then
    local f = binding.open_file(self.filename, "r")
    if f then exists = f:read(1) ~= nil; f:close() end
  end
  local f, err = binding.open_file(self.filename, self.append and "a" or "w")
  if not f then binding.error(string.format("CSVLogger: cannot open '%s': %s", self.filename, tostring(err))) end
  self.file = f
  self.keys = nil
  self.header_written = exists
end

function CSVLogger:on_epoch_end(epoch, logs)
  logs = logs or {}
  if self.keys == nil then
    self.keys = {}
    for k in pairs(logs) do self.keys[#self.keys + 1] = k end
    table.sort(self.keys)
  end
  if not self.header_written then
    self.file:write("epoch", self.sep, table.concat(self.keys, self.sep), "\n")
    self.header_written = true
  end
  local row = { tostring(epoch) }
  for _, k in ipairs(self.keys) do row[#row + 1] = logs[k] == nil and "NA" or csv_value(logs[k]) end
  self.file:write(table.concat(row, self.sep), "\n")
  self.file:flush()
end

function CSVLogger:on_train_end()
  if self.file then self.file:close(); self.file = nil end
end

---------------------------------------------------------------------------
-- TerminateOnNaN
---------------------------------------------------------------------------

local TerminateOnNaN = Callback:extend("TerminateOnNaN")
M.TerminateOnNaN = TerminateOnNaN

-- TerminateOnNaN{raise_error=false}: stop fit (or, with raise_error, raise
-- an error at once) when a batch's loss is NaN or infinite (Keras 3's).
function TerminateOnNaN:__init(...)
  local o = callback.options("TerminateOnNaN", { "raise_error" }, ...)
  if o.raise_error ~= nil and type(o.raise_error) ~= "boolean" then
    binding.error("TerminateOnNaN: raise_error must be true or false, got " .. tostring(o.raise_error))
  end
  self.raise_error = o.raise_error == true
end

function TerminateOnNaN:on_train_batch_end(batch, logs)
  local loss = logs and logs.loss
  if loss ~= nil and (loss ~= loss or loss == math.huge or loss == -math.huge) then
    if self.raise_error then
      binding.error(string.format("TerminateOnNaN: NaN or Inf loss encountered at batch %d. Loss value: %s. " ..
        "Terminating training immediately.", batch, tostring(loss)))
    end
    io.stdout:write(string.format("Batch %d: Invalid loss, terminating training\n", batch))
    rawset(self.model, "stop_training", true)
  end
end

---------------------------------------------------------------------------
-- LearningRateScheduler
---------------------------------------------------------------------------

local LearningRateScheduler = Callback:extend("LearningRateScheduler")
M.LearningRateScheduler = LearningRateScheduler

-- LearningRateScheduler(schedule, {verbose=0}): schedule(epoch, lr) -> the
-- new learning rate, set at the start of each epoch (epoch 0-based).
function LearningRateScheduler:__init(...)
  local opts = callback.options("LearningRateScheduler", { "schedule", "verbose" }, ...)
  local schedule = opts.schedule
  if type(schedule) ~= "function" then
    binding.error("LearningRateScheduler: schedule must be a function(epoch, lr) returning the learning rate")
  end
  self.schedule = schedule
  self.verbose = opts.verbose or 0
end

function LearningRateScheduler:on_epoch_begin(epoch)
  local opt = self.model.optimizer
  local lr = callback.learning_rate(opt)
  local new = self.schedule(epoch, lr)
  if binding.istensor(new) then new = new:item() end
  if type(new) ~= "number" or new ~= new then
    binding.error(string.format("LearningRateScheduler: the schedule returned %s for epoch %d; it must return a " ..
      "number", tostring(new), epoch))
  end
  opt.learning_rate = new
  if self.verbose > 0 then
    io.stdout:write(string.format("\nEpoch %d: LearningRateScheduler setting learning rate to %s.\n", epoch + 1,
      tostring(new)))
  end
end

function LearningRateScheduler:on_epoch_end(epoch, logs)
  if logs then logs.learning_rate = callback.learning_rate(self.model.optimizer) end
end

---------------------------------------------------------------------------
-- LambdaCallback
---------------------------------------------------------------------------

local LambdaCallback = Callback:extend("LambdaCallback")
M.LambdaCallback = LambdaCallback

local ALIASES = { on_batch_begin = "on_train_batch_begin", on_batch_end = "on_train_batch_end" }

-- Keras's positional order; any other hook may come by name.
local LAMBDA_NAMES = { "on_epoch_begin", "on_epoch_end", "on_train_begin", "on_train_end", "on_train_batch_begin",
  "on_train_batch_end" }

-- LambdaCallback{on_epoch_begin=, on_epoch_end=, on_batch_begin=,
-- on_batch_end=, on_train_begin=, on_train_end=, ... any hook}: plain
-- functions called with the hook's arguments (no self).
function LambdaCallback:__init(...)
  local n, opts = select("#", ...), ...
  if n > 1 or type(opts) ~= "table" then -- LambdaCallback(f1, f2, ...): by position
    opts = callback.options("LambdaCallback", LAMBDA_NAMES, ...)
  end
  local named = {}
  for k, fn in pairs(opts) do
    if type(k) == "number" then
      if not LAMBDA_NAMES[k] then
        binding.error(string.format("LambdaCallback: too many positional options (it takes %s)",
          table.concat(LAMBDA_NAMES, ", ")))
      end
      k = LAMBDA_NAMES[k]
    end
    named[k] = fn
  end
  callback.options("LambdaCallback", LAMBDA_NAMES) -- notes the positional names (any hook may come by name)
  local known = {}
  for _, hook in ipairs(callback.HOOKS) do known[hook] = true end
  for k, fn in pairs(named) do
    local hook = ALIASES[k] or k
    if not known[hook] then binding.error(string.format("LambdaCallback: unknown hook '%s'", tostring(k))) end
    if type(fn) ~= "function" then
      binding.error(string.format("LambdaCallback: %s must be a function, got %s", k, type(fn)))
    end
    self[hook] = function(_, ...) return fn(...) end
  end
end

return M
