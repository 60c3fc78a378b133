-- stdlib/tide/debugging/gradient_health.lua — gradient health: each layer's
-- gradient norm, logged to TensorBoard, and a warning naming the layer when
-- gradients vanish or explode across layers, with the usual remedies.
local binding = require "tide.binding"
local convert = require "tide.convert"
local reduce = require "tide.ops.reduce"
local math_ops = require "tide.ops.math"
local summary = require "tide.summary"

local fmt = string.format
local M = {}

-- The rule (each threshold an option of gradient_health and GradientHealth):
--   exploding: a layer's norm is not finite or above max_norm, or the first
--              layer's norm is more than explode_ratio times the last's;
--   vanishing: the first layer's norm is less than vanish_ratio times the
--              last's, or a layer's norm is below min_norm while the last
--              layer's is not (the loss still moves the output layer).
-- "First" and "last" are the first and last layers holding gradients, in
-- the model's order (input to output): backpropagation runs from the last
-- to the first, so a ratio far from 1 means the signal shrank or grew
-- multiplicatively through the layers between.
M.DEFAULTS = { vanish_ratio = 1e-3, explode_ratio = 1e3, min_norm = 1e-7, max_norm = 1e3 }

M.VANISH_REMEDIES = "usual remedies: ReLU-family activations (relu, gelu, leaky_relu) instead of sigmoid/tanh in " ..
  "hidden layers; He (he_normal) or Glorot initializers; BatchNormalization or LayerNormalization between " ..
  "layers; residual (skip) connections; fewer layers"
M.EXPLODE_REMEDIES = "usual remedies: gradient clipping (optimizer clipnorm=, clipvalue= or global_clipnorm=); " ..
  "a lower learning rate; Glorot or He initializers instead of large random weights; BatchNormalization or " ..
  "LayerNormalization; saturating or normalized activations"

local function variable_name(v)
  local ok, n = pcall(function() return v.name end)
  return ok and type(n) == "string" and n or nil
end

