-- stdlib/tide/callbacks/callback.lua — Keras's Callback base (every hook),
-- the CallbackList fit/evaluate/predict drive, History and ProgbarLogger.
--
--   local Printer = tide.callbacks.Callback:extend("Printer")
--   function Printer:on_epoch_end(epoch, logs) print(epoch, logs.loss) end
local binding = require "tide.binding"
local class = require "tide.class"
local progbar = require "tide.models.progbar"
local io_utils = require "tide.utils.io_utils"
local base_init = require "tide.initializers.base"

local M = {}

-- A callback's constructor arguments, Keras style: Cls{a, key = v} (list
-- entries by position in `names`, Keras's argument order), Cls(a, {key = v})
-- or Cls(a); unknown names are errors naming the class.
function M.options(what, names, ...) return base_init.kwargs(what, names, ...) end

local Callback = class("Callback")
M.Callback = Callback

-- Callback(): subclasses set their own fields; self.model is set by fit.
function Callback:__init() end

-- Callback:extend("Name"): a subclass (define the hooks it needs).
function Callback.extend(parent, name)
  if type(name) ~= "string" or name == "" then
    binding.error("Callback:extend: the class needs a name, e.g. tide.callbacks.Callback:extend(\"MyCallback\")")
  end
  local cls = class(name, parent)
  cls.__index = cls
  return cls
end

function Callback:set_model(model) self.model = model end
function Callback:set_params(params) self.params = params end

M.HOOKS = { "on_train_begin", "on_train_end", "on_epoch_begin", "on_epoch_end", "on_train_batch_begin",
  "on_train_batch_end", "on_test_begin", "on_test_end", "on_test_batch_begin", "on_test_batch_end",
  "on_predict_begin", "on_predict_end", "on_predict_batch_begin", "on_predict_batch_end" }
for _, hook in ipairs(M.HOOKS) do Callback[hook] = function() end end

-- The optimizer's learning rate now, as a Lua number.
function M.learning_rate(opt)
  local lr = opt.learning_rate
  if type(lr) == "table" and lr.read_value then lr = lr:read_value() end
  return lr:item()
end

local function is_callback(x) return class.is_instance(x, Callback) end
M.is_callback = is_callback

---------------------------------------------------------------------------
-- History
---------------------------------------------------------------------------

-- History: model.history after fit; history.history[name] lists one value
-- per epoch, history.epoch the epochs run (0-based, as Keras).
local History = Callback:extend("History")
M.History = History

function History:__init()
  self.history = {}
  self.epoch = {}
end

function History:on_train_begin() self.epoch = {} end

