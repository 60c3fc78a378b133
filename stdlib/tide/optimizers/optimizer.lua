-- stdlib/tide/optimizers/optimizer.lua — the Optimizer base (Keras 3's BaseOptimizer):
-- arguments, the learning rate (a Variable, a schedule or a callable), iterations,
-- slot Variables made eagerly by build, apply/apply_gradients with Keras's None
-- filtering, clipping, weight decay and gradient accumulation, minimize,
-- get_config/from_config.
-- Each optimizer (sgd.lua, adam.lua, ...) is made by M.define with its own
-- parameters, slot names and update_step.
local binding = require "tide.binding"
local class = require "tide.class"
local dtype = require "tide.dtype"
local convert = require "tide.convert"
local context = require "tide.trace_context"
local math_ops = require "tide.ops.math"
local reduce_ops = require "tide.ops.reduce"
local create_ops = require "tide.ops.create"
local variable = require "tide.variable"
local tape_mod = require "tide.tape"
local recorder = require "tide.tape_recorder"
local tracing = require "tide.tracing.function"
local retracing = require "tide.tracing.retracing"
local schedules = require "tide.optimizers.schedules"
local control = require "tide.tracing.control"
local A = require "tide.optimizers.arguments"

local Variable, is_variable = variable.Variable, variable.is_variable
local istensor = binding.istensor
local cast, sqrt, maximum, minimum, where = math_ops.cast, math_ops.sqrt, math_ops.maximum, math_ops.minimum,
  math_ops.where
local fmt = string.format

local M = {}
local run_traced_update -- below: an eager step as a traced function

local Optimizer = class("Optimizer")
M.Optimizer = Optimizer

-- Keras's automatic names: the class name in snake case ("RMSprop" ->
-- "rm_sprop", as keras.src.utils.naming.to_snake_case), then "_1", "_2", ...
local name_uses = {}
local function snake_case(name)
  name = name:gsub("[^%w_]", "")
  name = name:gsub("(.)(%u%l+)", "%1_%2")
  name = name:gsub("(%l)(%u)", "%1_%2")
  return name:lower()
end
M.snake_case = snake_case
local function auto_name(cls_name)
  local base = snake_case(cls_name)
  local n = name_uses[base]
  name_uses[base] = (n or 0) + 1
  return n and (base .. "_" .. n) or base
end

---------------------------------------------------------------------------
-- Arguments
---------------------------------------------------------------------------

