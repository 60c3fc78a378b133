-- stdlib/tide/models/data.lua — the arrays fit/evaluate/predict take: x, y
-- and sample weights as tensors or structures of them, flattened to lists,
-- checked for a common sample count, split for validation (from the end,
-- as Keras) and cut into batches (shuffled by a permutation each pass).
local binding = require "tide.binding"
local convert = require "tide.convert"
local variable = require "tide.variable"
local shape_ops = require "tide.ops.shape"
local math_ops = require "tide.ops.math"
local reduce_ops = require "tide.ops.reduce"
local random = require "tide.random"
local nest = require "tide.nest"

local istensor = binding.istensor
local M = {}

-- True when a Lua table is the values of one tensor (numbers, nested).
local function is_value_table(x)
  local probe = x
  while type(probe) == "table" and getmetatable(probe) == nil do
    local _, v = next(probe)
    probe = v
  end
  return type(probe) == "number" or type(probe) == "boolean"
end

-- A Lua table of numbers is one tensor's values, not a structure.
local AS_TENSORS = { is_leaf = is_value_table }

-- flatten(x, what): { leaves = list of tensors, template = the structure
-- with leaf positions } for a tensor, a Lua table of numbers (one tensor)
-- or a list/table of tensors, walked in tide.nest's order (a model's
-- inputs are flattened in the same order).
function M.flatten(x, what)
  local leaves = {}
  for i, entry in ipairs(nest.flatten_with_path(x, AS_TENSORS)) do
    local v = entry[2]
    if istensor(v) then leaves[i] = v
    elseif variable.is_variable(v) then leaves[i] = v:read_value()
    elseif type(v) == "table" and getmetatable(v) == nil then leaves[i] = convert.tensor(v, nil, what)
    else
      binding.error(string.format("%s: expected a tensor, a Lua table of numbers, or a list/table of tensors, " ..
        "got %s", what, type(v)))
    end
  end
  local positions = {}
  for i = 1, #leaves do positions[i] = i end
  local template = nest.pack_sequence_as(x, positions, AS_TENSORS)
  for i, t in ipairs(leaves) do
    if t.ndim < 1 then
      binding.error(string.format("%s: expected tensors with a batch dimension, got a scalar", what))
    end
  end
  return { leaves = leaves, template = template }
end

-- The structure of the template with leaf i replaced by values[offset + i].
function M.rebuild(template, values, offset)
  return nest.map_structure(function(i) return values[offset + i] end, template)
end

-- The common number of samples of the given flat lists (named by what).
function M.sample_count(groups)
  local n, first
  for _, g in ipairs(groups) do
    if g.data then
      for _, t in ipairs(g.data.leaves) do
        local rows = t.shape[1]
        if n == nil then n, first = rows, g.what
        elseif rows ~= n then
          binding.error(string.format("fit: the data have different numbers of samples: %s has %d, but %s has %d " ..
            "(shape %s); every array needs the same first dimension", first, n, g.what, rows, tostring(t.shape)))
        end
      end
    end
  end
  return n or 0
end

-- Rows [a, b) of every leaf (views), or the rows at idx (gathered).
function M.take(data, a, b, idx)
  if data == nil then return nil end
  local out = {}
  for i, t in ipairs(data.leaves) do
    if idx then out[i] = shape_ops.gather(t, idx) else out[i] = t:slice { { a, b } } end
  end
  return { leaves = out, template = data.template }
end

-- Keras's validation_split: the last fraction of the samples (before any
-- shuffling) is held out.
function M.split(data, n, fraction)
  local at = math.floor(n * (1 - fraction))
  if at <= 0 or at >= n then
    binding.error(string.format("fit: validation_split=%g leaves no samples for %s (of %d); use a fraction that " ..
      "keeps at least one sample on each side", fraction, at <= 0 and "training" or "validation", n))
  end
  return M.take(data, 0, at), M.take(data, at, n), at
end

-- A permutation of n rows (int32), or nil when not shuffling.
function M.permutation(n, shuffle)
  if not shuffle then return nil end
  return random.permutation(n)
end

-- The batch [a, b) of a pass: views in order, or gathered by the permutation.
function M.batch(data, a, b, perm)
  if data == nil then return nil end
  if perm then return M.take(data, nil, nil, perm:slice { { a, b } }) end
  return M.take(data, a, b)
end

-- Keras's class_weight as sample weights: weight[class of each sample],
-- the class being y's index (int labels) or its argmax (one-hot rows).
function M.class_weights(class_weight, y, what)
  if type(class_weight) ~= "table" then
    binding.error(string.format("%s: class_weight must be a table {[class] = weight}, got %s", what,
      type(class_weight)))
  end
  if #y.leaves ~= 1 then
    binding.error(string.format("%s: class_weight needs a single target array; give sample_weight for several outputs",
      what))
  end
  local labels = y.leaves[1]
  if labels.ndim == 2 and labels.shape[2] > 1 then
    labels = reduce_ops.argmax(labels, { axis = -1 })
  elseif labels.ndim == 2 then
    labels = shape_ops.reshape(labels, { -1 })
  elseif labels.ndim ~= 1 then
    binding.error(string.format("%s: class_weight needs labels of shape (N,), (N, 1) or one-hot (N, C); got %s", what,
      tostring(labels.shape)))
  end
  labels = math_ops.cast(labels, "int32")
  local max_class = -1
  for k, v in pairs(class_weight) do
    if type(k) ~= "number" or k < 0 or k ~= math.floor(k) or type(v) ~= "number" then
      binding.error(string.format("%s: class_weight keys must be class indices (0, 1, ...) and values numbers, got " ..
        "[%s] = %s", what, tostring(k), tostring(v)))
    end
    if k > max_class then max_class = k end
  end
  local present = reduce_ops.reduce_max(labels):item()
  if present > max_class then
    binding.error(string.format("%s: class_weight has no weight for class %d (it covers 0..%d)", what, present,
      max_class))
  end
  local list = {}
  for c = 0, max_class do list[c + 1] = class_weight[c] or 1 end
  return shape_ops.gather(convert.tensor(list, "float32", what), labels)
end

return M
