-- stdlib/tide/layers/attention/einsum_dense.lua — Keras 3's EinsumDense: tide.einsum(equation,
-- inputs, kernel) + bias, with the kernel and bias shapes read from the equation (Keras's
-- _analyze_einsum_string), and LoRA (lora_rank) as Keras's.
local binding = require "tide.binding"
local class = require "tide.class"
local tensor_shape = require "tide.tensor_shape"
local initializers = require "tide.initializers"
local random_initializers = require "tide.initializers.random"
local regularizers = require "tide.regularizers"
local constraints = require "tide.constraints"
local activations = require "tide.activations"
local layer = require "tide.layers.layer"
local linalg = require "tide.ops.linalg"
local einsum = require("tide.ops.einsum").einsum

local Layer, who = layer.Layer, layer.who
local None = tensor_shape.None

local M = {}

local function fail(self, ...) binding.error(who(self) .. ": " .. string.format(...)) end

local function dim_text(d) return d == None and "None" or tostring(d) end

-- Keras's _analyze_split_string: (kernel shape, bias shape or nil, the full
-- output shape, the kernel's input axes, its output axes) for an input of
-- shape input_shape (a list, None where unknown) and the partial
-- output_shape; left_elided when '...' leads the input and output terms.
local function analyze_split(self, input_spec, weight_spec, output_spec, bias_axes, input_shape, output_shape,
                             left_elided)
  local elided = #input_shape - #input_spec
  local out = { input_shape[1] }
  for _, d in ipairs(output_shape) do out[#out + 1] = d end
  if elided > 0 and left_elided then
    for i = 2, elided do table.insert(out, 2, input_shape[i]) end
  elseif elided > 0 then
    for i = #input_shape - elided + 1, #input_shape do out[#out + 1] = input_shape[i] end
  end
  local input_pos, output_pos = {}, {}
  for i = 1, #input_spec do
    local c = input_spec:sub(i, i)
    input_pos[c] = left_elided and (i + elided) or i
  end
  for i = 1, #output_spec do
    local c = output_spec:sub(i, i)
    output_pos[c] = left_elided and (i + elided) or i
  end
  for i = 1, #input_spec do
    local c = input_spec:sub(i, i)
    local have = input_shape[input_pos[c]]
    if output_pos[c] then
      local want = out[output_pos[c]]
      if want ~= None and want ~= nil and want ~= have then
        fail(self, "input shape and output shape do not match at shared dimension '%s': the input's is %s and the " ..
          "output's is %s", c, dim_text(have), dim_text(want))
      end
    end
  end
  for i = 1, #output_spec do
    local c = output_spec:sub(i, i)
    if not input_spec:find(c, 1, true) and not weight_spec:find(c, 1, true) then
      fail(self, "dimension '%s' was specified in the output '%s' but has no corresponding dim in the input spec " ..
        "'%s' or the weight spec '%s'", c, output_spec, input_spec, weight_spec)
    end
  end
  local kernel, input_axes, output_axes = {}, {}, {}
  for i = 1, #weight_spec do
    local c = weight_spec:sub(i, i)
    if output_pos[c] then
      kernel[i] = out[output_pos[c]]
      output_axes[#output_axes + 1] = i
    elseif input_pos[c] then
      kernel[i] = input_shape[input_pos[c]]
      input_axes[#input_axes + 1] = i
    else
      fail(self, "weight dimension '%s' did not have a match in either the input spec '%s' or the output spec " ..
        "'%s'; for this layer, the weight must be fully specified", c, input_spec, output_spec)
    end
    if type(kernel[i]) ~= "number" then
      fail(self, "the kernel's dimension '%s' must be known: give it in output_shape or the input's shape (got %s)",
        c, dim_text(kernel[i]))
    end
  end
  local bias = nil
  if bias_axes ~= nil then
    local first = nil
    for i = 1, #bias_axes do
      local c = bias_axes:sub(i, i)
      local at = output_spec:find(c, 1, true)
      if not at then
        fail(self, "bias dimension '%s' was requested, but is not part of the output spec '%s'", c, output_spec)
      end
      first = first and math.min(first, at) or at
    end
    local offset = left_elided and elided or 0
    bias = {}
    for i = first, #output_spec do
      local c = output_spec:sub(i, i)
      local d = bias_axes:find(c, 1, true) and out[i + offset] or 1
      if type(d) ~= "number" then
        fail(self, "the bias's dimension '%s' must be known: give it in output_shape", c)
      end
      bias[#bias + 1] = d
    end
    if not left_elided then for _ = 1, elided do bias[#bias + 1] = 1 end end
  end
  return kernel, bias, out, input_axes, output_axes
end

-- Keras's _analyze_einsum_string: the three equation forms it accepts.
local function analyze(self, input_shape)
  local eq = self.equation:gsub("%.%.%.", "0")
  local i, w, o = eq:match("^(%a+),(%a+)%->(%a+)$")
  if i then return analyze_split(self, i, w, o, self.bias_axes, input_shape, self.partial_output_shape, false) end
  i, w, o = eq:match("^0(%a+),(%a+)%->0(%a+)$")
  if i then return analyze_split(self, i, w, o, self.bias_axes, input_shape, self.partial_output_shape, true) end
  i, w, o = eq:match("^(%a%a+)0,(%a+)%->(%a+)0$")
  if i then return analyze_split(self, i, w, o, self.bias_axes, input_shape, self.partial_output_shape, false) end
  fail(self, "invalid einsum equation '%s'; equations must be in the form [X],[Y]->[Z], ...[X],[Y]->...[Z], or " ..
    "[X]...,[Y]->[Z]...", self.equation)
end

-- Keras's EinsumDense gives a variance-scaling initializer the kernel's
-- input and output axes, so its fans are theirs (not a convolution's):
-- values drawn for a [fan_in, fan_out] matrix, reshaped (they are i.i.d.).
local function kernel_initializer(init, shape, input_axes, output_axes)
  if not class.is_instance(init, random_initializers.VarianceScaling) then return init end
  local fan_in, fan_out = 1, 1
  for _, a in ipairs(input_axes) do fan_in = fan_in * shape[a] end
  for _, a in ipairs(output_axes) do fan_out = fan_out * shape[a] end
  return function(dims, dt) return init({ fan_in, fan_out }, dt):reshape(dims) end
end

-- EinsumDense{equation, output_shape, activation=nil, bias_axes=nil,
-- kernel_initializer="glorot_uniform", bias_initializer="zeros",
-- kernel_regularizer=, bias_regularizer=, kernel_constraint=,
-- bias_constraint=, lora_rank=nil, lora_alpha=lora_rank}: einsum(equation,
-- inputs, kernel) (+ bias over bias_axes, then the activation).
-- output_shape: the output's dims without the batch dim and those '...'
-- covers (a number or a list; tide.None where unknown).
local EinsumDense = Layer:extend("EinsumDense")
M.EinsumDense = EinsumDense
function EinsumDense:init(...)
  local o = self:_kwargs({ "equation", "output_shape", "activation", "bias_axes", "kernel_initializer",
    "bias_initializer", "kernel_regularizer", "bias_regularizer", "kernel_constraint", "bias_constraint", "lora_rank",
    "lora_alpha", "gptq_unpacked_column_size", "quantization_config" }, ...)
  local name = getmetatable(self).__name
  if type(o.equation) ~= "string" then
    binding.error(string.format("%s: equation is required, a string such as \"ab,bc->ac\", got %s", name,
      type(o.equation)))
  end
  self.equation = o.equation
  local shape = o.output_shape
  if type(shape) == "number" then shape = { shape } end
  if type(shape) ~= "table" then
    binding.error(string.format("%s: output_shape is required, a number or a list of dims (tide.None where " ..
      "unknown), got %s", name, type(shape)))
  end
  local partial = {}
  for i = 1, table.maxn(shape) do
    local d = shape[i]
    if d == nil or d == "None" then d = None end
    if d ~= None and (type(d) ~= "number" or d < 0 or d ~= math.floor(d)) then
      binding.error(string.format("%s: output_shape must hold non-negative integers or tide.None, got %s at %d",
        name, tostring(d), i - 1))
    end
    partial[i] = d
  end
  self.partial_output_shape = partial
  if o.bias_axes ~= nil and type(o.bias_axes) ~= "string" then
    binding.error(string.format("%s: bias_axes must be a string of output labels, got %s", name, type(o.bias_axes)))
  end
  self.bias_axes = o.bias_axes
  self.activation = activations.get(o.activation, name .. ": activation")
  self.kernel_initializer = initializers.get(o.kernel_initializer or "glorot_uniform", name .. ": kernel_initializer")
  self.bias_initializer = initializers.get(o.bias_initializer or "zeros", name .. ": bias_initializer")
  self.kernel_regularizer = regularizers.get(o.kernel_regularizer, name .. ": kernel_regularizer")
  self.bias_regularizer = regularizers.get(o.bias_regularizer, name .. ": bias_regularizer")
  self.kernel_constraint = constraints.get(o.kernel_constraint, name .. ": kernel_constraint")
  self.bias_constraint = constraints.get(o.bias_constraint, name .. ": bias_constraint")
  if o.quantization_config ~= nil then
    binding.error(name .. ": quantization_config is not supported (tide has no quantized kernels)")
  end
  if o.lora_rank ~= nil and (type(o.lora_rank) ~= "number" or o.lora_rank <= 0 or o.lora_rank % 1 ~= 0) then
    binding.error(string.format("%s: lora_rank must be a positive integer, got %s", name, tostring(o.lora_rank)))
  end
  self.lora_rank = o.lora_rank
  self.lora_alpha = o.lora_alpha or o.lora_rank
  self.lora_enabled = false
end

function EinsumDense:build(input_shape)
  if type(input_shape) ~= "table" or (type(input_shape[1]) == "table" and input_shape[1] ~= None) then
    fail(self, "expects one input of known rank")
  end
  local kernel, bias, _, input_axes, output_axes = analyze(self, input_shape)
  self.input_spec = { ndim = #input_shape }
  self.kernel = self:add_weight { name = "kernel", shape = kernel,
    initializer = kernel_initializer(self.kernel_initializer, kernel, input_axes, output_axes),
    regularizer = self.kernel_regularizer, constraint = self.kernel_constraint }
  if bias then
    self.bias = self:add_weight { name = "bias", shape = bias, initializer = self.bias_initializer,
      regularizer = self.bias_regularizer, constraint = self.bias_constraint }
  end
  rawset(self, "built", true)
  if self.lora_rank then self:enable_lora(self.lora_rank, { lora_alpha = self.lora_alpha }) end
end

-- The output shape for an input shape (Keras's compute_output_shape).
function EinsumDense:compute_output_shape(input_shape)
  local _, _, out = analyze(self, input_shape)
  return out
end

-- enable_lora(rank, {lora_alpha = rank, a_initializer = "he_uniform",
-- b_initializer = "zeros"}) on a built layer, as Keras's: the kernel is
-- frozen and the call uses kernel + (lora_alpha / rank) * (a @ b), a
-- [kernel dims but the last..., rank], b [rank, the kernel's last dim].
function EinsumDense:enable_lora(rank, opts)
  opts = opts or {}
  if self.kernel_constraint then
    fail(self, "LoRA is incompatible with kernel constraints; remove kernel_constraint to enable it")
  end
  if not rawget(self, "built") then fail(self, "cannot enable LoRA on a layer that isn't built yet") end
  if self.lora_enabled then fail(self, "LoRA is already enabled; this can only be done once per layer") end
  if type(rank) ~= "number" or rank <= 0 or rank % 1 ~= 0 then
    fail(self, "the LoRA rank must be a positive integer, got %s", tostring(rank))
  end
  local shape = self.kernel.shape:as_list()
  local a_shape = {}
  for i = 1, #shape - 1 do a_shape[i] = shape[i] end
  a_shape[#a_shape + 1] = rank
  self.lora_kernel_a = self:add_weight { name = "lora_kernel_a", shape = a_shape,
    initializer = initializers.get(opts.a_initializer or "he_uniform"), dtype = "float32",
    regularizer = self.kernel_regularizer }
  self.lora_kernel_b = self:add_weight { name = "lora_kernel_b", shape = { rank, shape[#shape] },
    initializer = initializers.get(opts.b_initializer or "zeros"), dtype = "float32",
    regularizer = self.kernel_regularizer }
  self.kernel.trainable = false -- (still filed with the trainable weights, as Keras's: layer.weights keeps its order)
  self.lora_enabled = true
  self.lora_rank = rank
  self.lora_alpha = opts.lora_alpha or rank
end

-- The kernel the call uses: with LoRA, the frozen kernel plus the scaled
-- low-rank product (Keras's `kernel` property).
function EinsumDense:effective_kernel()
  if not self.lora_enabled then return self.kernel end
  local k = self.kernel:read_value()
  local delta = linalg.matmul(self.lora_kernel_a, self.lora_kernel_b) * (self.lora_alpha / self.lora_rank)
  if delta.dtype ~= k.dtype then delta = delta:cast(k.dtype) end
  return k + delta
end

function EinsumDense:call(x)
  local y = einsum(self.equation, x, self:effective_kernel())
  if self.bias then y = y + self.bias end
  return self.activation(y)
end

function EinsumDense:get_config()
  local c = Layer.get_config(self)
  local shape = {}
  for i, d in ipairs(self.partial_output_shape) do shape[i] = d end
  c.output_shape = shape
  c.equation = self.equation
  c.activation = activations.serialize(self.activation)
  c.bias_axes = self.bias_axes
  c.kernel_initializer = initializers.serialize(self.kernel_initializer)
  c.bias_initializer = initializers.serialize(self.bias_initializer)
  c.kernel_regularizer = regularizers.serialize(self.kernel_regularizer)
  c.bias_regularizer = regularizers.serialize(self.bias_regularizer)
  c.kernel_constraint = constraints.serialize(self.kernel_constraint)
  c.bias_constraint = constraints.serialize(self.bias_constraint)
  if self.lora_rank then c.lora_rank, c.lora_alpha = self.lora_rank, self.lora_alpha end
  return c
end

return M
