-- stdlib/tide/layers/preprocessing/text_ngrams.lua — TextVectorization's token steps on ragged rows: ngrams
-- (the text_ngrams op, TF's strings.ngrams with separator " ") and character split (text_chars, UTF-8).
local binding = require "tide.binding"
local dispatch = require "tide.dispatch"
local convert = require "tide.convert"
local C = binding.C
local fmt = string.format

local M = {}

-- Keras's ngrams argument: nil, an integer n (widths 1..n) or a list of widths; returns the widths or nil.
function M.widths(ngrams, who)
  if ngrams == nil then return nil end
  local out = {}
  if type(ngrams) == "number" then
    if ngrams % 1 ~= 0 or ngrams < 1 then
      binding.error(fmt("%s: ngrams must be nil, an integer >= 1 or a list of them, got %s", who, tostring(ngrams)))
    end
    for i = 1, ngrams do out[i] = i end
  elseif type(ngrams) == "table" then
    for i, w in ipairs(ngrams) do
      if type(w) ~= "number" or w % 1 ~= 0 or w < 1 then
        binding.error(fmt("%s: ngrams[%d] must be an integer >= 1, got %s", who, i, tostring(w)))
      end
      out[i] = w
    end
    if #out == 0 then binding.error(fmt("%s: ngrams is an empty list", who)) end
  else
    binding.error(fmt("%s: ngrams must be nil, an integer or a list of integers, got %s", who, type(ngrams)))
  end
  if #out > 3 * 8 then binding.error(fmt("%s: at most 24 ngram widths, got %d", who, #out)) end
  return out
end

-- ngrams(values, row_splits, widths, separator=" "): each row's n-grams, width by width (values, row_splits).
function M.ngrams(values, row_splits, widths, separator)
  local a = dispatch.attrs()
  dispatch.set_ints(a, widths, "text_ngrams")
  return dispatch.run(C.TIDE_OP_TEXT_NGRAMS, a, { values, row_splits, convert.tensor(separator or " ", "string") }, 2)
end

-- characters(x): the UTF-8 characters of each string of a vector (a scalar is one row), as values, row_splits.
function M.characters(x)
  if x.ndim == 0 then
    local v = dispatch.run(C.TIDE_OP_TEXT_CHARS, dispatch.attrs(), { x:reshape { 1 } }, 2)
    return v, nil
  end
  return dispatch.run(C.TIDE_OP_TEXT_CHARS, dispatch.attrs(), { x }, 2)
end

return M
