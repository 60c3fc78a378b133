-- stdlib/tide/models/graph.lua — the graph of a functional model: Keras 3's
-- map_graph over KerasTensor nodes (topological order, depths, operations
-- ordered by depth then traversal), and running it on real tensors.
--
-- A node is the table a KerasTensor's `node` field holds: { layer, inputs
-- (a structure of KerasTensors, nil for an Input), opts, outputs }.
local binding = require "tide.binding"
local keras_tensor = require "tide.layers.keras_tensor"
local nest = require "tide.nest"

local M = {}

local is_kt, leaves = keras_tensor.is, keras_tensor.leaves

-- The values of `x` at the leaves of `template` (a KerasTensor structure),
-- in leaves' order (tide.nest's); `what` names x in errors. x may hold more
-- than template asks for.
function M.flatten_like(template, x, what, out)
  out = out or {}
  if is_kt(template) then
    if x == nil then binding.error(string.format("%s: an input is missing (expected one for '%s')", what,
      tostring(template.name))) end
    out[#out + 1] = x
    return out
  end
  if not nest.is_nested(x) then
    binding.error(string.format("%s: expected a structure of %d inputs (a table), got %s", what,
      #leaves(template), type(x)))
  end
  local keys, n = nest.keys(template)
  for i = 1, n do M.flatten_like(template[keys[i]], x[keys[i]], what, out) end
  return out
end

-- The structure `template` with each KerasTensor leaf replaced by get(kt).
local function map_structure(template, get)
  return nest.map_structure(function(v)
    if is_kt(v) then return get(v) end
    return v
  end, template)
end
M.map_structure = map_structure

-- Pair the KerasTensors of `template` with the values at the same places
-- of `result`: found(kt, value).
local function zip(template, result, found, layer)
  if is_kt(template) then return found(template, result) end
  if nest.is_nested(template) then
    if type(result) ~= "table" then
      binding.error(string.format("%s '%s' returned %s where the model expects a structure of outputs",
        getmetatable(layer).__name, layer.name, type(result)))
    end
    local keys, n = nest.keys(template)
    for i = 1, n do zip(template[keys[i]], result[keys[i]], found, layer) end
  end
end

local function parents(node)
  if node.inputs == nil then return {} end
  local out = {}
  for _, kt in ipairs(leaves(node.inputs)) do out[#out + 1] = kt end
  return out
end

-- Keras's map_graph(inputs, outputs) for lists of KerasTensors: returns
-- { nodes = topological order (inputs first), operations = the layers in
-- Keras's order (decreasing depth, then first traversal), node_index =
-- node -> its index among its layer's nodes in this graph }.
function M.map_graph(inputs, outputs)
  local input_set = {}
  for _, kt in ipairs(inputs) do input_set[kt] = true end
  local finished, in_progress, order, op_index, n_ops = {}, {}, {}, {}, 0
  local function visit(kt)
    local node = kt.node
    if node == nil or node.layer == nil then return end
    if finished[node] then return end
    if node.inputs ~= nil and input_set[kt] then finished[node] = true; return end
    if in_progress[node] then
      binding.error(string.format("Model: the tensor from layer '%s' is part of a cycle", node.layer.name))
    end
    if op_index[node.layer] == nil then n_ops = n_ops + 1; op_index[node.layer] = n_ops end
    in_progress[node] = true
    for _, p in ipairs(parents(node)) do visit(p) end
    finished[node] = true
    in_progress[node] = nil
    order[#order + 1] = node
  end
  for _, kt in ipairs(outputs) do visit(kt) end
  local in_graph = {}
  for _, node in ipairs(order) do in_graph[node] = true end
  local node_depth, op_depth = {}, {}
  for i = #order, 1, -1 do
    local node = order[i]
    local depth = node_depth[node] or 0
    depth = math.max(depth, op_depth[node.layer] or 0)
    op_depth[node.layer] = depth
    node_depth[node] = depth
    for _, p in ipairs(parents(node)) do
      local pn = p.node
      if in_graph[pn] then node_depth[pn] = math.max(depth + 1, node_depth[pn] or 0) end
    end
  end
  for _, kt in ipairs(inputs) do -- inputs connected to no output still belong to the model
    local node = kt.node
    if node and node.inputs == nil and op_depth[node.layer] == nil then
      op_depth[node.layer] = 0
      op_index[node.layer] = -1
      order[#order + 1] = node
      table.insert(order, 1, table.remove(order))
    end
  end
  local operations = {}
  for layer in pairs(op_depth) do operations[#operations + 1] = layer end
  table.sort(operations, function(a, b)
    if op_depth[a] ~= op_depth[b] then return op_depth[a] > op_depth[b] end
    return op_index[a] < op_index[b]
  end)
  -- every tensor a node needs is computable from the inputs
  local computable = {}
  for _, kt in ipairs(inputs) do computable[kt] = true end
  local node_index, counts = {}, {}
  for _, node in ipairs(order) do
    if node.inputs == nil then
      if not input_set[node.layer.output] then
        binding.error(string.format("Model: graph disconnected: the outputs need the Input '%s', which is not in " ..
          "inputs=; add it to the model's inputs", node.layer.name))
      end
    else
      for _, p in ipairs(parents(node)) do
        if not computable[p] then
          binding.error(string.format("Model: graph disconnected: layer '%s' needs the tensor %s, which cannot be " ..
            "computed from the model's inputs; pass the tide.Input it comes from in inputs=", node.layer.name,
            tostring(p)))
        end
      end
      for _, kt in ipairs(leaves(node.outputs)) do computable[kt] = true end
    end
    local c = counts[node.layer] or 0
    node_index[node] = c
    counts[node.layer] = c + 1
  end
  local names = {}
  for _, layer in ipairs(operations) do
    if names[layer.name] then
      binding.error(string.format("Model: the name \"%s\" is used by two layers; all layer names in a model must " ..
        "be unique", layer.name))
    end
    names[layer.name] = true
  end
  return { nodes = order, operations = operations, node_index = node_index }
end

-- Run the graph on flat input values (aligned with the inputs list), return
-- the outputs structure with real values.
function M.run(g, inputs, values_in, outputs_struct)
  local values = {}
  for i, kt in ipairs(inputs) do values[kt] = values_in[i] end
  -- one closure of each per run, not per node
  local function value_of(v)
    if is_kt(v) then return values[v] end
    return v
  end
  local function found(kt, v) values[kt] = v end
  for _, node in ipairs(g.nodes) do
    if node.inputs ~= nil then
      local args = nest.map_structure(value_of, node.inputs)
      local opts
      if node.opts and next(node.opts) ~= nil then
        opts = {}
        for k, v in pairs(node.opts) do opts[k] = v end
      end
      local result = node.layer(args, opts)
      zip(node.outputs, result, found, node.layer)
    end
  end
  return nest.map_structure(value_of, outputs_struct)
end

return M