function History:on_epoch_end(epoch, logs)
  self.epoch[#self.epoch + 1] = epoch
  for k, v in pairs(logs or {}) do
    local list = self.history[k]
    if list == nil then list = {}; self.history[k] = list end
    list[#list + 1] = v
  end
  rawset(self.model, "history", self)
end

---------------------------------------------------------------------------
-- ProgbarLogger
---------------------------------------------------------------------------

-- The logs as {name, value} pairs in Keras 2's display order: the model's
-- metrics_names (loss first), then any other name sorted, then the same
-- for the validation values.
local function ordered_logs(logs, names)
  local rank = {}
  for i, k in ipairs(names or {}) do rank[k] = i end
  rank.loss = 0
  local plain, val = {}, {}
  for k in pairs(logs or {}) do
    if type(k) == "string" and k ~= "outputs" then
      if k:sub(1, 4) == "val_" then val[#val + 1] = k else plain[#plain + 1] = k end
    end
  end
  local function by_rank(strip)
    return function(a, b)
      local ka, kb = strip and a:sub(5) or a, strip and b:sub(5) or b
      local ra, rb = rank[ka] or math.huge, rank[kb] or math.huge
      if ra ~= rb then return ra < rb end
      return a < b
    end
  end
  table.sort(plain, by_rank(false))
  table.sort(val, by_rank(true))
  local out = {}
  for _, k in ipairs(plain) do out[#out + 1] = { k, logs[k] } end
  for _, k in ipairs(val) do out[#out + 1] = { k, logs[k] } end
  return out
end
M.ordered_logs = ordered_logs

-- ProgbarLogger{write=, dynamic=}: prints "Epoch i/n" and the progress bar
-- (fit adds one when verbose is not 0).
local ProgbarLogger = Callback:extend("ProgbarLogger")
M.ProgbarLogger = ProgbarLogger

function ProgbarLogger:__init(opts)
  opts = opts or {}
  self.write = opts.write
  self.dynamic = opts.dynamic
  self.verbose = 1
  self.epochs = 1
end

function ProgbarLogger:set_params(params)
  self.params = params
  self.verbose = params.verbose == nil and 1 or params.verbose
  self.epochs = params.epochs or 1
  self.target = params.steps
end

-- The model's metric names, read once per epoch (or evaluate) and kept: a
-- model's metrics are found by walking its layers, too slow for each batch.
function ProgbarLogger:_names()
  if self.names == nil then
    local ok, names = pcall(function() return self.model.metrics_names end)
    self.names = ok and names or false
  end
  return self.names or nil
end

function ProgbarLogger:_out(s)
  if self.write then self.write(s) else io_utils.print_msg(s, false) end
end

function ProgbarLogger:_reset(target)
  -- fit's logs are running results already: shown as given (Keras 3 averages them again, step-weighted)
  self.bar = progbar.new { target = target, verbose = self.verbose, write = self.write, dynamic = self.dynamic,
    stateful_metrics = true }
  self.seen = 0
  self.names = nil
end

function ProgbarLogger:on_train_begin() self.training = true end
function ProgbarLogger:on_train_end() self.training = false end

function ProgbarLogger:on_epoch_begin(epoch)
  self:_reset(self.target)
  if self.verbose ~= 0 and self.epochs > 1 then self:_out(string.format("Epoch %d/%d\n", epoch + 1, self.epochs)) end
end

function ProgbarLogger:on_train_batch_end(batch, logs)
  self.seen = batch + 1
  self.bar:update(self.seen, ordered_logs(logs, self:_names()), false)
end

function ProgbarLogger:on_epoch_end(epoch, logs)
  self.bar:update(self.seen, ordered_logs(logs, self:_names()), true)
end

function ProgbarLogger:on_test_begin()
  if not self.training then self:_reset(self.target) end
end

function ProgbarLogger:on_test_batch_end(batch, logs)
  if self.training then return end
  self.seen = batch + 1
  self.bar:update(self.seen, ordered_logs(logs, self:_names()), false)
end

function ProgbarLogger:on_test_end(logs)
  if not self.training then self.bar:update(self.seen, ordered_logs(logs, self:_names()), true) end
end

function ProgbarLogger:on_predict_begin() self:_reset(self.target) end

function ProgbarLogger:on_predict_batch_end(batch)
  self.seen = batch + 1
  self.bar:update(self.seen, {}, false)
end

function ProgbarLogger:on_predict_end() self.bar:update(self.seen, {}, true) end

---------------------------------------------------------------------------
-- CallbackList
---------------------------------------------------------------------------

local CallbackList = class("CallbackList")
M.CallbackList = CallbackList

-- CallbackList(callbacks, {add_history=, add_progbar=, model=, verbose=,
-- epochs=, steps=}): the user's callbacks, then History and a
-- ProgbarLogger when asked and not given.
function CallbackList:__init(callbacks, opts)
  opts = opts or {}
  local list = {}
  if callbacks ~= nil then
    if is_callback(callbacks) or type(callbacks) ~= "table" or getmetatable(callbacks) ~= nil then
      binding.error("callbacks must be a list of tide.callbacks objects, e.g. {tide.callbacks.EarlyStopping{}}")
    end
    for i, cb in ipairs(callbacks) do
      if not is_callback(cb) then
        binding.error(string.format("callbacks: entry %d is not a tide.callbacks.Callback (got %s)", i, type(cb)))
      end
      list[#list + 1] = cb
    end
  end
  local has_progbar, history = false, nil
  for _, cb in ipairs(list) do
    if class.is_instance(cb, ProgbarLogger) then has_progbar = true end
    if class.is_instance(cb, History) then history = cb end
  end
  if opts.add_history and not history then
    history = History()
    list[#list + 1] = history
  end
  if opts.add_progbar and not has_progbar then
    list[#list + 1] = ProgbarLogger()
  end
  self.callbacks = list
  local params = { verbose = opts.verbose, epochs = opts.epochs, steps = opts.steps }
  for _, cb in ipairs(list) do
    cb:set_model(opts.model)
    cb:set_params(params)
  end
  if history and opts.model then rawset(opts.model, "history", history) end
end

for _, hook in ipairs(M.HOOKS) do
  CallbackList[hook] = function(self, ...)
    for _, cb in ipairs(self.callbacks) do cb[hook](cb, ...) end
  end
end

return M