-- x rounded to float32, as a Lua number. Keras's ops.cast(python_float,
-- dtype) and tf.cast make a float32 constant first, so where Keras casts a
-- hyperparameter (SGD's momentum, Adam's betas in the bias correction,
-- Nadam's, the weight decay) a float64 variable sees the float32 value;
-- where Keras multiplies by the Python float directly, tide uses the number.
local f32_box = binding.ffi.new("float[1]")
local function keras_float(x)
  f32_box[0] = x
  return tonumber(f32_box[0])
end
M.keras_float = keras_float

local describe, is_callable, CHECKS = A.describe, A.is_callable, A.CHECKS

-- The learning rate as given: a number (kept in a float32 Variable, as
-- Keras's floatx), a schedule, or a callable of the step.
local function check_learning_rate(cls, lr)
  if type(lr) == "number" and lr == lr then return lr end
  if schedules.is_schedule(lr) or is_callable(lr) then return lr end
  local hint = (istensor(lr) or is_variable(lr)) and " (pass a Lua number, e.g. x:item())" or ""
  binding.error(fmt("%s: learning_rate must be a number, a schedule (tide.optimizers.schedules.*) or a " ..
    "function of the step, got %s%s", cls, describe(lr), hint))
end

---------------------------------------------------------------------------
-- Properties: learning_rate (read and set, as Keras's) and variables
---------------------------------------------------------------------------

-- The learning rate now: the Variable, or the schedule (or callable) at the
-- step count (with gradient accumulation, every apply counts, as Keras's
-- schedules read _iterations). A callable may ignore the step (Keras calls
-- it with none).
local function current_learning_rate(self)
  local lr = rawget(self, "_learning_rate")
  if is_variable(lr) then return lr end
  local value = lr(rawget(self, "_iterations"))
  if type(value) == "number" then return convert.tensor(value, "float32", self.name) end
  if not (istensor(value) or is_variable(value)) then
    binding.error(fmt("%s: the learning_rate function returned %s; it must return a number or a tensor",
      self.__name, describe(value)))
  end
  return value
end

local function untrack(self, v)
  local list = self._variables
  for i = #list, 1, -1 do
    if rawequal(list[i], v) then table.remove(list, i) end
  end
end

-- opt.learning_rate = x: a number (or a one-element tensor) is assigned to
-- the learning-rate Variable, so traced steps read it at their next call; a
-- schedule or a function replaces the Variable. As Keras, an optimizer made
-- with a schedule refuses a number.
local function set_learning_rate(self, lr)
  local old = rawget(self, "_learning_rate")
  if schedules.is_schedule(lr) or is_callable(lr) then
    rawset(self, "_learning_rate", lr)
    if is_variable(old) then untrack(self, old) end
    return
  end
  if not is_variable(old) then
    binding.error(fmt("%s: this optimizer was created with a schedule or a function as its learning_rate, so " ..
      "its learning rate cannot be set to a number; create the optimizer with a number learning_rate",
      self.__name))
  end
  if istensor(lr) or is_variable(lr) then
    old:assign(cast(lr, "float32"))
  else
    old:assign(check_learning_rate(self.__name, lr))
  end
end

local PROPERTIES = {
  learning_rate = current_learning_rate,
  -- Keras's iterations: the steps taken (a Variable); with gradient
  -- accumulation, the updates made (applies // gradient_accumulation_steps)
  iterations = function(self)
    local it, every = rawget(self, "_iterations"), rawget(self, "gradient_accumulation_steps")
    if every == nil then return it end
    return math_ops.floordiv(it, every)
  end,
  variables = function(self) -- a copy: iterations, the learning rate Variable, then the slots
    local out = {}
    for i, v in ipairs(self._variables) do out[i] = v end
    return out
  end,
}

local function index(self, k)
  local p = PROPERTIES[k]
  if p then return p(self) end
  return getmetatable(self)[k]
end

local function newindex(self, k, v)
  if k == "learning_rate" then return set_learning_rate(self, v) end
  if PROPERTIES[k] then binding.error(fmt("%s: '%s' cannot be set", self.__name, k)) end
  rawset(self, k, v)
end

Optimizer.__index = index
Optimizer.__newindex = newindex

---------------------------------------------------------------------------
-- Defining optimizers
---------------------------------------------------------------------------

-- The arguments every optimizer takes after its own (Keras's base).
local BASE = {
  { "weight_decay", nil, "nonneg" }, { "clipnorm", nil, "nonneg" }, { "clipvalue", nil, "nonneg" },
  { "global_clipnorm", nil, "nonneg" }, { "use_ema", false, "bool" }, { "ema_momentum", 0.99, "unit" },
  { "ema_overwrite_frequency", nil, "count" }, { "loss_scale_factor", nil, "positive" },
  { "gradient_accumulation_steps", nil, "accumulation" }, { "name", nil, "string" },
}

-- A new optimizer class. spec: learning_rate (the default), params (a list
-- of { name, default, check } in Keras's order), order (the positional
-- names, when the base arguments come earlier than last), slots(self)
-- (groups of slot names: each group's slots are made variable by variable,
-- as Keras's add_optimizer_variables), slot_init(self, name) (a slot's
-- initial value, 0 by default), init(self) (checks after the arguments),
-- build_extra(self, var_list) (more Variables on the first build),
-- build_each(self, fresh) (per-variable state of its own shapes, at every build that meets new variables),
-- weight_decay_of(self, v) (the decay for v, nil for none; without it, weight_decay for every variable),
-- before_updates(self) (runs once per step before the update steps),
-- update_step(self, gradient, variable, lr, slots).
function M.define(name, spec, parent)
  local cls = class(name, parent or Optimizer)
  cls.__index, cls.__newindex = index, newindex
  local params, defaults, checks = {}, {}, {}
  for _, p in ipairs(spec.params or {}) do params[#params + 1] = p end
  for _, p in ipairs(BASE) do params[#params + 1] = p end
  for _, p in ipairs(params) do
    defaults[p[1]], checks[p[1]] = p[2], p[3]
  end
  if spec.weight_decay ~= nil then defaults.weight_decay = spec.weight_decay end
  local names = { "learning_rate" }
  for _, p in ipairs(spec.order or params) do names[#names + 1] = type(p) == "table" and p[1] or p end
  cls._spec = spec
  cls._params = params
  cls._names = names

  function cls.__init(self, ...)
    local o = A.parse(name, names, ...)
    rawset(self, "__name", name)
    for _, p in ipairs(params) do
      local k = p[1]
      local v = o[k]
      if v == nil then v = defaults[k] end
      if v ~= nil and checks[k] then v = CHECKS[checks[k]](name, k, v) end
      rawset(self, k, v)
    end
    local lr = o.learning_rate
    if lr == nil then lr = spec.learning_rate end
    lr = check_learning_rate(name, lr)
    rawset(self, "name", self.name or auto_name(name))
    local clips = 0
    for _, k in ipairs { "clipnorm", "clipvalue", "global_clipnorm" } do
      if self[k] ~= nil then clips = clips + 1 end
    end
    if clips > 1 then
      binding.error(fmt("%s: only one of clipnorm, clipvalue and global_clipnorm can be set (got clipnorm=%s, " ..
        "clipvalue=%s, global_clipnorm=%s)", name, tostring(self.clipnorm), tostring(self.clipvalue),
        tostring(self.global_clipnorm)))
    end
    rawset(self, "built", false)
    rawset(self, "_variables", {})
    rawset(self, "_trainable", {})      -- the model variables built, in order
    rawset(self, "_slots", {})          -- model variable -> { slot name -> Variable }
    rawset(self, "_warned", {})
    local iterations = Variable(0, { dtype = "int64", name = "iteration", trainable = false })
    rawset(self, "_iterations", iterations) -- read through the iterations property
    self._variables[1] = iterations
    if type(lr) == "number" then
      lr = Variable(lr, { dtype = "float32", name = "learning_rate", trainable = false })
      self._variables[2] = lr
    end
    rawset(self, "_learning_rate", lr)
    if spec.init then spec.init(self) end
  end

  cls.__tostring = Optimizer.__tostring
  -- Cls:from_config(config) (or Cls.from_config(config)).
  function cls.from_config(a, b)
    if a == cls then return Optimizer.from_config(cls, b) end
    return Optimizer.from_config(cls, a)
  end
  return cls
end

---------------------------------------------------------------------------
-- Building: slot Variables, made eagerly
---------------------------------------------------------------------------

-- "'w' (float32, shape (2, 3))", for messages.
local function var_text(v)
  return fmt("'%s' (%s, shape %s)", v.name, v.dtype, tostring(v.shape))
end

local function check_variable(self, v, where)
  if not is_variable(v) then
    binding.error(fmt("%s: %s is %s where a tide.Variable is due", self.__name, where, describe(v)))
  end
  if not dtype.is_float[variable.handle(v).dt] then
    binding.error(fmt("%s: %s is the %s variable %s; optimizers update float variables only (float32, " ..
      "float64, float16, bfloat16)", self.__name, where, v.dtype, fmt("'%s'", v.name)))
  end
end

-- Slot Variable for model variable v: its shape and dtype, named
-- "<v.name>_<slot>", filled with `value`.
function Optimizer:add_variable_from_reference(v, slot, value)
  local init = create_ops.fill(v.shape:as_list(), keras_float(value or 0), { dtype = v.dtype })
  local s = Variable(init, { name = v.name .. "_" .. slot, trainable = false })
  local list = self._variables
  list[#list + 1] = s
  return s
end

-- A Variable of the optimizer's own (not per model variable), tracked in
-- `variables`.
function Optimizer:add_variable(initial, opts)
  local o = opts or {}
  local s = Variable(initial, { name = o.name, dtype = o.dtype, trainable = false })
  local list = self._variables
  list[#list + 1] = s
  return s
end

-- A hook for the saving floor (tide.train's Checkpoint): called with the
-- optimizer after build made slots, so a restore made before reaches them.
M.on_built = nil
function M.set_on_built(fn) M.on_built = fn end

-- Make the slots of the variables in var_list that have none yet (Keras's
-- build, which tide allows again for new variables). Inside tide.trace this
-- works only while the function is traced for the first time (tide makes
-- Variables then only): a retrace that meets a new variable is an error
-- saying to build before tracing.
function Optimizer:build(var_list)
  if type(var_list) ~= "table" or is_variable(var_list) then
    binding.error(fmt("%s: build expects a list of Variables, got %s", self.__name, describe(var_list)))
  end
  local fresh, seen = {}, {}
  for i = 1, #var_list do
    local v = var_list[i]
    check_variable(self, v, fmt("variable %d of the list", i))
    if not self._slots[v] and not seen[v] then
      seen[v] = true
      fresh[#fresh + 1] = v
    end
  end
  if #fresh == 0 and self.built then return end
  local ctx = context.current()
  if ctx and not ctx.first and #fresh > 0 then
    binding.error(fmt("%s: variable %s has no optimizer slots yet, and '%s' is being traced again, when no new " ..
      "Variables can be made; call optimizer:build(var_list) with all the variables before the traced function " ..
      "first runs (or apply once outside it)", self.__name, var_text(fresh[1]), tostring(ctx.fn and ctx.fn.name)))
  end
  local spec = getmetatable(self)._spec
  -- All or nothing: a build cut short (Ctrl-C at the REPL, an error in a
  -- slot's initializer) must not leave variables marked as having slots they
  -- lack; the next build then makes them all again.
  local n_trainable, n_variables = #self._trainable, #self._variables
  local ok, err = pcall(Optimizer._build_slots, self, spec, fresh)
  if not ok then
    for _, v in ipairs(fresh) do self._slots[v] = nil end
    for i = #self._trainable, n_trainable + 1, -1 do self._trainable[i] = nil end
    for i = #self._variables, n_variables + 1, -1 do self._variables[i] = nil end
    error(err, 0)
  end
end

-- build's work for the variables `fresh`: their slot tables and Variables.
function Optimizer:_build_slots(spec, fresh)
  for _, v in ipairs(fresh) do
    self._slots[v] = {}
    self._trainable[#self._trainable + 1] = v
  end
  -- Keras's base build comes first: with use_ema, an "average" per variable,
  -- with gradient_accumulation_steps a "gradient_accumulator"
  local groups = {}
  if self.use_ema then groups[#groups + 1] = { "average" } end
  if self.gradient_accumulation_steps then groups[#groups + 1] = { "gradient_accumulator" } end
  for _, group in ipairs(spec.slots and spec.slots(self) or {}) do groups[#groups + 1] = group end
  for _, group in ipairs(groups) do
    for _, v in ipairs(fresh) do
      for _, slot in ipairs(group) do
        local init = slot ~= "average" and spec.slot_init and spec.slot_init(self, slot) or nil
        self._slots[v][slot] = self:add_variable_from_reference(v, slot, init)
      end
    end
  end
  if spec.build_each then spec.build_each(self, fresh) end
  if not self.built and spec.build_extra then spec.build_extra(self, fresh) end
  rawset(self, "built", true)
  if M.on_built then M.on_built(self) end
end

-- The slot Variable `slot` of model variable v (TF's get_slot), or nil.
function Optimizer:get_slot(v, slot)
  local s = self._slots[v]
  return s and s[slot]
end

-- Keras's exclude_from_weight_decay{var_list=, var_names=}: before build.
function Optimizer:exclude_from_weight_decay(opts)
  opts = opts or {}
  if self.built then
    binding.error(fmt("%s: exclude_from_weight_decay can only be configured before the optimizer is built",
      self.__name))
  end
  local vars = {}
  for _, v in ipairs(opts.var_list or {}) do vars[v] = true end
  rawset(self, "_exclude_vars", vars)
  rawset(self, "_exclude_names", opts.var_names or {})
end

local function use_weight_decay(self, v)
  local ex = rawget(self, "_exclude_vars")
  if ex and ex[v] then return false end
  for _, s in ipairs(rawget(self, "_exclude_names") or {}) do
    if v.name:find(s, 1, true) then return false end
  end
  return true
end

---------------------------------------------------------------------------
-- Applying gradients
---------------------------------------------------------------------------

-- Keras's _clip_by_norm: g * clipnorm / max(||g||, clipnorm), with the
-- two-sided where that keeps a zero gradient finite.
local function clip_by_norm(g, clipnorm)
  local axes = {}
  for i = 0, g.ndim - 1 do axes[i + 1] = i end
  local l2sum = reduce_ops.reduce_sum(math_ops.square(g), axes, true)
  local pred = math_ops.greater(l2sum, 0)
  local safe = where(pred, l2sum, create_ops.ones_like(l2sum))
  local l2norm = where(pred, sqrt(safe), l2sum)
  return (g * clipnorm) / maximum(l2norm, clipnorm)
end

-- Keras's clip_by_global_norm: every gradient scaled by
-- clip * min(1 / norm, 1 / clip) (+ norm - norm: NaN for a non-finite norm).
local function clip_by_global_norm(grads, clip)
  local total
  for _, g in ipairs(grads) do
    local s = reduce_ops.reduce_sum(math_ops.square(g))
    if total then s = cast(s, total.dtype) end
    total = total and total + s or s
  end
  local norm = sqrt(total)
  local scale = minimum(1 / norm, 1 / clip) * clip + (norm - norm)
  local out = {}
  for i, g in ipairs(grads) do out[i] = g * cast(scale, g.dtype) end
  return out
end

local function clip_gradients(self, grads)
  if self.clipnorm and self.clipnorm > 0 then
    local out = {}
    for i, g in ipairs(grads) do out[i] = clip_by_norm(g, self.clipnorm) end
    return out
  elseif self.global_clipnorm and self.global_clipnorm > 0 then
    return clip_by_global_norm(grads, self.global_clipnorm)
  elseif self.clipvalue and self.clipvalue > 0 then
    local out = {}
    for i, g in ipairs(grads) do out[i] = math_ops.clip_by_value(g, -self.clipvalue, self.clipvalue) end
    return out
  end
  return grads
end

-- The gradient for v as a tensor of v's shape, or an error naming both.
local function check_gradient(self, g, v, i)
  if is_variable(g) then g = variable.read_value(g) end
  if not istensor(g) then
    binding.error(fmt("%s: the gradient for variable %s (pair %d) is %s; it must be a tensor (or nil for no " ..
      "gradient)", self.__name, var_text(v), i, describe(g)))
  end
  if not dtype.is_float[g.dt] then
    binding.error(fmt("%s: the gradient for variable %s (pair %d) is a %s tensor; gradients must be float",
      self.__name, var_text(v), i, dtype.names[g.dt]))
  end
  local h = variable.handle(v)
  local same = g.ndim == h.ndim or g.ndim < 0
  for d = 0, h.ndim - 1 do
    if same and g.ndim >= 0 and g.dims[d] >= 0 and g.dims[d] ~= h.dims[d] then same = false end
  end
  if not same then
    binding.error(fmt("%s: the gradient for variable %s (pair %d) has shape %s; it must have the variable's " ..
      "shape", self.__name, var_text(v), i, tostring(g.shape)))
  end
  return g
end

-- Keras's warning for variables without gradients: once per message.
local function warn_missing(self, names)
  local msg = fmt("tide: %s: gradients do not exist for variables {%s} when minimizing the loss (they are left " ..
    "unchanged). If using model:compile(), did you forget to provide a loss?\n", self.name,
    table.concat(names, ", "))
  if self._warned[msg] then return end
  self._warned[msg] = true
  io.stderr:write(msg)
end

local update_averages

-- use_ema (Keras's): each built variable's moving average, its "average"
-- slot, follows it after the update (the first step copies it); every
-- ema_overwrite_frequency steps the variables take their averages.
local function overwrite_with_averages(self, vars, when)
  for _, v in ipairs(vars) do
    local avg = self._slots[v] and self._slots[v].average
    if avg then v:assign(when and where(when, avg, v) or avg) end
  end
end

update_averages = function(self)
  local not_first = math_ops.not_equal(self.iterations, 0)
  for _, v in ipairs(self._trainable) do
    local avg = self._slots[v].average
    local momentum = cast(not_first, v.dtype) * self.ema_momentum
    avg:assign(momentum * avg + (1 - momentum) * v)
  end
  local every = self.ema_overwrite_frequency
  if every then
    local due = math_ops.equal(math_ops.mod(self.iterations + 1, every), 0)
    overwrite_with_averages(self, self._trainable, due)
  end
end

-- Keras's scale_loss(loss): the loss times loss_scale_factor when one is
-- set (the update divides the gradients by it again), else the loss. fit's
-- train step takes gradients of this; LossScaleOptimizer scales dynamically.
function Optimizer:scale_loss(loss)
  if self.loss_scale_factor then return loss * self.loss_scale_factor end
  return loss
end

-- Keras's finalize_variable_values(var_list) (fit calls it at its end):
-- with use_ema, the variables take their moving averages.
function Optimizer:finalize_variable_values(var_list)
  if self.use_ema then overwrite_with_averages(self, var_list or self._trainable) end
end

-- The variables' move on gradients gs[i] for vs[i] at learning rate lr:
-- clipping, weight decay, each variable's update.
local function move(self, gs, vs, lr)
  gs = clip_gradients(self, gs)
  local spec = getmetatable(self)._spec
  local decay_of = spec.weight_decay_of
  if self.weight_decay or decay_of then
    for _, v in ipairs(vs) do
      local wd = self.weight_decay
      if decay_of then wd = decay_of(self, v) end
      if wd and use_weight_decay(self, v) then
        v:assign_sub(v * keras_float(wd) * cast(lr, v.dtype))
      end
    end
  end
  if spec.before_updates then spec.before_updates(self) end
  local update_step = spec.update_step
  for i, v in ipairs(vs) do
    update_step(self, cast(gs[i], v.dtype), v, cast(lr, v.dtype), self._slots[v])
  end
end

-- The step itself, on checked gradients gs[i] for variables vs[i]: scaling,
-- the move (with gradient_accumulation_steps n, Keras 3's: every n-th step
-- moves by the mean of the n gradients since the last move, the others add
-- theirs to each variable's gradient_accumulator), the moving averages,
-- constraints, iterations + 1.
local function update(self, gs, vs)
  if self.loss_scale_factor then
    for i, g in ipairs(gs) do gs[i] = g / self.loss_scale_factor end
  end
  local lr = current_learning_rate(self)
  local every = self.gradient_accumulation_steps
  if every then
    local accs = {}
    for i, v in ipairs(vs) do
      accs[i] = self._slots[v].gradient_accumulator
      gs[i] = cast(gs[i], v.dtype)
    end
    local due = math_ops.equal(math_ops.mod(rawget(self, "_iterations") + 1, every), 0)
    control.cond(due, function()
      local mean = {}
      for i, g in ipairs(gs) do mean[i] = (g + accs[i]) / every end
      move(self, mean, vs, lr)
      for _, a in ipairs(accs) do a:assign(create_ops.zeros_like(a)) end
    end, function()
      for i, a in ipairs(accs) do a:assign_add(gs[i]) end
    end)
  else
    move(self, gs, vs, lr)
  end
  if self.use_ema then update_averages(self) end
  -- Keras 3 (and TF's Variable(constraint=)): each updated variable is
  -- projected by its constraint after the step.
  for _, v in ipairs(vs) do
    local c = v.constraint
    if c then v:assign(c(v)) end
  end
  rawget(self, "_iterations"):assign_add(1)
end

local function is_variable_or_schedule(lr) return is_variable(lr) or schedules.is_schedule(lr) end

-- An eager step runs `update` as a traced function of the optimizer's own,
-- so each variable's update is a few fused passes over its data (as inside
-- a traced train step) rather than a dozen eager ops. Its signature holds
-- the gradients' dtypes and shapes, the variables, and a snapshot of the
-- arguments and the learning rate object, so that changing a hyperparameter
-- (opt.beta_1 = ...) traces again rather than being missed. Not used while
-- a tape records (the call would be a node on it) or for a learning_rate
-- function (which may not be traceable). The Function has a retracing
-- detector of its own and keeps quiet (as gradient.lua's backward
-- functions): the warning is about the user's functions, and a shared
-- detector would keep the last optimizers traced alive.
local function snapshot(self)
  local snap = { lr = rawget(self, "_learning_rate") }
  for _, p in ipairs(getmetatable(self)._params) do
    local v = rawget(self, p[1])
    if type(v) == "number" or type(v) == "boolean" then snap[p[1]] = v end
  end
  return snap
end

local function traced_update(snap, self, n, ...)
  local gs, vs = { ... }, {}
  for i = 1, n do vs[i] = gs[n + i]; gs[n + i] = nil end
  update(self, gs, vs)
end

run_traced_update = function(self, gs, vs)
  local f = rawget(self, "_traced_update")
  if not f then
    f = tracing.trace(traced_update, { name = self.name .. "_update" })
    f._detector = retracing.new_detector()
    f._quiet = true
    rawset(self, "_traced_update", f)
  end
  local n = #gs
  local args = {}
  for i = 1, n do args[i], args[n + i] = gs[i], vs[i] end
  f(snapshot(self), self, n, unpack(args, 1, 2 * n))
end

-- One step over grads[i] (nil: none) for vars[i], i = 1..n (Keras 3's apply).
local function apply_step(self, grads, vars, n)
  if n == 0 then return self.iterations end
  for i = 1, n do check_variable(self, vars[i], fmt("pair %d", i)) end
  self:build(vars)
  local gs, vs, missing = {}, {}, {}
  for i = 1, n do
    local g = grads[i]
    if g == nil then
      missing[#missing + 1] = "'" .. vars[i].name .. "'"
    else
      gs[#gs + 1] = check_gradient(self, g, vars[i], i)
      vs[#vs + 1] = vars[i]
    end
  end
  if #gs == 0 then
    binding.error(fmt("%s: no gradients provided for any variable (every gradient is nil); check that the loss " ..
      "depends on the variables and was computed inside tape:run", self.__name))
  end
  if #missing > 0 then warn_missing(self, missing) end
  -- tide.distribute (a higher floor) sums the gradients over the workers
  -- while a strategy's scope or run is current (TF's apply_gradients in a
  -- replica context).
  -- (false: another replica applies these gradients, summed with its own: MirroredStrategy)
  if M.aggregate_gradients then
    gs = M.aggregate_gradients(gs, vs, self)
    if gs == false then return self.iterations end
  end
  if context.current() == nil and not recorder.active and not tracing.eager
      and is_variable_or_schedule(rawget(self, "_learning_rate")) then
    run_traced_update(self, gs, vs)
  else
    update(self, gs, vs)
  end
  return self.iterations
end

-- Keras's apply(grads, trainable_variables): grads[i] (nil for none) for
-- variable i; without variables, those the optimizer was built with.
function Optimizer:apply(grads, vars)
  if type(grads) ~= "table" or is_variable(grads) then
    binding.error(fmt("%s: apply expects a list of gradients, got %s", self.__name, describe(grads)))
  end
  if vars == nil then
    if not self.built then
      binding.error(fmt("%s: apply without variables needs a built optimizer; call optimizer:build(vars) first, " ..
        "or pass the variables", self.__name))
    end
    vars = self._trainable
  elseif type(vars) ~= "table" or is_variable(vars) then
    binding.error(fmt("%s: apply expects a list of Variables, got %s", self.__name, describe(vars)))
  end
  return apply_step(self, grads, vars, #vars)
end

-- apply_gradients{{gradient, variable}, ...} (TF's grads_and_vars): a nil
-- gradient leaves its variable unchanged (with Keras's warning, once).
-- Returns iterations.
function Optimizer:apply_gradients(pairs_list)
  if type(pairs_list) ~= "table" or is_variable(pairs_list) then
    binding.error(fmt("%s: apply_gradients expects a list of {gradient, variable} pairs, got %s", self.__name,
      describe(pairs_list)))
  end
  local grads, vars, n = {}, {}, #pairs_list
  for i = 1, n do
    local p = pairs_list[i]
    if type(p) ~= "table" or is_variable(p) then
      binding.error(fmt("%s: apply_gradients: pair %d is %s; each entry must be a {gradient, variable} table",
        self.__name, i, describe(p)))
    end
    grads[i], vars[i] = p[1], p[2]
  end
  return apply_step(self, grads, vars, n)
end

-- minimize(loss, var_list, {tape=}) (TF 2's): loss is a function (run
-- under a new tape) or a tensor computed under `tape`; var_list a list of
-- Variables or a function returning one. Returns iterations.
function Optimizer:minimize(loss, var_list, opts)
  local tape = opts and opts.tape
  if opts ~= nil and type(opts) ~= "table" then
    binding.error(fmt("%s: minimize's third argument is an options table {tape=}, got %s", self.__name,
      describe(opts)))
  end
  for k in pairs(opts or {}) do
    if k ~= "tape" then binding.error(fmt("%s: minimize: unknown option '%s' (expected: tape)", self.__name, k)) end
  end
  local value
  if is_callable(loss) then
    tape = tape or tape_mod.GradientTape()
    value = tape:run(loss)
  elseif istensor(loss) then
    if not tape then
      binding.error(fmt("%s: minimize: a tape is required when loss is a tensor (pass {tape = tape}, the tape " ..
        "that computed it), or pass loss as a function", self.__name))
    end
    value = loss
  else
    binding.error(fmt("%s: minimize: loss must be a function or a tensor, got %s", self.__name, describe(loss)))
  end
  if is_callable(var_list) then var_list = var_list() end
  if type(var_list) ~= "table" or is_variable(var_list) then
    binding.error(fmt("%s: minimize: var_list must be a list of Variables (or a function returning one), got %s",
      self.__name, describe(var_list)))
  end
  local grads = tape:gradient(value, var_list)
  return self:apply(grads, var_list)
end

---------------------------------------------------------------------------
-- Configs
---------------------------------------------------------------------------

-- Keras's get_config: name, learning_rate (a number, a serialized schedule,
-- or the function itself) and every argument (nil ones absent).
function Optimizer:get_config()
  local cfg = { name = self.name }
  local lr = rawget(self, "_learning_rate")
  if is_variable(lr) then cfg.learning_rate = lr:item()
  elseif schedules.is_schedule(lr) then cfg.learning_rate = schedules.serialize(lr)
  else cfg.learning_rate = lr end
  for _, p in ipairs(getmetatable(self)._params) do
    if p[1] ~= "name" then cfg[p[1]] = rawget(self, p[1]) end
  end
  return cfg
end

-- cls.from_config(config): a new optimizer from get_config's table (a
-- schedule given as {class_name=, config=} is made again).
function Optimizer.from_config(cls, config)
  if type(config) ~= "table" then
    binding.error(fmt("%s.from_config: expects a config table, got %s", tostring(cls.__name), describe(config)))
  end
  local c = {}
  for k, v in pairs(config) do c[k] = v end
  if type(c.learning_rate) == "table" and getmetatable(c.learning_rate) == nil then
    c.learning_rate = schedules.deserialize(c.learning_rate)
  end
  return cls(c)
end

function Optimizer:__tostring()
  return fmt("<tide.optimizers.%s '%s'>", self.__name, self.name)
end

return M
