-- stdlib/tide/callbacks/checkpoint.lua — ModelCheckpoint (Keras 3's): save
-- the model's weights (safetensors, written to a temporary name and renamed)
-- every epoch or every n batches, or only when the monitored value improves.
local binding = require "tide.binding"
local callback = require "tide.callbacks.callback"
local monitor = require "tide.callbacks.monitor"

local M = {}

local ModelCheckpoint = callback.Callback:extend("ModelCheckpoint")
M.ModelCheckpoint = ModelCheckpoint

local NAMES = { "filepath", "monitor", "verbose", "save_best_only", "save_weights_only", "mode", "save_freq",
  "initial_value_threshold" }

-- ModelCheckpoint(filepath, {monitor="val_loss", verbose=0, save_best_only=false,
-- save_weights_only=true, mode="auto", save_freq="epoch", initial_value_threshold=nil}).
-- save_weights_only=false saves the whole model (model:save) as a SavedModel
-- directory at filepath (Keras saves a .keras file there).
-- filepath may hold Python-style fields: "ckpt-{epoch:02d}-{val_loss:.2f}.safetensors".
function ModelCheckpoint:__init(...)
  local o = callback.options("ModelCheckpoint", NAMES, ...)
  local filepath = o.filepath
  if type(filepath) ~= "string" or filepath == "" then
    binding.error("ModelCheckpoint: filepath must be a file name, e.g. \"best.safetensors\"")
  end
  if o.save_weights_only ~= nil and type(o.save_weights_only) ~= "boolean" then
    binding.error("ModelCheckpoint: save_weights_only must be true or false, got " .. tostring(o.save_weights_only))
  end
  -- tide's default is weights only (a safetensors file); false saves the
  -- whole model (model:save: a SavedModel directory at filepath)
  self.save_weights_only = o.save_weights_only ~= false
  self.filepath = filepath
  self.monitor = o.monitor or "val_loss"
  self.verbose = o.verbose or 0
  self.save_best_only = o.save_best_only == true
  self.save_freq = o.save_freq or "epoch"
  if self.save_freq ~= "epoch" and (type(self.save_freq) ~= "number" or self.save_freq < 1) then
    binding.error("ModelCheckpoint: save_freq must be \"epoch\" or a positive number of batches, got " ..
      tostring(self.save_freq))
  end
  self.mode = monitor.resolve_mode("ModelCheckpoint", o.mode, self.monitor)
  self.best = o.initial_value_threshold
  self.batches_seen = 0
end

-- The file name for this epoch: {epoch} is 1-based, {name:spec} a log value.
function ModelCheckpoint:_path(epoch, logs)
  return (self.filepath:gsub("{([%w_]+):?([^}]*)}", function(name, spec)
    local v = name == "epoch" and epoch + 1 or (logs or {})[name]
    if v == nil then
      binding.error(string.format("ModelCheckpoint: the file name '%s' uses {%s}, which is not in the logs",
        self.filepath, name))
    end
    if spec == "" then return tostring(v) end
    return string.format("%" .. spec, v)
  end))
end

function ModelCheckpoint:_save(epoch, logs)
  if self.save_best_only then
    local current = logs and logs[self.monitor]
    if current == nil then
      monitor.warn(string.format("ModelCheckpoint: can save the best model only with '%s' available, skipping",
        self.monitor))
      return
    end
    local better = self.best == nil or (self.mode == "max" and current > self.best) or
      (self.mode == "min" and current < self.best)
    if not better then
      if self.verbose > 0 then
        io.stdout:write(string.format("\nEpoch %d: %s did not improve from %.5f\n", epoch + 1, self.monitor, self.best))
      end
      return
    end
    local path = self:_path(epoch, logs)
    if self.verbose > 0 then
      io.stdout:write(string.format("\nEpoch %d: %s improved from %s to %.5f, saving model to %s\n", epoch + 1,
        self.monitor, self.best and string.format("%.5f", self.best) or (self.mode == "min" and "inf" or "-inf"),
        current, path))
    end
    self.best = current
    self:_write(path)
  else
    local path = self:_path(epoch, logs)
    if self.verbose > 0 then io.stdout:write(string.format("\nEpoch %d: saving model to %s\n", epoch + 1, path)) end
    self:_write(path)
  end
end

function ModelCheckpoint:_write(path)
  if self.save_weights_only then return self.model:save_weights(path) end
  return self.model:save(path)
end

function ModelCheckpoint:on_epoch_begin(epoch) self.current_epoch = epoch end

function ModelCheckpoint:on_train_batch_end(batch, logs)
  if self.save_freq == "epoch" then return end
  self.batches_seen = self.batches_seen + 1
  if self.batches_seen % self.save_freq == 0 then self:_save(self.current_epoch or 0, logs) end
end

function ModelCheckpoint:on_epoch_end(epoch, logs)
  if self.save_freq == "epoch" then self:_save(epoch, logs) end
end

return M
