-- stdlib/tide/callbacks/tensorboard.lua — Keras's TensorBoard callback: the
-- logs of fit/evaluate as summaries in log_dir/train and log_dir/validation.
--
--   model:fit(x, y, {epochs = 5, validation_split = 0.2,
--     callbacks = {tide.callbacks.TensorBoard{log_dir = "logs", histogram_freq = 1}}})
local binding = require "tide.binding"
local callback = require "tide.callbacks.callback"
local summary = require "tide.summary"
local math_ops = require "tide.ops.math"
local convert = require "tide.convert"
local Variable = require("tide.variable").Variable
local profiler = require "tide.profiler"

local C = binding.C
local Callback = callback.Callback
local fmt = string.format
local M = {}

local TensorBoard = Callback:extend("TensorBoard")
M.TensorBoard = TensorBoard

local NAMES = { "log_dir", "histogram_freq", "write_graph", "write_images", "write_steps_per_second", "update_freq",
  "profile_batch", "embeddings_freq", "embeddings_metadata" }

local function join(dir, name)
  if dir:sub(-1) == "/" then return dir .. name end
  return dir .. "/" .. name
end

-- profile_batch: 0 (off), n (batch n) or {a, b} (batches a to b), counted
-- from 1 over the whole fit, as Keras.
local function profile_range(p)
  if p == nil or p == 0 then return nil end
  if type(p) == "number" and p >= 1 and p % 1 == 0 then return { p, p } end
  if type(p) == "table" and type(p[1]) == "number" and type(p[2]) == "number" and p[1] >= 1 and p[2] >= p[1]
    and p[1] % 1 == 0 and p[2] % 1 == 0 then
    return { p[1], p[2] }
  end
  binding.error(fmt("TensorBoard: profile_batch must be 0, a batch number n >= 1 or a range {a, b} with " ..
    "1 <= a <= b, got %s", type(p) == "table" and "{" .. tostring(p[1]) .. ", " .. tostring(p[2]) .. "}" or tostring(p)))
end

-- TensorBoard{log_dir="logs", histogram_freq=0, write_graph=true,
-- write_steps_per_second=false, update_freq="epoch" | "batch" | n}: as
-- Keras 3. Per epoch: epoch_<name> of each log (and learning_rate) under
-- log_dir/train, and of each val_ log under log_dir/validation; per batch
-- (update_freq) batch_<name> at the global batch; weight histograms
-- <model>/<layer>/<weight>/histogram every histogram_freq epochs; after an
-- evaluate given this callback, evaluation_<name>_vs_iterations; with
-- write_graph, the traced train step's graph after the first batch;
-- profile_batch, a profile of those batches (tide.profiler) in
-- log_dir/train/plugins/profile/<run>/, each batch a "train_batch" range.
-- Weight images and embeddings are not written yet.
function TensorBoard:__init(...)
  local opts = callback.options("TensorBoard", NAMES, ...)
  local log_dir = opts.log_dir == nil and "logs" or opts.log_dir
  if type(log_dir) ~= "string" or log_dir == "" then binding.error("TensorBoard: log_dir must be a folder name") end
  local hf = opts.histogram_freq or 0
  if type(hf) ~= "number" or hf ~= math.floor(hf) or hf < 0 then
    binding.error(fmt("TensorBoard: histogram_freq must be an integer >= 0, got %s", tostring(hf)))
  end
  local uf = opts.update_freq == nil and "epoch" or opts.update_freq
  if uf == "batch" then uf = 1 end
  if uf ~= "epoch" and (type(uf) ~= "number" or uf ~= math.floor(uf) or uf < 1) then
    binding.error(fmt("TensorBoard: update_freq must be \"epoch\", \"batch\" or a positive integer, got %s",
      tostring(uf)))
  end
  if opts.write_images then binding.error("TensorBoard: write_images is not supported yet") end
  self._profile = profile_range(opts.profile_batch)
  if (opts.embeddings_freq or 0) ~= 0 then binding.error("TensorBoard: embeddings_freq is not supported (give 0)") end
  self.log_dir = log_dir
  self.histogram_freq = hf
  self.write_graph = opts.write_graph ~= false
  self.write_steps_per_second = opts.write_steps_per_second == true
  self.update_freq = uf
  self._global_train_batch = 0
  self._global_test_batch = 0
  self._writers = {}
  self._pushed = {}
  self._step_vars = {}
