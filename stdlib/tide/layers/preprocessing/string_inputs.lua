-- stdlib/tide/layers/preprocessing/string_inputs.lua — the input form the tokenizers
-- (WordPiece, BytePair) take: a string, a vector of strings, or [N, 1] as Keras feeds them.
local binding = require "tide.binding"
local convert = require "tide.convert"
local shape_ops = require "tide.ops.shape"
local layer = require "tide.layers.layer"

local fmt = string.format

-- x as a string vector, and whether a single string (a scalar) came in; errors name the layer.
return function(self, x)
  x = convert.tensor(x)
  if tostring(x.dtype) ~= "string" then
    binding.error(fmt("%s: expected string inputs, got dtype %s", layer.who(self), tostring(x.dtype)))
  end
  local scalar = x.ndim == 0
  if x.ndim > 1 then
    if x.ndim ~= 2 or x.shape[2] ~= 1 then
      binding.error(fmt("%s: the input must be a string, a vector, or [N, 1]; got shape %s", layer.who(self),
        tostring(x.shape)))
    end
    x = shape_ops.squeeze(x, { 1 })
  end
  if scalar then x = shape_ops.reshape(x, { 1 }) end
  return x, scalar
end
