-- stdlib/tide/layers/rnn.lua — Keras 3's recurrent layers: the RNN wrapper
-- over a cell (rnn_cells.lua), SimpleRNN, LSTM, GRU and Bidirectional, and the
-- loop over time they share. Inputs [B, T, F] (batch, time, features).
--
-- The loop: eagerly, a Lua loop over the T time steps. Inside tide.trace
-- with a known T, the same Lua loop (unrolled into the graph); with T None,
-- tide.while_loop with a TensorArray for the sequence. Measured on an
-- LSTM(128), 28 steps of 28 features, batch 128 (bench/layers_rnn.lua): the
-- unrolled graph's forward+backward took 83 ms against 170-185 ms through the
-- while loop (whose gradient re-runs the body and stacks each iteration's
-- loop variables), on a shared 2-core machine.
-- `unroll=true` (Keras's option) insists on unrolling (T must be known).
-- The Lua loop takes its steps (and the cells their gate blocks) as views
-- recorded as one node each (rnn_cells.one_node_views): a slice's own
-- gradient fills zeros of the whole sequence, which made an eager LSTM's
-- backward O(T^2) (8.6 -> 2.2 ms per step, forward+backward, LSTM(128), batch 128).
local binding = require "tide.binding"
local tensor_shape = require "tide.tensor_shape"
local shape_ops = require "tide.ops.shape"
local math_ops = require "tide.ops.math"
local create = require "tide.ops.create"
local class = require "tide.class"
local dynamic_shape = require "tide.ops.dynamic_shape"
local values = require "tide.tracing.values"
local control = require "tide.tracing.control"
local tensor_array = require "tide.tracing.tensor_array"
local layer = require "tide.layers.layer"
local init_scope = require "tide.initializers.init_scope"
local variable = require "tide.variable"
local cells = require "tide.layers.rnn_cells"

local Layer, who = layer.Layer, layer.who
local None = tensor_shape.None

local M = {}
for k, v in pairs(cells) do if k ~= "CELL_OPTS" and k ~= "RNNCell" and k ~= "one_node_views" then M[k] = v end end

local function boolean(cls, what, v, default)
  if v == nil then return default end
  if type(v) ~= "boolean" then
    binding.error(string.format("%s: %s must be true or false, got %s", cls, what, tostring(v)))
  end
  return v
end

-- A sub-layer built for input_shape (once).
local function build_sub(l, input_shape)
  if not rawget(l, "built") then
    l:build(input_shape)
    rawset(l, "built", true)
  end
end

---------------------------------------------------------------------------
-- The loop over time
---------------------------------------------------------------------------

-- A state's or output's size: a number, or a list of dims (ConvLSTM's [h, w, filters]).
local function dims_of(size) return type(size) == "table" and size or { size } end

-- Zeros [B, size...] for a batch of seq (known or not).
local function batch_zeros(seq, size, dt)
  local dims = dims_of(size)
  local b = seq.shape[1]
  if b == None then b = dynamic_shape.shape(seq)[0] end
  if type(b) == "number" then return create.zeros({ b, unpack(dims) }, { dtype = dt }) end
  local parts = { b }
  for i, d in ipairs(dims) do parts[i + 1] = create.fill({}, d, { dtype = b.dtype }) end
  return shape_ops.reshape(create.zeros(shape_ops.stack(parts), { dtype = dt }), { -1, unpack(dims) })
end

-- m [B, 1] or [B, T, 1] with ones added up to `rank` dims, to broadcast over
-- outputs of more than one feature dim (ConvLSTM's).
local function widen(m, rank)
  if m.ndim >= rank then return m end
  local shape = { -1 }
  for i = 2, m.ndim do shape[i] = m.shape[i] == None and dynamic_shape.shape(m)[i - 1] or m.shape[i] end
  for i = m.ndim + 1, rank do shape[i] = 1 end
  return shape_ops.reshape(m, shape)
end

local function unstack_time(seq) return shape_ops.unstack(seq, { axis = 1 }) end
local function stack_time(steps) return shape_ops.stack(steps, { axis = 1 }) end

-- Keras's masked step (its backend's rnn): where step t is masked (m_t
-- [B, 1] false), the output repeats the previous one (zeros at first) and
-- the states stay as they were.
local function masked(m, out, prev, new_states, states)
  out = math_ops.where(widen(m, out.ndim), out, prev)
  local kept = {}
  for i, s in ipairs(new_states) do kept[i] = math_ops.where(widen(m, s.ndim), s, states[i]) end
  return out, kept
end

-- A Lua loop over the known time steps of seq [B, T, ...] (eager, or
-- unrolled into a trace): step(x_t, states) -> output, states. mask: nil or
-- [B, T] bool (see `masked`).
local function lua_loop(step, seq, states, go_backwards, return_sequences, mask)
  local T = seq.shape[2]
  local xs = cells.one_node_views(seq, unstack_time, stack_time) -- (under a tape: one node, not T slices)
  local ms = mask and shape_ops.unstack(shape_ops.expand_dims(mask, -1), { axis = 1 })
  local outs, out = {}, nil
  for k = 1, T do
    local t = go_backwards and T - k + 1 or k
    local y, ns = step(xs[t], states)
    if ms then y, ns = masked(ms[t], y, out or create.zeros_like(y), ns, states) end
    out, states = y, ns
    outs[k] = out
  end
  return out, return_sequences and shape_ops.stack(outs, { axis = 1 }) or nil, states
end

-- tide.while_loop over the time steps of seq, for a time dim known only when
-- the traced function runs. The sequence of outputs rides in a TensorArray
-- (only when it is returned).
local function while_loop(step, seq, states, go_backwards, return_sequences, output_size, mask)
  local perm = { 1, 0 }
  for i = 2, seq.ndim - 1 do perm[#perm + 1] = i end
  local xt = shape_ops.transpose(seq, perm) -- [T, B, ...]
  if go_backwards then xt = shape_ops.reverse(xt, { 0 }) end
  local mt -- [T, B, 1], in the order the steps run
  if mask then
    mt = shape_ops.expand_dims(shape_ops.transpose(mask, { 1, 0 }), -1)
    if go_backwards then mt = shape_ops.reverse(mt, { 0 }) end
  end
  local n = dynamic_shape.shape(xt)[0]
  local last = batch_zeros(seq, output_size, seq.dtype)
  local i0 = create.zeros({}, { dtype = n.dtype })
  local function cond(i) return math_ops.less(i, n) end
  local function run_step(i, s, prev)
    local out, ns = step(shape_ops.gather(xt, i), s)
    if mt then out, ns = masked(shape_ops.gather(mt, i), out, prev, ns, s) end
    return out, ns
  end
  if not return_sequences then
    local _, final_states, final_last = control.while_loop(cond, function(i, s, prev)
      local out, ns = run_step(i, s, prev)
      return math_ops.add(i, 1), ns, out
    end, { i0, states, last })
    return final_last, nil, final_states
  end
  local tb = { n, dynamic_shape.shape(seq)[0] }
  for _, d in ipairs(dims_of(output_size)) do tb[#tb + 1] = create.fill({}, d, { dtype = n.dtype }) end
  local zeros_tb = shape_ops.stack(tb)
  local ta = tensor_array.TensorArray(seq.dtype, { size = n }):unstack(create.zeros(zeros_tb, { dtype = seq.dtype }))
  local _, final_states, final_last, final_ta = control.while_loop(cond, function(i, s, prev, acc)
    local out, ns = run_step(i, s, prev)
    return math_ops.add(i, 1), ns, out, acc:write(i, out)
  end, { i0, states, last, ta })
  local out_dims = dims_of(output_size)
  local perm = { 1, 0 }
  for i = 1, #out_dims do perm[i + 2] = i + 1 end
  local outputs = shape_ops.transpose(final_ta:stack(), perm) -- [T, B, out...] -> [B, T, out...]
  -- the buffer's dims come from the run: keep what is known now (Keras's
  -- (None, None, units)), so that a recurrent layer stacked on this one builds
  outputs = dynamic_shape.ensure_shape(outputs, { seq.shape[1], seq.shape[2], unpack(out_dims) })
  return final_last, outputs, final_states
end

-- Run the recurrence over seq: last output, the sequence of outputs (or
-- nil), the final states.
local function recur(self, step, seq, states, output_size, mask)
  local T = seq.shape[2]
  if T == 0 then
    binding.error(string.format("%s: the input has no time steps (shape %s)", who(self), tostring(seq.shape)))
  end
  local last, outputs, final
  if T ~= None and (not values.tracing() or self.unroll or self._loop ~= "while") then
    last, outputs, final = lua_loop(step, seq, states, self.go_backwards, self.return_sequences, mask)
  else
    if T == None and self.unroll then
      binding.error(string.format("%s: unroll=true needs a known time dim, got shape %s", who(self),
        tostring(seq.shape)))
    end
    last, outputs, final = while_loop(step, seq, states, self.go_backwards, self.return_sequences, output_size, mask)
  end
  if mask and self.zero_output_for_mask then
    -- Keras's backend: each output (in the order the steps ran) zeroed
    -- where its step is masked; the last output where the last step run is
    local m = shape_ops.expand_dims(mask, -1)
    local at = 0
    if not self.go_backwards then
      at = mask.shape[2] ~= None and mask.shape[2] - 1 or dynamic_shape.shape(mask)[1] - 1
    end
    local last_m = widen(shape_ops.gather(m, at, { axis = 1 }), last.ndim)
    last = math_ops.where(last_m, last, create.zeros_like(last))
    if self.go_backwards then m = shape_ops.reverse(m, { 1 }) end
    if outputs then outputs = math_ops.where(widen(m, outputs.ndim), outputs, create.zeros_like(outputs)) end
  end
  return last, outputs, final
end

---------------------------------------------------------------------------
-- RNN
---------------------------------------------------------------------------

local RNN_OPTS = { "return_sequences", "return_state", "go_backwards", "stateful", "unroll", "zero_output_for_mask" }

local RNN = Layer:extend("RNN")
M.RNN = RNN

-- The RNN options (Keras's names) on self, checked.
local function init_rnn(self, o)
  local cls = getmetatable(self).__name
  self.return_sequences = boolean(cls, "return_sequences", o.return_sequences, false)
  self.return_state = boolean(cls, "return_state", o.return_state, false)
  self.go_backwards = boolean(cls, "go_backwards", o.go_backwards, false)
  self.unroll = boolean(cls, "unroll", o.unroll, false)
  self.zero_output_for_mask = boolean(cls, "zero_output_for_mask", o.zero_output_for_mask, false)
  self.stateful = boolean(cls, "stateful", o.stateful, false)
  self.input_spec = { ndim = 3 }
end

RNN._init_rnn = init_rnn -- (for the RNN subclasses of other files: ConvLSTM)

-- RNN{cell, return_sequences=false, return_state=false, go_backwards=false,
-- stateful=false, unroll=false}: runs `cell` over the time steps. A cell is
-- a built-in cell or any layer with state_size (a number or a list) and
-- call(x, {states=, training=}) returning output, new states.
function RNN:init(...)
  local names = { "cell" }
  for _, k in ipairs(RNN_OPTS) do names[#names + 1] = k end
  local o = self:_kwargs(names, ...)
  local cell = o.cell
  if type(cell) == "table" and getmetatable(cell) == nil then
    cell = require("tide.layers.rnn_stacked").StackedRNNCells { cell } -- Keras: a list of cells is stacked
  end
  if not layer.is_layer(cell) then
    binding.error("RNN: cell must be a layer (e.g. tide.layers.LSTMCell{8}), got " .. type(cell))
  end
  local ss = cell.state_size
  if type(ss) ~= "number" and type(ss) ~= "table" then
    binding.error(string.format("RNN: the cell %s has no state_size (a number, or a list of numbers)", who(cell)))
  end
  self.cell = cell
  init_rnn(self, o)
end

local function state_sizes(cell)
  local ss = cell.state_size
  return type(ss) == "table" and ss or { ss }
end

function RNN:build(input_shape)
  if type(input_shape) ~= "table" or #input_shape < 3 then
    binding.error(string.format("%s: expected an input of rank 3 [batch, time, features], got shape %s", who(self),
      type(input_shape) == "table" and layer.shape_text(input_shape) or "of unknown rank"))
  end
  local step_shape = { input_shape[1] }
  for i = 3, #input_shape do step_shape[#step_shape + 1] = input_shape[i] end
  build_sub(self.cell, step_shape)
  local f = input_shape[#input_shape]
  if #input_shape == 3 and type(f) == "number" then self.input_spec = { ndim = 3, axes = { [-1] = f } } end
  if self.stateful then
    if rawget(self, "states") then return self:reset_state() end
    local b = input_shape[1]
    if type(b) ~= "number" then
      binding.error(string.format("%s: with stateful=true the batch size must be static, got input shape %s; give " ..
        "it with tide.Input{shape=..., batch_size=N} (or batch_shape=)", who(self), layer.shape_text(input_shape)))
    end
    -- Keras's state variables: not weights (not trained, not saved with them).
    local states = init_scope.run(function()
      local out = {}
      for i, size in ipairs(state_sizes(self.cell)) do
        out[i] = variable.Variable(create.zeros({ b, unpack(dims_of(size)) }, { dtype = self.cell.dtype }),
          { name = rawget(self, "name") .. "/rnn_state", trainable = false })
      end
      return out
    end)
    rawset(self, "states", states)
  end
end

-- Keras's reset_state (and reset_states): a stateful layer's states back to zeros.
function RNN:reset_state()
  local states = rawget(self, "states")
  if not states then return end
  for _, v in ipairs(states) do v:assign(create.zeros_like(v)) end
end
RNN.reset_states = RNN.reset_state

-- Zero states for a batch (a number, or a scalar tensor when the batch is
-- known only at run time).
function RNN:get_initial_state(batch_size)
  local cell = self.cell
  if cell.get_initial_state then return cell:get_initial_state(batch_size) end
  binding.error(string.format("%s: the cell %s has no get_initial_state", who(self), who(cell)))
end

-- The initial states of a call: given ones (checked), or zeros.
local function initial_states(self, seq, given)
  local sizes = state_sizes(self.cell)
  if given == nil then
    local out = {}
    for i, size in ipairs(sizes) do out[i] = batch_zeros(seq, size, seq.dtype) end
    return out
  end
  if type(given) ~= "table" or getmetatable(given) ~= nil then given = { given } end
  if #given ~= #sizes then
    binding.error(string.format("%s: initial_state must hold %d tensor(s) (the cell's states), got %d", who(self),
      #sizes, #given))
  end
  local out = {}
  for i, s in ipairs(given) do
    s = self:_convert_input(s)
    local dims = dims_of(sizes[i])
    local ok = s.ndim == #dims + 1
    for j, d in ipairs(dims) do
      local got = ok and s.shape[j + 1]
      ok = ok and (got == None or got == d)
    end
    if not ok then
      binding.error(string.format("%s: initial_state %d must have shape [batch, %s], got %s", who(self), i,
        table.concat(dims, ", "), tostring(s.shape)))
    end
    out[i] = s
  end
  return out
end

-- rnn(x, {initial_state=, training=}): the last output [B, H] (or every
-- output [B, T, H] with return_sequences); with return_state, the list
-- {output, state...}.
-- Keras's masks: the sequence's mask [B, T] (from Embedding{mask_zero=true}
-- or Masking) skips the masked steps; with return_sequences the output
-- carries it on.
RNN.supports_masking = true
function RNN:compute_mask(_, mask)
  if type(mask) == "table" then mask = mask[1] end
  local out = self.return_sequences and mask or nil
  if not self.return_state then return out end
  return { out }
end

-- The call's mask, checked: [B, T] bool.
local function sequence_mask(self, x, mask)
  if mask == nil then return nil end
  if type(mask) == "table" and not binding.istensor(mask) then mask = mask[1] end
  if mask == nil then return nil end
  mask = self:_convert_input(mask)
  if mask.dtype ~= "bool" then mask = math_ops.cast(mask, "bool") end
  if mask.ndim ~= 2 then
    binding.error(string.format("%s: the mask must be [batch, time] for an input of shape %s, got shape %s",
      who(self), tostring(x.shape), tostring(mask.shape)))
  end
  return mask
end

function RNN:call(x, opts)
  local mask = sequence_mask(self, x, opts.mask)
  local cell = self.cell
  local kept = rawget(self, "states")
  local states
  if kept and opts.initial_state == nil then -- stateful: start where the last call ended
    local expected, got = kept[1].shape[1], x.shape[1]
    if got ~= None and got ~= expected then
      binding.error(string.format("%s: a stateful RNN's batch size is fixed at %d (its states), got an input of " ..
        "shape %s", who(self), expected, tostring(x.shape)))
    end
    states = {}
    for i, v in ipairs(kept) do states[i] = v:read_value() end
  else
    states = initial_states(self, x, opts.initial_state)
  end
  local training = opts.training
  local step, seq
  if cell.input_projection and cell.step then -- built-in cells: x @ kernel for all steps at once
    local masks = cell:dropout_masks(x, states[1], training)
    local rec_masks = masks and masks.recurrent
    seq = cell:input_projection(x, masks)
    step = function(p, s) return cell:step(p, s, rec_masks) end
  else
    seq = x
    step = function(xt, s)
      local out, ns = cell:call(xt, { states = s, training = training })
      if type(ns) ~= "table" or getmetatable(ns) ~= nil then ns = { ns } end
      return out, ns
    end
  end
  local output_size = cell.output_size or state_sizes(cell)[1]
  local last, outputs, final = recur(self, step, seq, states, output_size, mask)
  if kept then
    for i, v in ipairs(kept) do -- (under a mixed policy the states are half, the Variables float32)
      local f = final[i]
      v:assign(f.dtype ~= v.dtype and math_ops.cast(f, v.dtype) or f)
    end
  end
  local output = self.return_sequences and outputs or last
  if not self.return_state then return output end
  local out = { output }
  for i, s in ipairs(final) do out[i + 1] = s end
  return out
end

local function rnn_config(self, c)
  for _, k in ipairs(RNN_OPTS) do c[k] = self[k] end
  return c
end

function RNN:get_config()
  local c = rnn_config(self, Layer.get_config(self))
  local cell = self.cell
  c.cell = layer.serialize(cell)
  return c
end

function RNN.from_config(cls, config, custom_objects)
  local copy = {}
  for k, v in pairs(config) do copy[k] = v end
  if type(copy.cell) == "table" and copy.cell.class_name then
    copy.cell = layer.deserialize(copy.cell, custom_objects)
  end
  return cls(copy)
end

---------------------------------------------------------------------------
-- SimpleRNN, LSTM, GRU: an RNN over their own cell, the cell's options flat
---------------------------------------------------------------------------

-- args: the layer's arguments in Keras 3's order (the cells' and RNN's
-- other options come by name).
local function rnn_class(name, cell_cls, cell_name, args)
  local all = {}
  for _, k in ipairs(cells.CELL_OPTS) do all[#all + 1] = k end
  for _, k in ipairs(RNN_OPTS) do all[#all + 1] = k end
  args = cells.keras_order(args, all)
  local cls = RNN:extend(name)
  function cls:init(...)
    local o = self:_kwargs(args, ...)
    local cell_opts, rnn_opts = { name = cell_name, dtype = rawget(self, "dtype"), trainable = rawget(self, "_trainable") }, {}
    for _, k in ipairs(cells.CELL_OPTS) do cell_opts[k] = o[k] end
    for _, k in ipairs(RNN_OPTS) do rnn_opts[k] = o[k] end
    local ok, err = pcall(cell_cls, cell_opts)
    if not ok then error((tostring(err):gsub(cell_cls.__name .. ":", name .. ":")), 0) end
    self.cell = err
    init_rnn(self, rnn_opts)
    self.units = self.cell.units
  end
  function cls:get_config()
    local c = rnn_config(self, Layer.get_config(self))
    for k, v in pairs(self.cell:get_config()) do
      if k ~= "name" and k ~= "trainable" and k ~= "dtype" then c[k] = v end
    end
    return c
  end
  cls.from_config = Layer.from_config
  M[name] = cls
  return cls
end

-- SimpleRNN{units, activation="tanh", use_bias=true, kernel_initializer=
-- "glorot_uniform", recurrent_initializer="orthogonal", bias_initializer=
-- "zeros", *_regularizer, return_sequences, return_state, go_backwards, unroll}
rnn_class("SimpleRNN", cells.SimpleRNNCell, "simple_rnn_cell", { "units", "activation", "use_bias",
  "kernel_initializer", "recurrent_initializer", "bias_initializer", "kernel_regularizer", "recurrent_regularizer",
  "bias_regularizer", "activity_regularizer", "kernel_constraint", "recurrent_constraint", "bias_constraint",
  "dropout", "recurrent_dropout", "return_sequences", "return_state", "go_backwards", "stateful", "unroll", "seed" })
-- LSTM{units, ..., recurrent_activation="sigmoid", unit_forget_bias=true}
rnn_class("LSTM", cells.LSTMCell, "lstm_cell", { "units", "activation", "recurrent_activation", "use_bias",
  "kernel_initializer", "recurrent_initializer", "bias_initializer", "unit_forget_bias", "kernel_regularizer",
  "recurrent_regularizer", "bias_regularizer", "activity_regularizer", "kernel_constraint", "recurrent_constraint",
  "bias_constraint", "dropout", "recurrent_dropout", "seed", "return_sequences", "return_state", "go_backwards",
  "stateful", "unroll" })
-- GRU{units, ..., recurrent_activation="sigmoid", reset_after=true}
rnn_class("GRU", cells.GRUCell, "gru_cell", { "units", "activation", "recurrent_activation", "use_bias",
  "kernel_initializer", "recurrent_initializer", "bias_initializer", "kernel_regularizer", "recurrent_regularizer",
  "bias_regularizer", "activity_regularizer", "kernel_constraint", "recurrent_constraint", "bias_constraint",
  "dropout", "recurrent_dropout", "seed", "return_sequences", "return_state", "go_backwards", "stateful", "unroll",
  "reset_after" })

---------------------------------------------------------------------------
-- Bidirectional
---------------------------------------------------------------------------

local MERGE_MODES = { concat = true, sum = true, mul = true, ave = true }

local function class_is_rnn(l) return layer.is_layer(l) and class.is_instance(l, RNN) end

local Bidirectional = Layer:extend("Bidirectional")
M.Bidirectional = Bidirectional

-- A fresh copy of an RNN layer from its config, renamed, going backwards or not.
local function copy_rnn(l, name, go_backwards)
  local config = l:get_config()
  config.name = name
  if go_backwards ~= nil then config.go_backwards = go_backwards end
  return getmetatable(l):from_config(config)
end

-- Bidirectional{layer, merge_mode="concat", backward_layer=nil}: layer runs
-- forwards and a copy of it (or backward_layer) backwards over the input;
-- their outputs merged by "concat", "sum", "mul", "ave", or kept apart
-- (merge_mode=false, Keras's None: the list {forward, backward}). Weights: the forward
-- layer's, then the backward layer's (Keras's order).
function Bidirectional:init(...)
  local o = self:_kwargs({ "layer", "merge_mode", "weights", "backward_layer" }, ...)
  local l = o.layer
  if not class_is_rnn(l) then
    binding.error("Bidirectional: layer must be an RNN layer (LSTM, GRU, SimpleRNN or RNN), got " ..
      (layer.is_layer(l) and who(l) or type(l)))
  end
  local mode = o.merge_mode
  if mode == nil then mode = "concat" end
  if mode == false or mode == None then mode = false end -- Keras's merge_mode=None (Lua's nil means the default)
  if mode and not MERGE_MODES[mode] then
    binding.error(string.format("Bidirectional: merge_mode must be one of \"concat\", \"sum\", \"mul\", \"ave\" " ..
      "or false (Keras's None: the list {forward, backward}), got %s", tostring(mode)))
  end
  if o.weights ~= nil then binding.error("Bidirectional: weights= is not supported; use set_weights after building") end
  local base = l.name:gsub("^forward_", "")
  self.forward_layer = copy_rnn(l, "forward_" .. base)
  if o.backward_layer == nil then
    self.backward_layer = copy_rnn(l, "backward_" .. base, not l.go_backwards)
  else
    local b = o.backward_layer
    if not class_is_rnn(b) then
      binding.error("Bidirectional: backward_layer must be an RNN layer, got " .. (layer.is_layer(b) and who(b) or type(b)))
    end
    self.backward_layer = b
  end
  local f, b = self.forward_layer, self.backward_layer
  if f.go_backwards == b.go_backwards then
    binding.error(string.format("Bidirectional: the forward and backward layers must differ in go_backwards " ..
      "(both are %s)", tostring(f.go_backwards)))
  end
  for _, a in ipairs { "return_sequences", "return_state" } do
    if f[a] ~= b[a] then
      binding.error(string.format("Bidirectional: the forward and backward layers must agree on %s (%s and %s)", a,
        tostring(f[a]), tostring(b[a])))
    end
  end
  self.merge_mode = mode
  self.return_sequences, self.return_state = f.return_sequences, f.return_state
  -- Keras: masked steps of a returned sequence come out as zeros (not the
  -- previous output), so the two directions line up
  f.zero_output_for_mask, b.zero_output_for_mask = f.return_sequences, b.return_sequences
  self.stateful = false
  self.input_spec = { ndim = f.input_spec and f.input_spec.ndim or 3 } -- (a ConvLSTM's is higher)
end

function Bidirectional:build(input_shape)
  build_sub(self.forward_layer, input_shape)
  build_sub(self.backward_layer, input_shape)
  self.input_spec = self.forward_layer.input_spec
end

-- bidi(x, {initial_state=, training=}): initial_state holds the forward
-- layer's states, then the backward layer's.
function Bidirectional:call(x, opts)
  local fs, bs
  if opts.initial_state ~= nil then
    local s = opts.initial_state
    if type(s) ~= "table" or getmetatable(s) ~= nil or #s % 2 ~= 0 then
      binding.error(string.format("%s: initial_state must be a list of the forward states then the backward ones",
        who(self)))
    end
    local half = #s / 2
    fs, bs = { unpack(s, 1, half) }, { unpack(s, half + 1) }
  end
  local mask = opts.mask
  if type(mask) == "table" and not binding.istensor(mask) then mask = mask[1] end
  local y = self.forward_layer(x, { initial_state = fs, training = opts.training, mask = mask })
  local y_rev = self.backward_layer(x, { initial_state = bs, training = opts.training, mask = mask })
  local states = {}
  if self.return_state then
    for i = 2, #y do states[#states + 1] = y[i] end
    for i = 2, #y_rev do states[#states + 1] = y_rev[i] end
    y, y_rev = y[1], y_rev[1]
  end
  if self.return_sequences then y_rev = shape_ops.reverse(y_rev, { 1 }) end
  local mode, output = self.merge_mode, nil
  if mode == "concat" then output = shape_ops.concat({ y, y_rev }, -1)
  elseif mode == "sum" then output = y + y_rev
  elseif mode == "ave" then output = (y + y_rev) / 2
  elseif mode == "mul" then output = y * y_rev
  else output = { y, y_rev } end
  if not self.return_state then return output end
  local out = mode and { output } or output
  for _, s in ipairs(states) do out[#out + 1] = s end
  return out
end

-- Keras's: with return_sequences the outputs carry the input's mask.
Bidirectional.supports_masking = true
function Bidirectional:compute_mask(_, mask)
  if type(mask) == "table" then mask = mask[1] end
  local out = self.return_sequences and mask or nil
  local outs = self.merge_mode and out or { out, out }
  if not self.return_state then return outs end
  if self.merge_mode then return { out } end
  return outs
end

function Bidirectional:get_config()
  local c = Layer.get_config(self)
  c.merge_mode = self.merge_mode
  c.layer = layer.serialize(self.forward_layer)
  c.backward_layer = layer.serialize(self.backward_layer)
  return c
end

function Bidirectional.from_config(cls, config, custom_objects)
  local copy = {}
  for k, v in pairs(config) do copy[k] = v end
  for _, k in ipairs { "layer", "backward_layer" } do
    local v = copy[k]
    if type(v) == "table" and v.class_name then copy[k] = layer.deserialize(v, custom_objects) end
  end
  return cls(copy)
end

return M