end

function TensorBoard:set_model(model)
  self.model = model
  self._train_dir = join(self.log_dir, "train")
  self._val_dir = join(self.log_dir, "validation")
  self._writers = {}
end

-- fn() with the writer as the default and recording on (the batch
-- condition a pushed record_if holds must not drop epoch summaries).
function TensorBoard:_with(which, fn)
  self:_writer(which):as_default(function() summary.record_if(true, fn) end)
end

function TensorBoard:_writer(which)
  local w = self._writers[which]
  if w == nil or w.closed then
    w = summary.create_file_writer(which == "train" and self._train_dir or self._val_dir)
    self._writers[which] = w
  end
  return w
end

-- Keras's _push_writer: the writer, step and a record_if condition become
-- the defaults, so summaries the model writes during the batch land there.
-- As Keras, the step is a Variable: a traced train step that writes
-- summaries reads it (and the batch condition) at each run, not once when traced.
function TensorBoard:_push(which, step)
  if self.update_freq == "epoch" then return end
  local freq = self.update_freq
  local v = self._step_vars[which]
  if v == nil then
    v = Variable(convert.tensor(step, "int64", "TensorBoard"), { trainable = false, name = which .. "_step" })
    self._step_vars[which] = v
  else
    v:assign(step)
  end
  local saved = summary._push_default(self:_writer(which), v,
    function() return math_ops.equal(math_ops.floormod(v:read_value(), freq), 0) end)
  self._pushed[#self._pushed + 1] = saved
end

function TensorBoard:_pop()
  if self.update_freq == "epoch" then return end
  local saved = table.remove(self._pushed)
  if saved then summary._pop_default(saved) end
end

local function sorted_numbers(logs)
  local names = {}
  for k, v in pairs(logs or {}) do
    if type(k) == "string" and (type(v) == "number" or binding.istensor(v)) then names[#names + 1] = k end
  end
  table.sort(names)
  return names
end

function TensorBoard:on_train_begin()
  self._global_train_batch = 0
  self._should_write_train_graph = self.write_graph
  self:_push("train", self._global_train_batch)
end

-- Profiling: the session starts before batch a and stops after batch b
-- (or when fit ends first); one already running is left alone, with a warning.
function TensorBoard:_profile_begin()
  local b = self._global_train_batch
  if b == self._profile[1] and not self._profiling then
    if profiler.active() then
      io.stderr:write("TensorBoard: profile_batch: a profiling session is already running; not profiling\n")
      self._profile = nil
      return
    end
    profiler.start(self._train_dir)
    self._profiling = true
  end
  if self._profiling then self._batch_ns = C.tide_profiler_now_ns() end
end

function TensorBoard:_profile_end()
  local b = self._global_train_batch
  C.tide_profiler_add("train_batch", self._batch_ns, C.tide_profiler_now_ns())
  if b >= self._profile[2] then self:_profile_stop() end
end

function TensorBoard:_profile_stop()
  self._profiling = false
  self.profile_path = profiler.stop()
end

function TensorBoard:on_train_end()
  if self._profiling then self:_profile_stop() end
  self:_pop()
  for _, w in pairs(self._writers) do w:close() end
end

function TensorBoard:on_epoch_begin()
  if self.write_steps_per_second then
    self._epoch_start = C.tide_monotonic_seconds()
    self._epoch_start_batch = self._global_train_batch
  end
end

function TensorBoard:on_train_batch_begin()
  self._global_train_batch = self._global_train_batch + 1
  if self._profile then self:_profile_begin() end
  if self.update_freq ~= "epoch" then
    self:_pop()
    self:_push("train", self._global_train_batch)
  end
  if self.write_steps_per_second then self._batch_start = C.tide_monotonic_seconds() end
end

-- Keras's _write_keras_model_train_graph: after the first batch, the
-- traced train step's graph as the train run's graph (step 0).
function TensorBoard:_write_train_graph()
  self._should_write_train_graph = false
  local f = rawget(self.model, "train_function")
  if type(f) ~= "table" or type(f._concrete) ~= "table" or #f._concrete == 0 then return end -- run_eagerly: no graph
  self:_with("train", function() summary.graph(f._concrete[#f._concrete], { step = 0 }) end)
end

function TensorBoard:on_train_batch_end(_, logs)
  if self._profiling then self:_profile_end() end
  if self._should_write_train_graph then self:_write_train_graph() end
  if self.update_freq == "epoch" then return end
  local step = self._global_train_batch
  if self.write_steps_per_second then
    local dt = C.tide_monotonic_seconds() - self._batch_start
    if dt > 0 then summary.scalar("batch_steps_per_second", 1 / dt, { step = step }) end
  end
  for _, name in ipairs(sorted_numbers(logs)) do
    summary.scalar("batch_" .. name, logs[name], { step = step })
  end
end

function TensorBoard:on_test_begin()
  self:_push("val", self._global_test_batch)
end

function TensorBoard:on_test_batch_begin()
  self._global_test_batch = self._global_test_batch + 1
  if self.update_freq ~= "epoch" then
    self:_pop()
    self:_push("val", self._global_test_batch)
  end
end

function TensorBoard:on_test_end(logs)
  local opt = self.model and rawget(self.model, "optimizer")
  if opt == nil then
    local ok, o = pcall(function() return self.model.optimizer end)
    opt = ok and o or nil
  end
  if opt and opt.iterations ~= nil then
    local names = sorted_numbers(logs)
    if #names > 0 then
      self:_with("val", function()
        for _, name in ipairs(names) do
          summary.scalar(fmt("evaluation_%s_vs_iterations", name), logs[name], { step = opt.iterations })
        end
      end)
    end
  end
  self:_pop()
end

function TensorBoard:on_epoch_end(epoch, logs)
  logs = logs or {}
  local train, val = {}, {}
  for _, name in ipairs(sorted_numbers(logs)) do
    if name:sub(1, 4) == "val_" then val[#val + 1] = name else train[#train + 1] = name end
  end
  local extra = {}
  local ok, opt = pcall(function() return self.model.optimizer end)
  if ok and opt and opt.learning_rate ~= nil then extra.learning_rate = callback.learning_rate(opt) end
  if self.write_steps_per_second and self._epoch_start then
    local dt = C.tide_monotonic_seconds() - self._epoch_start
    if dt > 0 then extra.steps_per_second = (self._global_train_batch - self._epoch_start_batch) / dt end
  end
  if #train > 0 or next(extra) then
    self:_with("train", function()
      for _, name in ipairs(train) do summary.scalar("epoch_" .. name, logs[name], { step = epoch }) end
      for _, name in ipairs { "learning_rate", "steps_per_second" } do
        if extra[name] ~= nil then summary.scalar("epoch_" .. name, extra[name], { step = epoch }) end
      end
    end)
  end
  if #val > 0 then
    self:_with("val", function()
      for _, name in ipairs(val) do summary.scalar("epoch_" .. name:sub(5), logs[name], { step = epoch }) end
    end)
  end
  if self.histogram_freq > 0 and epoch % self.histogram_freq == 0 then self:_log_weights(epoch) end
end

-- Keras's _log_weights: one histogram per weight, tagged by its path
-- (model/layer/weight, as Keras 3's weight.path) plus "/histogram".
function TensorBoard:_log_weights(epoch)
  local model = self.model
  local prefix = model.name and (model.name .. "/") or ""
  self:_with("train", function()
    for _, layer in ipairs(model.layers) do
      for _, w in ipairs(layer.weights) do
        local name = (prefix .. tostring(w.name)):gsub(":", "_")
        summary.histogram(name .. "/histogram", w, { step = epoch })
      end
    end
  end)
end

return M
