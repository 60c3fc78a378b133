-- stdlib/tide/optimizers/schedules.lua — learning-rate schedules (Keras 3's
-- keras.optimizers.schedules): ExponentialDecay, PiecewiseConstantDecay,
-- InverseTimeDecay, PolynomialDecay, CosineDecay (with warmup) and
-- CosineDecayRestarts (SGDR). A schedule is called with the
-- step (an optimizer's iterations Variable, a tensor or a Lua number) and
-- gives a float32 0-d tensor, made of ops, so a traced step that reads it
-- follows iterations without tracing again.
local binding = require "tide.binding"
local class = require "tide.class"
local convert = require "tide.convert"
local math_ops = require "tide.ops.math"
local variable = require "tide.variable"
local A = require "tide.optimizers.arguments"

local istensor, is_variable = binding.istensor, variable.is_variable
local cast, minimum, where = math_ops.cast, math_ops.minimum, math_ops.where
local fmt = string.format

local M = {}

local LearningRateSchedule = class("LearningRateSchedule")
M.LearningRateSchedule = LearningRateSchedule

local classes = {}

-- True when x is a schedule of this module.
function M.is_schedule(x)
  return class.is_instance(x, LearningRateSchedule)
end

-- A float32 0-d tensor holding x (Keras's convert_to_tensor of a float).
local function f32(x) return convert.tensor(x, "float32", "schedule") end

-- The step as a tensor: a Variable is read, a Lua number becomes a tensor as
-- TF infers it (an integer gives int32).
local function step_tensor(name, step)
  if is_variable(step) then return variable.read_value(step) end
  if istensor(step) then return step end
  if type(step) == "number" then return convert.tensor(step, nil, name) end
  binding.error(fmt("%s: the step must be a tensor, a Variable or a number, got %s", name, A.describe(step)))
end

-- A schedule class: params ({ name, default, kind, required }, in TF's
-- order), check(self) after them, call(self, step) -> tensor.
local function define(name, params, check, call)
  local cls = class(name, LearningRateSchedule)
  local names = {}
  for i, p in ipairs(params) do names[i] = p[1] end
  cls._params = params
  function cls.__init(self, ...)
    local o = A.fill(name, params, A.parse(name, names, ...))
    for _, p in ipairs(params) do self[p[1]] = o[p[1]] end
    if check then check(self) end
  end
  cls.__call = function(self, step) return call(self, step_tensor(name, step)) end
  cls.__tostring = function(self) return fmt("<tide.optimizers.schedules.%s '%s'>", name, tostring(self.name)) end
  -- Keras's get_config: every argument by its keyword name.
  function cls:get_config()
    local c = {}
    for _, p in ipairs(params) do c[p[1]] = self[p[1]] end
    return c
  end
  -- Cls:from_config(config) (or Cls.from_config(config)): a schedule like the one that gave config.
  function cls.from_config(a, b)
    local config = b
    if a ~= cls then config = a end
    if type(config) ~= "table" then
      binding.error(fmt("%s.from_config: expects a config table, got %s", name, A.describe(config)))
    end
    return cls(config)
  end
  classes[name] = cls
  M[name] = cls
  return cls
end

local function check_decay_steps(self, key)
  key = key or "decay_steps"
  if not (self[key] > 0) then
    binding.error(fmt("%s: %s must be > 0, got %s", self.__name, key, tostring(self[key])))
  end
end

-- initial_learning_rate * decay_rate ^ (step / decay_steps), the exponent
-- floored with staircase.
define("ExponentialDecay", {
  { "initial_learning_rate", nil, "number", required = true }, { "decay_steps", nil, "number", required = true },
  { "decay_rate", nil, "number", required = true }, { "staircase", false, "bool" },
  { "name", "ExponentialDecay", "string" },
}, check_decay_steps, function(self, step)
  local p = cast(step, "float32") / self.decay_steps
  if self.staircase then p = math_ops.floor(p) end
  return f32(self.initial_learning_rate) * math_ops.pow(self.decay_rate, p)
end)

-- values[1] while step <= boundaries[1], values[i + 1] while boundaries[i] <
-- step <= boundaries[i + 1], values[#values] after the last boundary.
define("PiecewiseConstantDecay", {
  { "boundaries", nil, "numbers", required = true }, { "values", nil, "numbers", required = true },
  { "name", "PiecewiseConstant", "string" },
}, function(self)
  if #self.boundaries == 0 or #self.boundaries ~= #self.values - 1 then
    binding.error(fmt("PiecewiseConstantDecay: boundaries must have one entry fewer than values, and at least " ..
      "one (got %d boundaries and %d values)", #self.boundaries, #self.values))
  end
end, function(self, step)
  local b, v = {}, self.values
  for i, x in ipairs(self.boundaries) do b[i] = cast(convert.tensor(x, nil, "PiecewiseConstantDecay"), step.dtype) end
  local function pick(pred, value) return cast(pred, "float32") * value end
  local result = pick(math_ops.less_equal(step, b[1]), v[1])
  result = result + pick(math_ops.greater(step, b[#b]), v[#v])
  for i = 1, #b - 1 do
    result = result + pick(math_ops.logical_and(math_ops.greater(step, b[i]), math_ops.less_equal(step, b[i + 1])),
      v[i + 1])
  end
  return result
end)

-- initial_learning_rate / (1 + decay_rate * step / decay_steps), the
-- quotient floored with staircase.
define("InverseTimeDecay", {
  { "initial_learning_rate", nil, "number", required = true }, { "decay_steps", nil, "number", required = true },
  { "decay_rate", nil, "number", required = true }, { "staircase", false, "bool" },
  { "name", "InverseTimeDecay", "string" },
}, check_decay_steps, function(self, step)
  local p = cast(step, "float32") / self.decay_steps
  if self.staircase then p = math_ops.floor(p) end
  return f32(self.initial_learning_rate) / (p * self.decay_rate + 1)
end)

-- Cosine decay from `from` to alpha * from over decay_steps (step already
-- counted from the decay's start).
local function cosine(self, step, from)
  local completed = step / self.decay_steps
  local cosine_decayed = (math_ops.cos(completed * math.pi) + 1) * 0.5
  return from * (cosine_decayed * (1 - self.alpha) + self.alpha)
end

-- Keras 3's CosineDecay: with warmup_target, a linear warmup from
-- initial_learning_rate to warmup_target over warmup_steps, then the cosine
-- decay from warmup_target; the step is held at the end of the decay.
define("CosineDecay", {
  { "initial_learning_rate", nil, "number", required = true }, { "decay_steps", nil, "number", required = true },
  { "alpha", 0.0, "number" }, { "name", "CosineDecay", "string" }, { "warmup_target", nil, "number" },
  { "warmup_steps", 0, "nonneg" },
}, check_decay_steps, function(self, step)
  local initial = f32(self.initial_learning_rate)
  step = cast(step, "float32")
  if self.warmup_target == nil then
    return cosine(self, minimum(step, self.decay_steps), initial)
  end
  local target = f32(self.warmup_target)
  local decay_steps, warmup_steps = f32(self.decay_steps), f32(self.warmup_steps)
  step = minimum(step, decay_steps + warmup_steps)
  local warm = (target - initial) * (step / warmup_steps) + initial
  local decayed = cosine(self, step - warmup_steps, target)
  return where(math_ops.less(step, warmup_steps), warm, decayed)
end)

-- (initial - end) * (1 - step / decay_steps) ^ power + end, the step held at
-- decay_steps; with cycle, decay_steps grows to the first multiple of itself
-- at or past the step (1x at step 0), so the decay starts again.
define("PolynomialDecay", {
  { "initial_learning_rate", nil, "number", required = true }, { "decay_steps", nil, "number", required = true },
  { "end_learning_rate", 0.0001, "number" }, { "power", 1.0, "number" }, { "cycle", false, "bool" },
  { "name", "PolynomialDecay", "string" },
}, check_decay_steps, function(self, step)
  step = cast(step, "float32")
  local decay_steps = f32(self.decay_steps)
  if self.cycle then
    local multiplier = where(math_ops.equal(step, 0), f32(1), math_ops.ceil(step / self.decay_steps))
    decay_steps = decay_steps * multiplier
  else
    step = minimum(step, decay_steps)
  end
  local p = step / decay_steps
  local initial, final = f32(self.initial_learning_rate), f32(self.end_learning_rate)
  return (initial - final) * math_ops.pow(1 - p, f32(self.power)) + final
end)

-- Keras 3's CosineDecayRestarts (SGDR, Loshchilov & Hutter): cosine decays
-- over first_decay_steps, then over t_mul times as many steps each restart,
-- each starting from m_mul times the previous restart's rate.
define("CosineDecayRestarts", {
  { "initial_learning_rate", nil, "number", required = true },
  { "first_decay_steps", nil, "number", required = true },
  { "t_mul", 2.0, "number" }, { "m_mul", 1.0, "number" }, { "alpha", 0.0, "number" },
  { "name", "SGDRDecay", "string" },
}, function(self) check_decay_steps(self, "first_decay_steps") end, function(self, step)
  local completed = cast(step, "float32") / f32(self.first_decay_steps)
  local t_mul = f32(self.t_mul)
  local i_restart
  if self.t_mul == 1 then
    i_restart = math_ops.floor(completed)
    completed = completed - i_restart
  else
    -- Restart i begins after first_decay_steps * (1 - t_mul^i) / (1 - t_mul) steps.
    i_restart = math_ops.floor(math_ops.log(1 - completed * (1 - t_mul)) / math_ops.log(t_mul))
    local sum_r = (1 - math_ops.pow(t_mul, i_restart)) / (1 - t_mul)
    completed = (completed - sum_r) / math_ops.pow(t_mul, i_restart)
  end
  local m_fac = math_ops.pow(f32(self.m_mul), i_restart)
  local cosine_decayed = m_fac * (math_ops.cos(completed * math.pi) + 1) * 0.5
  return f32(self.initial_learning_rate) * (cosine_decayed * (1 - self.alpha) + self.alpha)
end)

-- Keras's serialize: { class_name = "ExponentialDecay", config = {...} }.
function M.serialize(schedule)
  if not M.is_schedule(schedule) then
    binding.error(fmt("schedules.serialize: expects a schedule, got %s", A.describe(schedule)))
  end
  return { class_name = schedule.__name, config = schedule:get_config() }
end

-- Keras's deserialize: the schedule that serialize described.
function M.deserialize(config)
  if type(config) ~= "table" or type(config.class_name) ~= "string" then
    binding.error(fmt("schedules.deserialize: expects {class_name = ..., config = {...}}, got %s",
      A.describe(config)))
  end
  local cls = classes[config.class_name]
  if not cls then
    local known = {}
    for k in pairs(classes) do known[#known + 1] = k end
    table.sort(known)
    binding.error(fmt("schedules.deserialize: unknown schedule '%s' (known: %s)", config.class_name,
      table.concat(known, ", ")))
  end
  return cls(config.config or {})
end

return M