-- Groups of variables by layer, in order: { {name=, vars={...}}, ... }.
local function layer_groups(vars_or_model)
  if type(vars_or_model) ~= "table" then
    binding.error("gradient_health: expects the variables (a list) or the model the gradients are of")
  end
  local layers = (function()
    local ok, l = pcall(function() return vars_or_model.layers end)
    return ok and type(l) == "table" and l or nil
  end)()
  if layers then
    local groups = {}
    for _, layer in ipairs(layers) do
      local w = layer.trainable_weights
      if #w > 0 then groups[#groups + 1] = { name = layer.name, vars = w } end
    end
    return groups, vars_or_model.trainable_weights
  end
  -- a list of variables: grouped by the name before the last "/" ("dense_1/kernel")
  local groups, by_name = {}, {}
  for i, v in ipairs(vars_or_model) do
    local n = variable_name(v)
    local layer = n and n:match("^(.*)/[^/]*$") or n or ("variable " .. i)
    local g = by_name[layer]
    if not g then
      g = { name = layer, vars = {} }
      by_name[layer] = g
      groups[#groups + 1] = g
    end
    g.vars[#g.vars + 1] = v
  end
  return groups, vars_or_model
end

-- gradient_health(grads, vars_or_model, {step=, writer=, prefix="gradient_norm",
-- warn=true, vanish_ratio=, explode_ratio=, min_norm=, max_norm=}):
-- grads as tape:gradient gives them for vars_or_model's trainable weights
-- (a model) or for the list of variables given. Writes each layer's
-- gradient norm as the scalar <prefix>/<layer> (to `writer`, or the
-- default writer when one is set; writer=false: nowhere), warns on stderr when the rule above
-- fires (warn=false: only report), and returns
-- { layers = {{name=, norm=}, ...}, status = "ok" | "vanishing" | "exploding", message = ... }.
local OPTIONS = { step = true, writer = true, prefix = true, warn = true, vanish_ratio = true, explode_ratio = true,
  min_norm = true, max_norm = true }

-- The gradient norms of fit's own steps, for GradientHealth without a probe
-- batch: the traced train step calls record(grads, optimizer) after taking
-- its gradients, which writes each variable's gradient norm (unscaled when
-- the optimizer scales the loss; -1 for a variable without a gradient) into
-- a float32 Variable; `grads()` reads them back as scalar tensors that
-- gradient_health combines per layer as it would the gradients themselves
-- (a layer's norm is the root of its variables' squared norms either way).
-- Cost while it is on: one reduction per variable per step, in the step.
local StepNorms = {}
StepNorms.__index = StepNorms

function M.step_norms(vars)
  local Variable = require("tide.variable").Variable
  local norms = {}
  for i = 1, #vars do norms[i] = Variable(-1, { dtype = "float32", name = "gradient_norm", trainable = false }) end
  return setmetatable({ vars = vars, norms = norms }, StepNorms)
end

function StepNorms:record(grads, optimizer)
  local scale = optimizer and rawget(optimizer, "dynamic_scale")
  for i, v in ipairs(self.norms) do
    local g = grads[i]
    if g == nil then v:assign(-1)
    else
      local n = math_ops.sqrt(reduce.reduce_sum(math_ops.square(g:cast("float32"))))
      if scale then n = n / scale end
      v:assign(n)
    end
  end
end

-- The last recorded step's norms, one scalar tensor (or nil) per variable.
function StepNorms:grads()
  local out = { n = #self.norms }
  for i, v in ipairs(self.norms) do
    local n = v:read_value()
    if n:item() >= 0 then out[i] = n end
  end
  return out
end

function M.gradient_health(grads, vars_or_model, given)
  given = given or {}
  if type(grads) ~= "table" then binding.error("gradient_health: grads must be a list of tensors (tape:gradient's result)") end
  if type(given) ~= "table" then binding.error("gradient_health: options must be a table") end
  local opts = {}
  for k, v in pairs(given) do
    if not OPTIONS[k] then binding.error(fmt("gradient_health: unknown option '%s'", tostring(k))) end
    opts[k] = v
  end
  for k, v in pairs(M.DEFAULTS) do
    if opts[k] ~= nil and (type(opts[k]) ~= "number" or opts[k] <= 0) then
      binding.error(fmt("gradient_health: %s must be a positive number, got %s", k, tostring(opts[k])))
    end
    opts[k] = opts[k] or v
  end
  local groups, vars = layer_groups(vars_or_model)
  local ngrads = grads.n or #grads -- n: a list with holes (variables without a gradient)
  if ngrads ~= #vars then
    binding.error(fmt("gradient_health: %d gradients for %d variables (give the gradients of the model's " ..
      "trainable_weights, in order)", ngrads, #vars))
  end
  local grad_of = {}
  for i, v in ipairs(vars) do grad_of[v] = grads[i] end
  local layers = {}
  for _, g in ipairs(groups) do
    local sq, any = 0, false
    for _, v in ipairs(g.vars) do
      local gr = grad_of[v]
      if gr ~= nil then
        gr = convert.arg(gr, "gradient_health")
        sq = sq + reduce.reduce_sum(math_ops.square(gr:cast("float64"))):item()
        any = true
      end
    end
    if any then layers[#layers + 1] = { name = g.name, norm = math.sqrt(sq) } end
  end
  -- TensorBoard
  local prefix = opts.prefix or "gradient_norm"
  local function write()
    for _, l in ipairs(layers) do summary.scalar(prefix .. "/" .. l.name, l.norm, { step = opts.step }) end
  end
  if opts.writer then opts.writer:as_default(function() summary.record_if(true, write) end)
  elseif opts.writer == nil and summary.get_default_writer() then write() end -- writer=false: none
  -- the rule
  local report = { layers = layers, status = "ok" }
  local first, last = layers[1], layers[#layers]
  local function say(status, text, remedies)
    report.status = status
    report.message = "GradientHealth: " .. text .. "; " .. remedies
  end
  for _, l in ipairs(layers) do
    if l.norm ~= l.norm or l.norm == math.huge or l.norm > opts.max_norm then
      local finite = l.norm == l.norm and l.norm ~= math.huge
      local why = finite and fmt("above max_norm %.3g", opts.max_norm) or "not finite"
      say("exploding", fmt("gradients explode: layer '%s' has gradient norm %.3g (%s)", l.name, l.norm, why),
        M.EXPLODE_REMEDIES)
      break
    end
  end
  if report.status == "ok" and first and last and first ~= last then
    local ratio = first.norm / last.norm
    if last.norm > 0 and ratio > opts.explode_ratio then
      say("exploding", fmt("gradients explode toward the input: layer '%s' has gradient norm %.3g, %.3g times " ..
        "that of the last layer '%s' (%.3g)", first.name, first.norm, ratio, last.name, last.norm), M.EXPLODE_REMEDIES)
    elseif last.norm > 0 and ratio < opts.vanish_ratio then
      say("vanishing", fmt("gradients vanish toward the input: layer '%s' has gradient norm %.3g, %.3g times " ..
        "that of the last layer '%s' (%.3g)", first.name, first.norm, ratio, last.name, last.norm), M.VANISH_REMEDIES)
    end
  end
  if report.status == "ok" and last and last.norm >= opts.min_norm then
    for _, l in ipairs(layers) do
      if l.norm < opts.min_norm then
        say("vanishing", fmt("gradients vanish: layer '%s' has gradient norm %.3g (below min_norm %.3g) while " ..
          "the last layer '%s' has %.3g", l.name, l.norm, opts.min_norm, last.name, last.norm), M.VANISH_REMEDIES)
        break
      end
    end
  end
  if report.message and opts.warn ~= false then io.stderr:write(report.message, "\n") end
  return report
end

return M
