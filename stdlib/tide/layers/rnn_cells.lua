-- stdlib/tide/layers/rnn_cells.lua — Keras 3's recurrent cells SimpleRNNCell,
-- LSTMCell and GRUCell: one time step, weights in Keras's layouts.
-- B = batch, F = input features, H = units. A cell is called as
-- `local output, states = cell(x [B, F], {states = {h [B, H], ...}})`.
-- Weights (Keras's order and shapes, so they move between tide and Keras):
--   SimpleRNNCell kernel [F, H], recurrent_kernel [H, H], bias [H]
--   LSTMCell      kernel [F, 4H], recurrent_kernel [H, 4H], bias [4H]; gates i, f, c, o
--   GRUCell       kernel [F, 3H], recurrent_kernel [H, 3H], bias [2, 3H] (reset_after,
--                 input and recurrent biases) or [3H]; gates z, r, h
-- The RNN layer (rnn.lua) splits a cell in two: input_projection(x) for all
-- time steps at once (one large matmul), then step(projection_t, states).
local binding = require "tide.binding"
local linalg = require "tide.ops.linalg"
local shape_ops = require "tide.ops.shape"
local create = require "tide.ops.create"
local nn = require "tide.ops.nn"
local initializers = require "tide.initializers"
local regularizers = require "tide.regularizers"
local constraints = require "tide.constraints"
local activations = require "tide.activations"
local layer = require "tide.layers.layer"
local recorder = require "tide.tape_recorder"

local Layer, who = layer.Layer, layer.who
local matmul = linalg.matmul

local M = {}

local CELL_OPTS = { "units", "activation", "recurrent_activation", "use_bias", "kernel_initializer",
  "recurrent_initializer", "bias_initializer", "unit_forget_bias", "kernel_regularizer", "recurrent_regularizer",
  "bias_regularizer", "kernel_constraint", "recurrent_constraint", "bias_constraint", "dropout", "recurrent_dropout",
  "reset_after", "seed", "implementation" }
M.CELL_OPTS = CELL_OPTS

-- names (a positional list in Keras's order) with the other names of `all`
-- as keywords: an option of another cell comes by name and gets an error
-- saying whose it is.
local function keras_order(names, all)
  local has, kw = {}, {}
  for _, k in ipairs(names) do has[k] = true end
  for _, k in ipairs(all) do if not has[k] then kw[#kw + 1] = k end end
  names.keywords = kw
  return names
end
M.keras_order = keras_order

-- Each cell's arguments in Keras 3's order.
local SIMPLE_ARGS = keras_order({ "units", "activation", "use_bias", "kernel_initializer", "recurrent_initializer",
  "bias_initializer", "kernel_regularizer", "recurrent_regularizer", "bias_regularizer", "kernel_constraint",
  "recurrent_constraint", "bias_constraint", "dropout", "recurrent_dropout", "seed" }, CELL_OPTS)
local LSTM_ARGS = keras_order({ "units", "activation", "recurrent_activation", "use_bias", "kernel_initializer",
  "recurrent_initializer", "bias_initializer", "unit_forget_bias", "kernel_regularizer", "recurrent_regularizer",
  "bias_regularizer", "kernel_constraint", "recurrent_constraint", "bias_constraint", "dropout", "recurrent_dropout",
  "seed" }, CELL_OPTS)
local GRU_ARGS = keras_order({ "units", "activation", "recurrent_activation", "use_bias", "kernel_initializer",
  "recurrent_initializer", "bias_initializer", "kernel_regularizer", "recurrent_regularizer", "bias_regularizer",
  "kernel_constraint", "recurrent_constraint", "bias_constraint", "dropout", "recurrent_dropout", "reset_after",
  "seed" }, CELL_OPTS)

---------------------------------------------------------------------------
-- The base of the cells
---------------------------------------------------------------------------

local RNNCell = Layer:extend("RNNCell")
M.RNNCell = RNNCell

-- Options shared by the three cells, checked as Keras does; `gates` is the
-- number of H-wide blocks in the kernels (1, 4, 3).
function RNNCell:_init_cell(o, gates, defaults)
  local name = getmetatable(self).__name
  local units = o.units
  if type(units) ~= "number" or units ~= math.floor(units) or units <= 0 then
    binding.error(string.format("%s: units must be a positive integer, got %s", name, tostring(units)))
  end
  self.units = units
  self.gates = gates
  self.activation = activations.get(o.activation == nil and "tanh" or o.activation, name .. ": activation")
  if defaults.recurrent_activation then
    self.recurrent_activation = activations.get(o.recurrent_activation or "sigmoid", name .. ": recurrent_activation")
  elseif o.recurrent_activation ~= nil then
    binding.error(name .. ": recurrent_activation is not an option of this cell")
  end
  if o.use_bias ~= nil and type(o.use_bias) ~= "boolean" then
    binding.error(string.format("%s: use_bias must be true or false, got %s", name, tostring(o.use_bias)))
  end
  self.use_bias = o.use_bias ~= false
  self.kernel_initializer = initializers.get(o.kernel_initializer or "glorot_uniform", name .. ": kernel_initializer")
  self.recurrent_initializer = initializers.get(o.recurrent_initializer or "orthogonal",
    name .. ": recurrent_initializer")
  self.bias_initializer = initializers.get(o.bias_initializer or "zeros", name .. ": bias_initializer")
  self.kernel_regularizer = regularizers.get(o.kernel_regularizer, name .. ": kernel_regularizer")
  self.kernel_constraint = constraints.get(o.kernel_constraint, name .. ": kernel_constraint")
  self.recurrent_regularizer = regularizers.get(o.recurrent_regularizer, name .. ": recurrent_regularizer")
  self.recurrent_constraint = constraints.get(o.recurrent_constraint, name .. ": recurrent_constraint")
  self.bias_regularizer = regularizers.get(o.bias_regularizer, name .. ": bias_regularizer")
  self.bias_constraint = constraints.get(o.bias_constraint, name .. ": bias_constraint")
  for _, k in ipairs { "dropout", "recurrent_dropout" } do
    local v = o[k] or 0
    if type(v) ~= "number" then binding.error(string.format("%s: %s must be a number, got %s", name, k, type(v))) end
    self[k] = math.min(1, math.max(0, v)) -- Keras clips to [0, 1]
  end
  self.seed = o.seed
  self.state_size = defaults.state_size(units)
  self.output_size = units
end

-- Keras's cells take [B, F]; the RNN layer gives them one time step.
function RNNCell:build(input_shape)
  local f = input_shape and input_shape[#input_shape]
  if type(f) ~= "number" then
    binding.error(string.format("%s: the feature dim (last) of the input must be known, got shape %s", who(self),
      input_shape and layer.shape_text(input_shape) or "of unknown rank"))
  end
  local gates, units = self.gates, self.units
  self.kernel = self:add_weight { name = "kernel", shape = { f, gates * units }, initializer = self.kernel_initializer,
    regularizer = self.kernel_regularizer, constraint = self.kernel_constraint }
  self.recurrent_kernel = self:add_weight { name = "recurrent_kernel", shape = { units, gates * units },
    initializer = self.recurrent_initializer, regularizer = self.recurrent_regularizer,
    constraint = self.recurrent_constraint }
  if self.use_bias then
    self.bias = self:add_weight { name = "bias", shape = self:_bias_shape(), initializer = self:_bias_init(),
      regularizer = self.bias_regularizer, constraint = self.bias_constraint }
  end
end

function RNNCell:_bias_shape() return { self.gates * self.units } end
function RNNCell:_bias_init() return self.bias_initializer end

-- Keras's DropoutRNNCell: dropout masks drawn once per call over a
-- sequence and used at every time step, only while training and for a rate
-- in (0, 1) (Keras applies none at 0 or 1): {input = masks [B, F],
-- recurrent = masks [B, H]}, each one mask or, with implementation 1, one
-- per gate (Keras switches LSTM and GRU to implementation 1 when
-- recurrent_dropout is set); nil when nothing is dropped. x is the input
-- sequence [B, T, F] or one step [B, F], h the first state [B, H].
local function active(rate) return rate > 0 and rate < 1 end
function RNNCell:dropout_masks(x, h, training)
  if not training then return nil end
  local d, rd = active(self.dropout), active(self.recurrent_dropout)
  if not (d or rd) then return nil end
  local x_step = x.ndim == 3 and shape_ops.gather(x, 0, { axis = 1 }) or x
  local n = self.implementation == 1 and self.gates or 1
  local function draw(like, rate)
    local ones, ms = create.ones_like(like), {}
    for i = 1, n do ms[i] = nn.dropout(ones, rate, { seed = self.seed }) end
    return ms
  end
  return { input = d and draw(x_step, self.dropout) or nil, recurrent = rd and draw(h, self.recurrent_dropout) or nil }
end

-- a @ w, or with per-gate masks ms (a [B, D] each) the gates' blocks of w
-- (column blocks of H) applied to a * ms[g] and joined: Keras's
-- implementation 1. One mask multiplies a once. `a` may be [B, T, D].
local function masked_matmul(a, w, ms)
  if not ms then return matmul(a, w) end
  local function masked(m)
    if a.ndim == 3 then m = shape_ops.expand_dims(m, 1) end
    return a * m
  end
  if #ms == 1 then return matmul(masked(ms[1]), w) end
  local ws = shape_ops.split(w, #ms, { axis = -1 })
  local parts = {}
  for g = 1, #ms do parts[g] = matmul(masked(ms[g]), ws[g]) end
  return shape_ops.concat(parts, -1)
end

-- x @ kernel (+ the input bias): for one step [B, F] or for every step at
-- once [B, T, F] (matmul broadcasts the kernel over the batch dims); masks
-- from dropout_masks drop inputs first.
function RNNCell:input_projection(x, masks)
  local z = masked_matmul(x, self.kernel, masks and masks.input)
  local b = self:_input_bias()
  if b then z = z + b end
  return z
end

function RNNCell:_input_bias() return self.bias end

-- cell(x, {states = {...}, training=}): output, new states (Keras's
-- cell(inputs, states)). Built on the first call from x's shape.
function RNNCell:_call(x, opts)
  if opts ~= nil and (type(opts) ~= "table" or getmetatable(opts) ~= nil) then
    binding.error(string.format("%s: call a cell as cell(x, {states = {h, ...}})", who(self)))
  end
  opts = opts or {}
  x = self:_convert_input(x)
  if x.ndim >= 0 and x.ndim ~= 2 then
    binding.error(string.format("%s: a cell takes one time step [batch, features], got shape %s", who(self),
      tostring(x.shape)))
  end
  local states = opts.states
  if type(states) ~= "table" or getmetatable(states) ~= nil then
    if states == nil then
      binding.error(string.format("%s: states are required: cell(x, {states = {h, ...}}); get_initial_state(batch) " ..
        "makes zeros", who(self)))
    end
    states = { states }
  end
  local n = type(self.state_size) == "table" and #self.state_size or 1
  if #states ~= n then
    binding.error(string.format("%s: expected %d state tensor(s), got %d", who(self), n, #states))
  end
  local conv = {}
  for i, s in ipairs(states) do conv[i] = self:_convert_input(s) end
  self:_maybe_build(x)
  local masks = self:dropout_masks(x, conv[1], opts.training)
  return self:step(self:input_projection(x, masks), conv, masks and masks.recurrent)
end

-- Zero states for a batch of batch_size (a number, or a scalar int tensor
-- for a batch known only when a traced function runs), in the compute dtype.
function RNNCell:get_initial_state(batch_size)
  local sizes = type(self.state_size) == "table" and self.state_size or { self.state_size }
  local out = {}
  for i, size in ipairs(sizes) do
    if type(batch_size) == "number" then
      out[i] = create.zeros({ batch_size, size }, { dtype = self.compute_dtype })
    else
      local shape = shape_ops.stack({ batch_size, create.fill({}, size, { dtype = batch_size.dtype }) })
      out[i] = shape_ops.reshape(create.zeros(shape, { dtype = self.compute_dtype }), { -1, size })
    end
  end
  return out
end

function RNNCell:get_config()
  local c = Layer.get_config(self)
  c.units = self.units
  c.activation = activations.serialize(self.activation)
  if self.recurrent_activation then c.recurrent_activation = activations.serialize(self.recurrent_activation) end
  c.use_bias = self.use_bias
  c.kernel_initializer = initializers.serialize(self.kernel_initializer)
  c.recurrent_initializer = initializers.serialize(self.recurrent_initializer)
  c.bias_initializer = initializers.serialize(self.bias_initializer)
  c.kernel_regularizer = regularizers.serialize(self.kernel_regularizer)
  c.kernel_constraint = constraints.serialize(self.kernel_constraint)
  c.recurrent_regularizer = regularizers.serialize(self.recurrent_regularizer)
  c.recurrent_constraint = constraints.serialize(self.recurrent_constraint)
  c.bias_regularizer = regularizers.serialize(self.bias_regularizer)
  c.bias_constraint = constraints.serialize(self.bias_constraint)
  c.dropout, c.recurrent_dropout, c.seed = self.dropout, self.recurrent_dropout, self.seed
  return c
end

-- views(x) (a list of views of x, made with the tapes paused) recorded, when
-- a tape watches x, as one node whose gradient is combine(list of the views'
-- gradients, zeros for those that got none). A view's own gradient writes it
-- into zeros of x's whole shape; with one per view, each added into x's
-- gradient, splitting a [B, T, F] sequence into T steps costs O(T^2).
-- (The closure lives here, away from the path without a tape, which LuaJIT
-- then compiles: it does not compile a function that makes a closure.)
local function record_views(x, parts, combine)
  recorder.custom({ x }, parts, function(dys)
    local filled = {}
    for i = 1, #parts do filled[i] = dys[i] or create.zeros_like(parts[i]) end
    return combine(filled)
  end)
end
local function one_node_views(x, views, combine)
  if recorder.active and recorder.any_wanted { x } then
    local parts = recorder.paused(views, x)
    record_views(x, parts, combine)
    return parts
  end
  return views(x)
end
M.one_node_views = one_node_views

-- Split z [B, k*H] into k blocks of H along the last axis (one gradient node: a concat).
local splitters = {} -- k -> a function splitting in k, made once
local function splitter(k)
  local split = function(x) return shape_ops.split(x, k, { axis = -1 }) end
  splitters[k] = split
  return split
end
local function concat_last(parts) return shape_ops.concat(parts, -1) end
local function blocks(z, k) return one_node_views(z, splitters[k] or splitter(k), concat_last) end

---------------------------------------------------------------------------
-- SimpleRNNCell: h = activation(x @ kernel + bias + h_prev @ recurrent_kernel)
---------------------------------------------------------------------------

local SimpleRNNCell = RNNCell:extend("SimpleRNNCell")
M.SimpleRNNCell = SimpleRNNCell

function SimpleRNNCell:init(...)
  local o = self:_kwargs(SIMPLE_ARGS, ...)
  for _, k in ipairs { "unit_forget_bias", "reset_after", "implementation" } do
    if o[k] ~= nil then binding.error("SimpleRNNCell: " .. k .. " is not an option of SimpleRNNCell") end
  end
  self:_init_cell(o, 1, { state_size = function(u) return u end })
end

-- step(xz, states, recurrent_masks): one step on the input's projection.
function SimpleRNNCell:step(xz, states, rec_masks)
  local h = self.activation(xz + masked_matmul(states[1], self.recurrent_kernel, rec_masks))
  return h, { h }
end

---------------------------------------------------------------------------
-- LSTMCell (Keras's implementation 2, gates i, f, c, o):
--   z = x @ kernel + h_prev @ recurrent_kernel + bias
--   c = f * c_prev + i * activation(z_c);  h = o * activation(c)
---------------------------------------------------------------------------

-- Keras's implementation option (1: a matmul per gate, 2: one for all);
-- recurrent dropout needs 1 (a mask per gate), as Keras sets it.
local function implementation(o, recurrent_dropout)
  local impl = o.implementation or 2
  if impl ~= 1 and impl ~= 2 then
    binding.error("implementation must be 1 or 2, got " .. tostring(o.implementation))
  end
  if recurrent_dropout ~= 0 then impl = 1 end
  return impl
end

local LSTMCell = RNNCell:extend("LSTMCell")
M.LSTMCell = LSTMCell

function LSTMCell:init(...)
  local o = self:_kwargs(LSTM_ARGS, ...)
  if o.reset_after ~= nil then binding.error("LSTMCell: reset_after is an option of GRUCell, not LSTMCell") end
  self:_init_cell(o, 4, { recurrent_activation = true, state_size = function(u) return { u, u } end })
  if o.unit_forget_bias ~= nil and type(o.unit_forget_bias) ~= "boolean" then
    binding.error("LSTMCell: unit_forget_bias must be true or false, got " .. tostring(o.unit_forget_bias))
  end
  self.unit_forget_bias = o.unit_forget_bias ~= false
  self.implementation = implementation(o, self.recurrent_dropout)
end

-- With unit_forget_bias, the forget gate's block starts at one (Keras).
function LSTMCell:_bias_init()
  if not self.unit_forget_bias then return self.bias_initializer end
  local init, units = self.bias_initializer, self.units
  return function(_, dt)
    return shape_ops.concat({ init({ units }, dt), create.ones({ units }, { dtype = dt }), init({ 2 * units }, dt) }, 0)
  end
end

function LSTMCell:step(xz, states, rec_masks)
  local z = xz + masked_matmul(states[1], self.recurrent_kernel, rec_masks)
  local g = blocks(z, 4)
  local ra, act = self.recurrent_activation, self.activation
  local i, f, o = ra(g[1]), ra(g[2]), ra(g[4])
  local c = f * states[2] + i * act(g[3])
  local h = o * act(c)
  return h, { h, c }
end

function LSTMCell:get_config()
  local c = RNNCell.get_config(self)
  c.unit_forget_bias = self.unit_forget_bias
  return c
end

---------------------------------------------------------------------------
-- GRUCell (gates z, r, h; Keras's implementation 2):
--   reset_after (TF2's default):  hh = act(x_h + r * (h_prev @ R_h + b_rh))
--   otherwise:                    hh = act(x_h + (r * h_prev) @ R_h)
--   h = z * h_prev + (1 - z) * hh
---------------------------------------------------------------------------

local GRUCell = RNNCell:extend("GRUCell")
M.GRUCell = GRUCell

function GRUCell:init(...)
  local o = self:_kwargs(GRU_ARGS, ...)
  if o.unit_forget_bias ~= nil then binding.error("GRUCell: unit_forget_bias is an option of LSTMCell, not GRUCell") end
  self:_init_cell(o, 3, { recurrent_activation = true, state_size = function(u) return u end })
  if o.reset_after ~= nil and type(o.reset_after) ~= "boolean" then
    binding.error("GRUCell: reset_after must be true or false, got " .. tostring(o.reset_after))
  end
  self.reset_after = o.reset_after ~= false
  self.implementation = implementation(o, self.recurrent_dropout)
end

function GRUCell:_bias_shape()
  if self.reset_after then return { 2, 3 * self.units } end
  return { 3 * self.units }
end

function GRUCell:_input_bias()
  if not self.bias then return nil end
  if self.reset_after then return self.bias:read_value()[0] end
  return self.bias
end

function GRUCell:step(xz, states, rec_masks)
  local h_prev = states[1]
  local units = self.units
  local x = blocks(xz, 3)
  local ra = self.recurrent_activation
  local z, r, hh
  if self.reset_after then
    local inner = masked_matmul(h_prev, self.recurrent_kernel, rec_masks)
    if self.bias then inner = inner + self.bias:read_value()[1] end
    local rec = blocks(inner, 3)
    z = ra(x[1] + rec[1])
    r = ra(x[2] + rec[2])
    hh = self.activation(x[3] + r * rec[3])
  else
    local rk = self.recurrent_kernel:read_value()
    local zr_masks = rec_masks and { rec_masks[1], rec_masks[2] }
    local rec = blocks(masked_matmul(h_prev, rk:slice { {}, { 0, 2 * units } }, zr_masks), 2)
    z = ra(x[1] + rec[1])
    r = ra(x[2] + rec[2])
    local h_h = rec_masks and h_prev * rec_masks[3] or h_prev
    hh = self.activation(x[3] + matmul(r * h_h, rk:slice { {}, { 2 * units } }))
  end
  local h = z * h_prev + (1 - z) * hh
  return h, { h }
end

function GRUCell:get_config()
  local c = RNNCell.get_config(self)
  c.reset_after = self.reset_after
  return c
end

return M
