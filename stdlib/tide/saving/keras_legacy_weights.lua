-- stdlib/tide/saving/keras_legacy_weights.lua — TF-Keras's legacy HDF5 weights layout, read
-- (the files keras.applications downloads, model.save_weights("x.h5") of TF-Keras 2).
--
-- The layout (legacy_h5_format.save_weights_to_hdf5_group): the root (or the group
-- "model_weights" of a whole-model file) has the attribute layer_names; each layer's group
-- has weight_names, datasets at <layer>/<weight name> ("Conv1/Conv1/kernel:0"). Keras 3's
-- load_weights_from_hdf5_group matches by position: the file's layers that hold weights,
-- in order, against the model's layers that have weights, each layer's weights in the order
-- trainable then non-trainable. tide does the same, checking every count and shape first.
local binding = require "tide.binding"

local fmt = string.format
local M = {}

-- An attribute Keras may have split into name0, name1, ... when too big for one.
local function attr_list(node, name)
  local a = node.attrs or {}
  if a[name] ~= nil then return type(a[name]) == "table" and a[name] or { a[name] } end
  local out, i = {}, 0
  while a[name .. i] ~= nil do
    for _, v in ipairs(a[name .. i]) do out[#out + 1] = v end
    i = i + 1
  end
  return i > 0 and out or nil
end

-- The group holding the layers: the root, or model_weights in a whole-model file; nil when
-- f is not in the legacy layout.
function M.root(f)
  local root = f:get("")
  if root and attr_list(root, "layer_names") then return "" end
  local mw = f:get("model_weights")
  if mw and attr_list(mw, "layer_names") then return "model_weights" end
  return nil
end

local function shape_text(s) return "(" .. table.concat(s, ", ") .. (#s == 1 and ",)" or ")") end

-- The model's weights of a layer in the legacy order: trainable, then non-trainable.
local function legacy_weights(layer)
  local out = {}
  for _, v in ipairs(layer.trainable_weights) do out[#out + 1] = v end
  for _, v in ipairs(layer.non_trainable_weights) do out[#out + 1] = v end
  return out
end

-- load_file(model, f, file_name, who): every weight of the model from the open h5 file f.
function M.load_file(model, f, file_name, who)
  local base = M.root(f)
  local prefix = base == "" and "" or base .. "/"
  local file_layers = {}
  for _, name in ipairs(attr_list(f:get(base), "layer_names")) do
    local g = f:get(prefix .. name)
    local wn = g and attr_list(g, "weight_names") or {}
    if #wn > 0 then file_layers[#file_layers + 1] = { name = name, weights = wn } end
  end
  local model_layers = {}
  for _, l in ipairs(model.layers) do
    if #l.weights > 0 then model_layers[#model_layers + 1] = l end
  end
  if #file_layers ~= #model_layers then
    binding.error(fmt("%s: load_weights: '%s' (TF-Keras's legacy weights layout) holds weights for %d layers, but " ..
      "the model has %d layers with weights; the file is for another architecture (or include_top differs)", who,
      file_name, #file_layers, #model_layers))
  end
  local errs, plan = {}, {}
  for k, fl in ipairs(file_layers) do
    local layer = model_layers[k]
    local vars = legacy_weights(layer)
    if #vars ~= #fl.weights then
      errs[#errs + 1] = fmt("layer '%s' of the model has %d weights, but the file's layer '%s' has %d", layer.name,
        #vars, fl.name, #fl.weights)
    else
      for i, wname in ipairs(fl.weights) do
        local path = prefix .. fl.name .. "/" .. wname
        local node = f:get(path)
        local vs = vars[i].shape:as_list()
        if not node or node.kind ~= "dataset" or node.dtype == nil then
          errs[#errs + 1] = fmt("'%s' is not a readable dataset of '%s'", path, file_name)
        else
          local same = #vs == #node.shape
          for d = 1, #vs do same = same and vs[d] == node.shape[d] end
          if not same then
            errs[#errs + 1] = fmt("layer '%s' weight %d ('%s') has shape %s, but the file's '%s' has %s", layer.name,
              i - 1, vars[i].name, shape_text(vs), path, shape_text(node.shape))
          else
            plan[#plan + 1] = { vars[i], path }
          end
        end
      end
    end
  end
  if #errs > 0 then
    binding.error(fmt("%s: load_weights: '%s' does not fit the model (TF-Keras's legacy weights layout, matched by " ..
      "layer position):\n  %s", who, file_name, table.concat(errs, "\n  ")))
  end
  local values = {}
  for i, p in ipairs(plan) do
    local t = f:read(p[2])
    if t.dtype ~= p[1].dtype then t = t:cast(p[1].dtype) end
    values[i] = t
  end
  for i, p in ipairs(plan) do p[1]:assign(values[i]) end
end

return M
