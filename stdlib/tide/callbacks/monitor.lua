-- stdlib/tide/callbacks/monitor.lua — callbacks that watch a logged value
-- epoch by epoch (Keras 3's): EarlyStopping and ReduceLROnPlateau, and the
-- shared rule for "better" (mode min/max/auto, min_delta).
local binding = require "tide.binding"
local callback = require "tide.callbacks.callback"

local Callback = callback.Callback
local options = callback.options
local M = {}

-- "max" for names that grow when better (accuracy, auc, precision, recall),
-- else "min" (Keras's fallback for mode="auto").
function M.resolve_mode(what, mode, monitor)
  mode = mode or "auto"
  if mode ~= "auto" and mode ~= "min" and mode ~= "max" then
    binding.error(string.format("%s: mode must be \"auto\", \"min\" or \"max\", got %s", what, tostring(mode)))
  end
  if mode ~= "auto" then return mode end
  local name = monitor:gsub("^val_", "")
  for _, s in ipairs { "acc", "accuracy", "auc", "precision", "recall" } do
    if name == s or name:sub(-#s - 1) == "_" .. s then return "max" end
  end
  return "min"
end

local function warn(msg) io.stderr:write("Warning: " .. msg .. "\n") end
M.warn = warn

---------------------------------------------------------------------------
-- EarlyStopping
---------------------------------------------------------------------------

local EarlyStopping = Callback:extend("EarlyStopping")
M.EarlyStopping = EarlyStopping

local ES_NAMES = { "monitor", "min_delta", "patience", "verbose", "mode", "baseline", "restore_best_weights",
  "start_from_epoch" }

-- EarlyStopping{monitor="val_loss", min_delta=0, patience=0, verbose=0,
-- mode="auto", baseline=nil, restore_best_weights=false, start_from_epoch=0}
function EarlyStopping:__init(...)
  local opts = options("EarlyStopping", ES_NAMES, ...)
  self.monitor = opts.monitor or "val_loss"
  self.patience = opts.patience or 0
  self.verbose = opts.verbose or 0
  self.baseline = opts.baseline
  self.min_delta = math.abs(opts.min_delta or 0)
  self.restore_best_weights = opts.restore_best_weights == true
  self.start_from_epoch = opts.start_from_epoch or 0
  self.mode = M.resolve_mode("EarlyStopping", opts.mode, self.monitor)
  if type(self.patience) ~= "number" or self.patience < 0 then
    binding.error("EarlyStopping: patience must be a non-negative number, got " .. tostring(self.patience))
  end
end

function EarlyStopping:_improved(current, reference)
  if reference == nil then return true end
  if self.mode == "max" then return current - self.min_delta > reference end
  return current + self.min_delta < reference
end

function EarlyStopping:on_train_begin()
  self.wait = 0
  self.stopped_epoch = 0
  self.best = nil -- +-inf: any first value improves on it
  self.best_weights = nil
  self.best_epoch = 0
end

function EarlyStopping:on_epoch_end(epoch, logs)
  local current = logs and logs[self.monitor]
  if current == nil then
    local names = {}
    for k in pairs(logs or {}) do names[#names + 1] = k end
    table.sort(names)
    warn(string.format("EarlyStopping: early stopping is conditioned on '%s', which is not available; the logs " ..
      "have: %s", self.monitor, table.concat(names, ", ")))
    return
  end
  if epoch < self.start_from_epoch then return end
  if self.restore_best_weights and self.best_weights == nil then self.best_weights = self.model:get_weights() end
  self.wait = self.wait + 1
  if self:_improved(current, self.best) then
    self.best = current
    self.best_epoch = epoch
    if self.restore_best_weights then self.best_weights = self.model:get_weights() end
    if self.baseline == nil or self:_improved(current, self.baseline) then self.wait = 0 end
    return
  end
  if self.wait >= self.patience and epoch > 0 then
    self.stopped_epoch = epoch
    rawset(self.model, "stop_training", true)
  end
end

function EarlyStopping:on_train_end()
  if self.stopped_epoch > 0 and self.verbose > 0 then
    io.stdout:write(string.format("Epoch %d: early stopping\n", self.stopped_epoch + 1))
  end
  if self.restore_best_weights and self.best_weights then
    if self.verbose > 0 then
      io.stdout:write(string.format("Restoring model weights from the end of the best epoch: %d.\n",
        self.best_epoch + 1))
    end
    self.model:set_weights(self.best_weights)
  end
end

---------------------------------------------------------------------------
-- ReduceLROnPlateau
---------------------------------------------------------------------------

local ReduceLROnPlateau = Callback:extend("ReduceLROnPlateau")
M.ReduceLROnPlateau = ReduceLROnPlateau

local RLR_NAMES = { "monitor", "factor", "patience", "verbose", "mode", "min_delta", "cooldown", "min_lr" }

-- ReduceLROnPlateau{monitor="val_loss", factor=0.1, patience=10, verbose=0,
-- mode="auto", min_delta=1e-4, cooldown=0, min_lr=0}
function ReduceLROnPlateau:__init(...)
  local opts = options("ReduceLROnPlateau", RLR_NAMES, ...)
  self.monitor = opts.monitor or "val_loss"
  self.factor = opts.factor or 0.1
  if self.factor >= 1 then
    binding.error("ReduceLROnPlateau: factor must be below 1 (it multiplies the learning rate), got " ..
      tostring(self.factor))
  end
  self.patience = opts.patience or 10
  self.verbose = opts.verbose or 0
  self.min_delta = opts.min_delta or 1e-4
  self.cooldown = opts.cooldown or 0
  self.min_lr = opts.min_lr or 0
  self.mode = M.resolve_mode("ReduceLROnPlateau", opts.mode, self.monitor)
  self.cooldown_counter, self.wait, self.best = 0, 0, nil
end

function ReduceLROnPlateau:on_train_begin()
  self.cooldown_counter, self.wait, self.best = 0, 0, nil
end

function ReduceLROnPlateau:on_epoch_end(epoch, logs)
  logs = logs or {}
  local opt = self.model.optimizer
  logs.learning_rate = callback.learning_rate(opt)
  local current = logs[self.monitor]
  if current == nil then
    warn(string.format("ReduceLROnPlateau: conditioned on '%s', which is not available", self.monitor))
    return
  end
  if self.cooldown_counter > 0 then self.cooldown_counter = self.cooldown_counter - 1; self.wait = 0 end
  local better
  if self.best == nil then better = true
  elseif self.mode == "max" then better = current > self.best + self.min_delta
  else better = current < self.best - self.min_delta end
  if better then
    self.best = current
    self.wait = 0
  elseif self.cooldown_counter <= 0 then
    self.wait = self.wait + 1
    if self.wait >= self.patience then
      local old = callback.learning_rate(opt)
      if old > self.min_lr then
        local new = math.max(old * self.factor, self.min_lr)
        opt.learning_rate = new
        if self.verbose > 0 then
          io.stdout:write(string.format("\nEpoch %d: ReduceLROnPlateau reducing learning rate to %s.\n", epoch + 1,
            tostring(new)))
        end
        self.cooldown_counter = self.cooldown
        self.wait = 0
      end
    end
  end
end

return M
