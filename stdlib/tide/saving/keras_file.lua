-- stdlib/tide/saving/keras_file.lua — Keras 3's .keras files: a zip of
-- config.json (the model's config), metadata.json and model.weights.h5
-- (keras_weights.lua's layout), read and written over tide.io.zip.
local zip = require "tide.io.zip"
local h5 = require "tide.io.h5"
local keras_weights = require "tide.saving.keras_weights"

local fmt = string.format
local M = {}

local WEIGHTS = "model.weights.h5"

-- The archive's weights file, opened from its bytes.
local function weights_of(z, path)
  if not z:has(WEIGHTS) then
    require("tide.binding").error(fmt("'%s' is not a Keras 3 .keras file: it has no %s (entries: %s)", path, WEIGHTS,
      table.concat(z:names(), ", ")))
  end
  return h5.open_bytes(z:read(WEIGHTS), path .. ":" .. WEIGHTS)
end

-- load_weights(model, path): the weights inside a .keras file.
function M.load_weights(model, path)
  local z = zip.open(path)
  local f = weights_of(z, path)
  z:close()
  local ok, err = pcall(keras_weights.load_file, model, f, path)
  f:close()
  if not ok then error(err, 0) end
end

return M
