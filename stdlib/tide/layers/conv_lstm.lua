-- stdlib/tide/layers/conv_lstm.lua — Keras 3's ConvLSTM1D, ConvLSTM2D and ConvLSTM3D:
-- an LSTM whose matmuls are convolutions (channels_last), an RNN (rnn.lua) over its cell.
-- Input [B, T, spatial..., C] -> [B, (T,) spatial'..., filters]; weights as Keras:
-- kernel [k..., C, 4F], recurrent_kernel [k..., F, 4F], bias [4F], gates i, f, c, o.
-- As the LSTM cell, the input convolution runs once for every step ([B * T, ...]);
-- each step convolves the state (stride 1, "same") and mixes the gates.
local binding = require "tide.binding"
local shape_ops = require "tide.ops.shape"
local create = require "tide.ops.create"
local nn = require "tide.ops.nn"
local nn_conv = require "tide.ops.nn_conv"
local nn_conv_nd = require "tide.ops.nn_conv_nd"
local initializers = require "tide.initializers"
local regularizers = require "tide.regularizers"
local constraints = require "tide.constraints"
local activations = require "tide.activations"
local layer = require "tide.layers.layer"
local dims = require "tide.layers.dims"
local base = require "tide.layers.conv_base"
local rnn = require "tide.layers.rnn"

local Layer, who = layer.Layer, layer.who

local M = {}

-- The cell's options, in Keras 3's order (ConvLSTMCell's, after rank).
local CELL_ARGS = { "filters", "kernel_size", "strides", "padding", "data_format", "dilation_rate", "activation",
  "recurrent_activation", "use_bias", "kernel_initializer", "recurrent_initializer", "bias_initializer",
  "unit_forget_bias", "kernel_regularizer", "recurrent_regularizer", "bias_regularizer", "kernel_constraint",
  "recurrent_constraint", "bias_constraint", "dropout", "recurrent_dropout", "seed" }
local RNN_ARGS = { "return_sequences", "return_state", "go_backwards", "stateful" }

local ConvLSTMCell = Layer:extend("ConvLSTMCell")

-- ConvLSTMCell{rank, filters, kernel_size, ...}: one step of a ConvLSTM (not a
-- name of tide.layers, as in Keras 3: the ConvLSTM layers make theirs).
function ConvLSTMCell:init(...)
  local names = { "rank" }
  for _, k in ipairs(CELL_ARGS) do names[#names + 1] = k end
  local o = self:_kwargs(names, ...)
  local rank = o.rank
  local cls = "ConvLSTM" .. tostring(rank) .. "D"
  if type(o.filters) ~= "number" or o.filters <= 0 or o.filters ~= math.floor(o.filters) then
    binding.error(string.format("%s: filters must be a positive integer, got %s", cls, tostring(o.filters)))
  end
  self.rank, self.filters = rank, o.filters
  -- (activation defaults to tanh here, and common's use_bias/bias options serve as they are)
  if o.activation == nil then o.activation = "tanh" end
  base.common(self, cls, o, rank)
  self.recurrent_activation = activations.get(o.recurrent_activation or "sigmoid", cls .. ": recurrent_activation")
  self.kernel_initializer = initializers.get(o.kernel_initializer or "glorot_uniform", cls .. ": kernel_initializer")
  self.recurrent_initializer = initializers.get(o.recurrent_initializer or "orthogonal",
    cls .. ": recurrent_initializer")
  self.kernel_regularizer = regularizers.get(o.kernel_regularizer, cls .. ": kernel_regularizer")
  self.recurrent_regularizer = regularizers.get(o.recurrent_regularizer, cls .. ": recurrent_regularizer")
  self.kernel_constraint = constraints.get(o.kernel_constraint, cls .. ": kernel_constraint")
  self.recurrent_constraint = constraints.get(o.recurrent_constraint, cls .. ": recurrent_constraint")
  if o.unit_forget_bias ~= nil and type(o.unit_forget_bias) ~= "boolean" then
    binding.error(string.format("%s: unit_forget_bias must be true or false, got %s", cls,
      tostring(o.unit_forget_bias)))
  end
  self.unit_forget_bias = o.unit_forget_bias ~= false
  for _, k in ipairs { "dropout", "recurrent_dropout" } do
    local v = o[k] or 0
    if type(v) ~= "number" then binding.error(string.format("%s: %s must be a number, got %s", cls, k, type(v))) end
    self[k] = math.min(1, math.max(0, v)) -- Keras clips to [0, 1]
  end
  self.seed = o.seed
  self.input_spec = nil
end

-- Built from one step's shape [B, spatial..., C]: the spatial dims must be
-- known (Keras's rule), and give the states' shape.
function ConvLSTMCell:build(input_shape)
  local rank = self.rank
  local ok = type(input_shape) == "table" and #input_shape == rank + 2
  for i = 2, rank + 2 do ok = ok and type(input_shape[i]) == "number" end
  if not ok then
    binding.error(string.format("%s: the spatial and channel dims of the input must be known (Keras's rule), got a " ..
      "step of shape %s", who(self), type(input_shape) == "table" and layer.shape_text(input_shape) or "unknown"))
  end
  local c, f = input_shape[rank + 2], self.filters
  local state = {}
  for i = 1, rank do
    local n, k, s, d = input_shape[i + 1], self.kernel_size[i], self.strides[i], self.dilation_rate[i]
    local ke = (k - 1) * d + 1
    state[i] = self.padding == "same" and math.floor((n + s - 1) / s) or math.floor((n - ke) / s) + 1
    if state[i] <= 0 then
      binding.error(string.format("%s: the input's spatial dims %s are smaller than the dilated kernel (padding " ..
        "\"valid\")", who(self), layer.shape_text(input_shape)))
    end
  end
  state[rank + 1] = f
  self.state_size, self.output_size = { state, state }, state
  local k = { unpack(self.kernel_size) }
  k[rank + 1], k[rank + 2] = c, 4 * f
  self.kernel = self:add_weight { name = "kernel", shape = k, initializer = self.kernel_initializer,
    regularizer = self.kernel_regularizer, constraint = self.kernel_constraint }
  local r = { unpack(self.kernel_size) }
  r[rank + 1], r[rank + 2] = f, 4 * f
  self.recurrent_kernel = self:add_weight { name = "recurrent_kernel", shape = r,
    initializer = self.recurrent_initializer, regularizer = self.recurrent_regularizer,
    constraint = self.recurrent_constraint }
  if self.use_bias then
    local init = self.bias_initializer
    if self.unit_forget_bias then -- the forget gate's block starts at one (Keras)
      local bi = init
      init = function(_, dt)
        return shape_ops.concat({ bi({ f }, dt), create.ones({ f }, { dtype = dt }), bi({ 2 * f }, dt) }, 0)
      end
    end
    self.bias = self:add_weight { name = "bias", shape = { 4 * f }, initializer = init,
      regularizer = self.bias_regularizer, constraint = self.bias_constraint }
  end
end

-- x convolved with w (`strides`, `dilations`, `padding` of the cell, or the recurrent one's).
local function conv(rank, x, w, strides, padding, dilations)
  if rank == 2 then return nn_conv.conv2d(x, w, { strides = strides, padding = padding, dilations = dilations }) end
  if rank == 3 then return nn_conv_nd.conv3d(x, w, { strides = strides, padding = padding, dilations = dilations }) end
  return nn_conv.conv1d(x, w, { stride = strides[1], padding = padding, dilations = dilations[1] })
end

-- Keras's DropoutRNNCell: a mask for the input step and one for the state,
-- drawn once per call over a sequence, only while training (one mask for
-- all four gates, as Keras's ConvLSTMCell). x: the sequence [B, T, ...].
function ConvLSTMCell:dropout_masks(x, h, training)
  if not training then return nil end
  local function active(rate) return rate > 0 and rate < 1 end
  local d, rd = active(self.dropout), active(self.recurrent_dropout)
  if not (d or rd) then return nil end
  local function draw(like, rate) return nn.dropout(create.ones_like(like), rate, { seed = self.seed }) end
  return { input = d and draw(shape_ops.gather(x, 0, { axis = 1 }), self.dropout) or nil,
           recurrent = rd and draw(h, self.recurrent_dropout) or nil }
end

-- The input convolution of every step at once (+ the bias): [B, T, spatial'..., 4F].
function ConvLSTMCell:input_projection(x, masks)
  local rank = self.rank
  if masks and masks.input then x = x * shape_ops.expand_dims(masks.input, 1) end
  local step = { -1 }
  for i = 3, rank + 3 do step[#step + 1] = dims.dim(x, i - 1) end
  local z = conv(rank, shape_ops.reshape(x, step), self.kernel:read_value(), self.strides, self.padding:upper(),
    self.dilation_rate)
  if self.bias then z = z + self.bias end
  local out = { -1, dims.dim(x, 1) }
  for i = 1, rank + 1 do out[#out + 1] = self.output_size[i] end
  out[#out] = 4 * self.filters
  return shape_ops.reshape(z, out)
end

-- One step on the input's convolution: the state's ("same", stride 1), the gates, the new states.
function ConvLSTMCell:step(xz, states, rec_mask)
  local rank = self.rank
  local h = states[1]
  if rec_mask then h = h * rec_mask end
  local ones = {}
  for i = 1, rank do ones[i] = 1 end
  local z = xz + conv(rank, h, self.recurrent_kernel:read_value(), ones, "SAME", ones)
  local g = shape_ops.split(z, 4, { axis = -1 })
  local ra, act = self.recurrent_activation, self.activation
  local i, f, o = ra(g[1]), ra(g[2]), ra(g[4])
  local c = f * states[2] + i * act(g[3])
  local hn = o * act(c)
  return hn, { hn, c }
end

function ConvLSTMCell:get_config()
  local c = base.common_config(self, Layer.get_config(self))
  c.rank, c.filters = self.rank, self.filters
  c.recurrent_activation = activations.serialize(self.recurrent_activation)
  c.kernel_initializer = initializers.serialize(self.kernel_initializer)
  c.recurrent_initializer = initializers.serialize(self.recurrent_initializer)
  c.unit_forget_bias = self.unit_forget_bias
  c.kernel_regularizer = regularizers.serialize(self.kernel_regularizer)
  c.recurrent_regularizer = regularizers.serialize(self.recurrent_regularizer)
  c.kernel_constraint = constraints.serialize(self.kernel_constraint)
  c.recurrent_constraint = constraints.serialize(self.recurrent_constraint)
  c.dropout, c.recurrent_dropout, c.seed = self.dropout, self.recurrent_dropout, self.seed
  return c
end

-- ConvLSTM1D/2D/3D{filters, kernel_size, strides=1, padding="valid",
-- data_format="channels_last", dilation_rate=1, activation="tanh",
-- recurrent_activation="sigmoid", use_bias=true, kernel_initializer=
-- "glorot_uniform", recurrent_initializer="orthogonal", bias_initializer=
-- "zeros", unit_forget_bias=true, *_regularizer, *_constraint, dropout=0,
-- recurrent_dropout=0, seed, return_sequences=false, return_state=false,
-- go_backwards=false, stateful=false}; masks [B, T] skip steps, as the RNNs.
local function conv_lstm_class(rank)
  local name = "ConvLSTM" .. rank .. "D"
  local args = {}
  for _, k in ipairs(CELL_ARGS) do args[#args + 1] = k end
  table.insert(args, 17, "activity_regularizer") -- (Keras's place: after bias_regularizer)
  for _, k in ipairs(RNN_ARGS) do args[#args + 1] = k end
  args.keywords = { "unroll", "zero_output_for_mask" }
  local cls = rnn.RNN:extend(name)
  function cls:init(...)
    local o = self:_kwargs(args, ...)
    local cell_opts = { rank = rank, name = "conv_lstm_cell", dtype = rawget(self, "dtype"),
                        trainable = rawget(self, "_trainable") }
    for _, k in ipairs(CELL_ARGS) do cell_opts[k] = o[k] end
    self.cell = ConvLSTMCell(cell_opts)
    local r = {}
    for _, k in ipairs(RNN_ARGS) do r[k] = o[k] end
    r.unroll, r.zero_output_for_mask = o.unroll, o.zero_output_for_mask
    self:_init_rnn(r)
    self.filters = self.cell.filters
    self.input_spec = { ndim = rank + 3 }
  end
  function cls:get_config()
    local c = Layer.get_config(self)
    for _, k in ipairs { "return_sequences", "return_state", "go_backwards", "stateful", "unroll",
      "zero_output_for_mask" } do
      c[k] = self[k]
    end
    for k, v in pairs(self.cell:get_config()) do
      if k ~= "name" and k ~= "trainable" and k ~= "dtype" and k ~= "rank" then c[k] = v end
    end
    return c
  end
  cls.from_config = Layer.from_config
  M[name] = cls
end
conv_lstm_class(1)
conv_lstm_class(2)
conv_lstm_class(3)

return M
