-- stdlib/tide/ops/sampled_losses.lua — tf.nn.nce_loss and sampled_softmax_loss (TF 2's, "div" partitions): the true
-- and sampled classes' logits (TF's _compute_sampled_logits) composed of gather and matmul, so they trace when the
-- samples come in as sampled_values, and their gradients flow to weights, biases and inputs.
local binding = require "tide.binding"
local convert = require "tide.convert"
local dtype = require "tide.dtype"
local args = require "tide.args"
local m = require "tide.ops.math"
local reduce = require "tide.ops.reduce"
local shape = require "tide.ops.shape"
local nn = require "tide.ops.nn"
local sampling = require "tide.ops.candidate_sampling"
local linalg = require "tide.ops.linalg"
local dynamic_shape = require "tide.ops.dynamic_shape"
local stop = require("tide.tape_recorder").stop_gradient

local M = {}
local fmt = string.format
local FLT_MAX = 3.4028234663852886e38
local NAMES = { "num_true", "sampled_values", "remove_accidental_hits", "seed", "name" }

-- weights [num_classes, dim] or a list of its row blocks ("div": concatenated in order).
local function weights_arg(op, w)
  if w == nil then binding.error(op .. ": weights is required") end
  if type(w) == "table" and not binding.istensor(w) and not w.read_value then
    if #w == 0 then binding.error(op .. ": weights is an empty list") end
    local parts = {}
    for i, p in ipairs(w) do parts[i] = convert.arg(p, op .. " (weights)") end
    return #parts == 1 and parts[1] or shape.concat(parts, 0)
  end
  return convert.arg(w, op .. " (weights)")
end

-- (logits [batch, num_true + num_sampled], labels: 1/num_true on the true columns) as TF's _compute_sampled_logits.
local function sampled_logits(op, weights, biases, labels, inputs, num_sampled, num_classes, o, remove_hits)
  local num_true = o.num_true == nil and 1 or args.int(op, "num_true", o.num_true)
  if num_true < 1 then binding.error(fmt("%s: num_true must be at least 1, got %d", op, num_true)) end
  local w = weights_arg(op, weights)
  local b = convert.arg(biases, op .. " (biases)")
  local x = convert.arg(inputs, op .. " (inputs)")
  if not dtype.is_float[x.dt] then binding.error(fmt("%s: inputs must be a float tensor, got %s", op, dtype.names[x.dt])) end
  if x.ndim ~= 2 then binding.error(fmt("%s: inputs must be 2-D [batch, dim], got shape %s", op, tostring(x.shape))) end
  if w.ndim ~= 2 then binding.error(fmt("%s: weights must be 2-D [num_classes, dim], got shape %s", op, tostring(w.shape))) end
  local lab = convert.arg(labels, op .. " (labels)")
  if not dtype.is_int[lab.dt] then binding.error(fmt("%s: labels must be an integer tensor, got %s", op, dtype.names[lab.dt])) end
  if lab.ndim ~= 2 or (lab.dims[1] >= 0 and tonumber(lab.dims[1]) ~= num_true) then
    binding.error(fmt("%s: labels must be [batch, num_true = %d], got shape %s", op, num_true, tostring(lab.shape)))
  end
  lab = m.cast(lab, "int64")
  local sv = o.sampled_values
  local sampled, true_exp, sampled_exp
  if sv == nil then
    sampled, true_exp, sampled_exp = sampling.log_uniform_candidate_sampler(lab, num_true, num_sampled, true,
      num_classes, o.seed)
  else
    if type(sv) ~= "table" or #sv ~= 3 then
      binding.error(op .. ": sampled_values must be {sampled_candidates, true_expected_count, sampled_expected_count}")
    end
    sampled = convert.arg(sv[1], op .. " (sampled_values[1])")
    true_exp = convert.arg(sv[2], op .. " (sampled_values[2])")
    sampled_exp = convert.arg(sv[3], op .. " (sampled_values[3])")
  end
  sampled = m.cast(stop(sampled), "int64")
  true_exp, sampled_exp = m.cast(stop(true_exp), dtype.names[x.dt]), m.cast(stop(sampled_exp), dtype.names[x.dt])
  local labels_flat = shape.reshape(lab, { -1 })
  local true_w = m.cast(shape.gather(w, labels_flat), dtype.names[x.dt])           -- [batch * num_true, dim]
  local sampled_w = m.cast(shape.gather(w, sampled), dtype.names[x.dt])            -- [num_sampled, dim]
  local true_b = m.cast(shape.gather(b, labels_flat), dtype.names[x.dt])
  local sampled_b = m.cast(shape.gather(b, sampled), dtype.names[x.dt])
  local dim = w.dims[1] >= 0 and tonumber(w.dims[1]) or dynamic_shape.shape(w)[1]
  local true_logits = reduce.reduce_sum(m.mul(shape.expand_dims(x, 1), shape.reshape(true_w, { -1, num_true, dim })), -1)
  true_logits = m.add(true_logits, shape.reshape(true_b, { -1, num_true }))       -- [batch, num_true]
  local s_logits = m.add(linalg.matmul(x, sampled_w, { transpose_b = true }), sampled_b)
  if remove_hits then -- TF's accidental hits as a mask: -FLT_MAX where a row's true class was sampled
    local hit = reduce.reduce_any(m.equal(shape.expand_dims(lab, 2), shape.reshape(sampled, { 1, 1, -1 })), 1)
    local dt = dtype.names[x.dt]
    s_logits = m.add(s_logits, m.where(hit, convert.tensor(-FLT_MAX, dt, op), convert.tensor(0, dt, op)))
  end
  true_logits = m.sub(true_logits, m.log(true_exp))
  s_logits = m.sub(s_logits, m.log(sampled_exp))
  local logits = shape.concat({ true_logits, s_logits }, 1)
  local out_labels = shape.concat({ m.div(m.add(m.mul(true_logits, 0), 1), num_true), m.mul(s_logits, 0) }, 1)
  return logits, stop(out_labels)
end

-- nce_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1, sampled_values=nil,
-- remove_accidental_hits=false) as tf.nn.nce_loss: [batch] sums of the logistic losses of the true classes
-- (target 1/num_true) and the sampled ones (target 0); without sampled_values the classes are drawn
-- log-uniformly, unique (eagerly).
function M.nce_loss(weights, biases, labels, inputs, num_sampled, num_classes, ...)
  local op = "nce_loss"
  local o = args.parse(op, NAMES, ...)
  local remove = args.bool(op, "remove_accidental_hits", o.remove_accidental_hits, false)
  local logits, targets = sampled_logits(op, weights, biases, labels, inputs, num_sampled, num_classes, o, remove)
  return reduce.reduce_sum(nn.sigmoid_cross_entropy_with_logits(targets, logits), 1)
end

-- sampled_softmax_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1, sampled_values=nil,
-- remove_accidental_hits=true, seed=nil) as tf.nn.sampled_softmax_loss: [batch] softmax cross-entropies over the
-- true and sampled classes.
function M.sampled_softmax_loss(weights, biases, labels, inputs, num_sampled, num_classes, ...)
  local op = "sampled_softmax_loss"
  local o = args.parse(op, NAMES, ...)
  local remove = args.bool(op, "remove_accidental_hits", o.remove_accidental_hits, true)
  local logits, targets = sampled_logits(op, weights, biases, labels, inputs, num_sampled, num_classes, o, remove)
  return nn.softmax_cross_entropy_with_logits(targets, logits)
end

return M
