-- stdlib/tide/saving/keras_weights.lua — Keras 3's weights layout (.weights.h5,
-- and model.weights.h5 inside a .keras file) for tide models, both ways.
--
-- Keras 3 (saving_lib._save_state) walks a model as an object tree and files
-- each object's own variables as datasets <path>/vars/0, 1, ... (a group
-- with attribute name = the object's name): the model itself at "vars",
-- a Sequential's or functional model's layers in the container "layers",
-- each under its class name in snake case made unique in that container
-- ("layers/dense", "layers/dense_1", ...; layer names are not used, so a
-- file loads into any model of the same structure), a layer's sub-layers
-- under the attribute that holds them ("layers/lstm/cell"; attributes in
-- Python's string order, private ones last), and the
-- optimizer's variables at "optimizer/vars". This module walks a tide model
-- the same way (tide's layers keep Keras's attribute names and variable
-- order), then writes or checks-and-reads the file.
local binding = require "tide.binding"
local class = require "tide.class"
local h5 = require "tide.io.h5"
local layer_mod = require "tide.layers.layer"
local tracking = require "tide.layers.tracking"
local sequential = require "tide.models.sequential"
local core = require "tide.layers.core"
local legacy_weights = require "tide.saving.keras_legacy_weights"

local fmt = string.format
local M = {}

local is_layer = layer_mod.is_layer
local FLOAT = { float16 = true, bfloat16 = true, float32 = true, float64 = true }

local function who(m) return fmt("%s '%s'", getmetatable(m).__name, tostring(rawget(m, "name"))) end

-- Keras's order of a saveable's attributes (saving_lib._name_key): by name
-- as Python compares strings (bytes), private ones ("_x") after the rest.
local function attr_key(name) return name:sub(1, 1) == "_" and "~" .. name or name end
local function attr_less(a, b) return attr_key(a) < attr_key(b) end

-- Where Keras reaches a sub-layer through a public property first (so files
-- it under that name) while tide keeps only the private field.
local ALIASES = {
  MultiHeadAttention = { _query_dense = "query_dense", _key_dense = "key_dense", _value_dense = "value_dense",
    _output_dense = "output_dense" },
}

local function join(path, name) return path == "" and name or path .. "/" .. name end

-- The model kinds whose layers Keras files in the container "layers".
local function layered_model(obj)
  return class.is_instance(obj, sequential.Sequential) or (obj.is_functional and obj:is_functional())
end

-- A container's layers under Keras's names: class name in snake case,
-- then _1, _2, ... for the repeats.
local function container(list, path, visit)
  local used = {}
  for _, l in ipairs(list) do
    local name = layer_mod.snake_case(getmetatable(l).__name)
    if used[name] then
      used[name] = used[name] + 1
      name = fmt("%s_%d", name, used[name])
    else
      used[name] = 0
    end
    visit(l, join(path, name))
  end
end

-- The layers in a plain Lua table field (Keras's list and dict attributes).
local function table_layers(value)
  local out = {}
  tracking.walk_value(value, is_layer, function(obj) if is_layer(obj) then out[#out + 1] = obj end end, {})
  return out
end

-- entries(model): the objects holding variables, each
-- {path = "layers/dense/vars", name = <object name>, vars = {Variables}, owner = obj},
-- in Keras's walk order; each object once (a shared layer at its first path).
function M.entries(model)
  local out, seen = {}, {}
  local function visit(obj, path)
    if seen[obj] then return end
    seen[obj] = true
    local t = rawget(obj, "_tracking")
    local vars = t and tracking.owned(obj, t, is_layer) or {}
    out[#out + 1] = { path = join(path, "vars"), name = tostring(rawget(obj, "name")), vars = vars, owner = obj }
    if layered_model(obj) then
      local list = {}
      for _, l in ipairs(obj.layers) do
        -- Keras's Sequential lists no InputLayer; a functional model lists its inputs' layers
        if not (class.is_instance(obj, sequential.Sequential) and class.is_instance(l, core.InputLayer)) then
          list[#list + 1] = l
        end
      end
      container(list, join(path, "layers"), visit)
      return
    end
    if not t then return end
    local aliases = ALIASES[getmetatable(obj).__name] or {}
    local keys, field = {}, {}
    for _, k in ipairs(t.keys) do
      if type(k) == "string" then
        local name = aliases[k] or k
        keys[#keys + 1] = name
        field[name] = k
      end
    end
    table.sort(keys, attr_less)
    for _, name in ipairs(keys) do
      local v = rawget(obj, field[name])
      if is_layer(v) then
        visit(v, join(path, name))
      elseif type(v) == "table" and getmetatable(v) == nil then
        local list = table_layers(v)
        if #list > 0 then container(list, join(path, name), visit) end
      end
    end
  end
  visit(model, "")
  return out
end

-- The compiled model's optimizer with its slots built (as its first step
-- would build them, and as Keras's files hold them), or nil.
local function optimizer_of(model)
  if not rawget(model, "compiled") then return nil end
  local opt = rawget(model, "optimizer")
  if opt == nil or opt.build == nil then return nil end
  opt:build(model.trainable_weights)
  return opt
end

---------------------------------------------------------------------------
-- Writing
---------------------------------------------------------------------------

-- The file's bytes-in-memory writer for model (Keras's layout; the
-- optimizer's variables when the model is compiled and include_optimizer
-- is not false).
function M.writer(model, name, opts)
  if not rawget(model, "built") or #model.weights == 0 then
    binding.error(fmt("%s: save_weights: the model has no weights yet (build it or call it once)", who(model)))
  end
  local w = h5.create(name)
  for _, e in ipairs(M.entries(model)) do
    w:group(e.path)
    w:attr(e.path, "name", e.name)
    for i, v in ipairs(e.vars) do w:write(fmt("%s/%d", e.path, i - 1), v) end
  end
  local opt = not (opts and opts.include_optimizer == false) and optimizer_of(model) or nil
  if opt then
    w:group("optimizer/vars")
    w:attr("optimizer/vars", "name", tostring(opt.name))
    for i, v in ipairs(opt.variables) do w:write(fmt("optimizer/vars/%d", i - 1), v) end
  end
  return w
end

-- save(model, path): path (a .weights.h5 file) written atomically.
function M.save(model, path)
  M.writer(model, path):save(path)
end

---------------------------------------------------------------------------
-- Reading
---------------------------------------------------------------------------

local function shape_text(s) return "(" .. table.concat(s, ", ") .. (#s == 1 and ",)" or ")") end

-- The datasets vars/0 .. vars/n-1 under group path in file f (n counted
-- from the tree), or nil when f has no such group.
local function stored(f, path)
  if not f:get(path) then return nil end
  local list = {}
  while true do
    local node = f:get(fmt("%s/%d", path, #list))
    if not node then break end
    list[#list + 1] = node
  end
  return list
end

-- Check one entry's variables against the file's; problems go to errs.
local function check_vars(f, file_name, e, errs, what)
  local got = stored(f, e.path)
  if got == nil then
    if #e.vars > 0 then
      errs[#errs + 1] = fmt("%s (%s) has %d variables, but '%s' has no '%s'", what, e.path, #e.vars, file_name, e.path)
    end
    return nil
  end
  if #got ~= #e.vars then
    errs[#errs + 1] = fmt("%s (%s) has %d variables, but '%s' holds %d there", what, e.path, #e.vars, file_name, #got)
    return nil
  end
  local ok = true
  for i, v in ipairs(e.vars) do
    local node = got[i]
    if node.kind ~= "dataset" or node.dtype == nil then
      errs[#errs + 1] = fmt("%s: '%s' in '%s' is not a readable dataset%s", what, node.path, file_name,
        node.why and (" (" .. node.why .. ")") or "")
      ok = false
    else
      local vs = v.shape:as_list()
      local same = #vs == #node.shape
      for k = 1, #vs do same = same and vs[k] == node.shape[k] end
      if not same then
        errs[#errs + 1] = fmt("%s: variable %d ('%s') has shape %s, but '%s' in '%s' has %s", what, i - 1, v.name,
          shape_text(vs), node.path, file_name, shape_text(node.shape))
        ok = false
      elseif node.dtype ~= v.dtype and not (FLOAT[node.dtype] and FLOAT[v.dtype]) then
        errs[#errs + 1] = fmt("%s: variable %d ('%s') is %s, but '%s' in '%s' is %s", what, i - 1, v.name, v.dtype,
          node.path, file_name, node.dtype)
        ok = false
      end
    end
  end
  return ok and got or nil
end

-- The groups in f that hold datasets no entry reads (a file for a bigger
-- model): their paths.
local function unread(f, entries)
  local claimed = {}
  for _, e in ipairs(entries) do claimed[e.path] = true end
  local out, seen = {}, {}
  for _, node in ipairs(f:tree()) do
    if node.kind == "dataset" then
      local group = node.path:match("^(.*)/[^/]*$") or ""
      if not claimed[group] and not seen[group] then
        seen[group] = true
        out[#out + 1] = group
      end
    end
  end
  return out
end

-- load_file(model, f, file_name): the weights (and, for a compiled model,
-- the optimizer's variables) from the open h5 file f. Everything is checked
-- before any variable is set: one error lists every mismatch.
function M.load_file(model, f, file_name)
  if not rawget(model, "built") then
    binding.error(fmt("%s: load_weights: the model is not built; build it or call it once first", who(model)))
  end
  if not (f:get("vars") or f:get("layers") or f:get("optimizer")) and legacy_weights.root(f) then
    return legacy_weights.load_file(model, f, file_name, who(model))
  end
  if not (f:get("vars") or f:get("layers") or f:get("optimizer")) then
    local legacy = f:get("model_weights") and "a legacy TF-Keras model file (model.save(\"x.h5\"))" or
      "not Keras 3's weights layout (a legacy TF-Keras weights file, or another HDF5 file)"
    binding.error(fmt("%s: load_weights: '%s' is %s; tide reads Keras 3's .weights.h5 layout (layers/<name>/vars/<i>), " ..
      "and the legacy layout when its layer_names are fixed-length strings (the files keras.applications downloads; " ..
      "Keras 3's legacy writer makes them variable-length, which tide's HDF5 reader does not read): " ..
      "save the weights again with Keras 3's model.save_weights(\"x.weights.h5\")", who(model), file_name, legacy))
  end
  local entries = M.entries(model)
  local errs, plan = {}, {}
  for _, e in ipairs(entries) do
    local got = check_vars(f, file_name, e, errs, fmt("%s '%s'", getmetatable(e.owner).__name, e.name))
    if got then plan[#plan + 1] = { e.vars, got } end
  end
  local extra = {}
  for _, g in ipairs(unread(f, entries)) do
    if g ~= "optimizer/vars" then extra[#extra + 1] = "'" .. g .. "'" end
  end
  if #extra > 0 then
    errs[#errs + 1] = fmt("'%s' holds weights the model has no place for: %s", file_name, table.concat(extra, ", "))
  end
  -- the optimizer's: loaded when the model is compiled and the counts agree
  -- (Keras skips them with a warning otherwise; so does tide)
  local opt = f:get("optimizer/vars") and optimizer_of(model) or nil
  if opt then
    local e = { path = "optimizer/vars", vars = opt.variables }
    local got = stored(f, e.path)
    if #got ~= #e.vars then
      io.stderr:write(fmt("tide: warning: %s: load_weights: the optimizer in '%s' has %d variables, but the model's " ..
        "%s has %d; its state is not loaded\n", who(model), file_name, #got, tostring(opt.name), #e.vars))
    else
      local ok = check_vars(f, file_name, e, errs, fmt("optimizer '%s'", tostring(opt.name)))
      if ok then plan[#plan + 1] = { e.vars, ok } end
    end
  end
  if #errs > 0 then
    binding.error(fmt("%s: load_weights: '%s' does not fit the model (Keras 3's weights layout):\n  %s", who(model),
      file_name, table.concat(errs, "\n  ")))
  end
  local values = {}
  for _, p in ipairs(plan) do
    for i, node in ipairs(p[2]) do
      local t = f:read(node.path)
      if t.dtype ~= p[1][i].dtype then t = t:cast(p[1][i].dtype) end
      values[#values + 1] = { p[1][i], t }
    end
  end
  for _, vt in ipairs(values) do vt[1]:assign(vt[2]) end
end

-- load(model, path): from a .weights.h5 file.
function M.load(model, path)
  local f = h5.open(path)
  local ok, err = pcall(M.load_file, model, f, path)
  f:close()
  if not ok then error(err, 0) end
end

return M
