-- stdlib/tide/layers/options.lua — checks of the constructor options the layer
-- families share (Keras's argument_validation): each returns the value or
-- raises an error naming the layer class and the option.
local binding = require "tide.binding"

local M = {}

local fmt = string.format

local function is_int(v) return type(v) == "number" and v == math.floor(v) and v > -math.huge and v < math.huge end
M.is_int = is_int

-- A positive integer.
function M.positive_int(cls, what, v)
  if not is_int(v) or v <= 0 then
    binding.error(fmt("%s: %s must be a positive integer, got %s", cls, what, tostring(v)))
  end
  return v
end

-- An integer (any sign), default when nil.
function M.int(cls, what, v, default)
  if v == nil then return default end
  if not is_int(v) then binding.error(fmt("%s: %s must be an integer, got %s", cls, what, tostring(v))) end
  return v
end

-- A boolean, default when nil.
function M.boolean(cls, what, v, default)
  if v == nil then return default end
  if type(v) ~= "boolean" then binding.error(fmt("%s: %s must be true or false, got %s", cls, what, tostring(v))) end
  return v
end

-- A number (not NaN), default when nil; lo/hi (optional) bound it, inclusive
-- unless open_hi (then [lo, hi)).
function M.number(cls, what, v, default, lo, hi, open_hi)
  if v == nil then v = default end
  local bad = type(v) ~= "number" or v ~= v
  if not bad then bad = (lo and v < lo) or (hi and (v > hi or (open_hi and v == hi))) end
  if bad then
    local range = ""
    if hi then range = fmt(" in [%s, %s%s", tostring(lo), tostring(hi), open_hi and ")" or "]")
    elseif lo then range = " >= " .. tostring(lo) end
    binding.error(fmt("%s: %s must be a number%s, got %s", cls, what, range, tostring(v)))
  end
  return v
end

-- A tuple of `rank` integers from a number or a list (Keras's
-- standardize_tuple): positive, or non-negative with allow_zero.
function M.tuple(cls, what, v, rank, allow_zero)
  if type(v) == "number" then
    local out = {}
    for i = 1, rank do out[i] = v end
    v = out
  end
  if type(v) ~= "table" or #v ~= rank then
    binding.error(fmt("%s: %s must be an integer or a list of %d integers, got %s", cls, what, rank, tostring(v)))
  end
  local out = {}
  for i = 1, rank do
    local d = v[i]
    if not is_int(d) or d < 0 or (d == 0 and not allow_zero) then
      binding.error(fmt("%s: %s must hold %s integers, got %s", cls, what, allow_zero and "non-negative" or "positive",
        tostring(d)))
    end
    out[i] = d
  end
  return out
end

-- Per-axis {before, after} pairs for `rank` spatial axes (Keras's padding and
-- cropping arguments): an int (every side), a list of `rank` ints (both sides
-- of each axis), or a list of `rank` pairs. rank 1 also takes one pair {a, b}.
function M.pairs(cls, what, v, rank, example)
  local out
  if is_int(v) then
    out = {}
    for i = 1, rank do out[i] = { v, v } end
  elseif type(v) == "table" and rank == 1 and #v == 2 and is_int(v[1]) then
    out = { { v[1], v[2] } }
  elseif type(v) == "table" and #v == rank then
    out = {}
    for i = 1, rank do
      local p = v[i]
      if is_int(p) then out[i] = { p, p }
      elseif type(p) == "table" and #p == 2 then out[i] = { p[1], p[2] }
      else out = nil; break end
    end
  end
  for _, p in ipairs(out or {}) do
    if not (is_int(p[1]) and is_int(p[2]) and p[1] >= 0 and p[2] >= 0) then out = nil; break end
  end
  if not out then
    binding.error(fmt("%s: %s must be an integer, %s of non-negative integers, got %s", cls, what, example,
      type(v) == "table" and "a list of another form" or tostring(v)))
  end
  return out
end

-- data_format: "channels_last" (the default, Keras's image_data_format) or "channels_first".
function M.data_format(cls, v)
  v = v or "channels_last"
  if v ~= "channels_last" and v ~= "channels_first" then
    binding.error(fmt("%s: data_format must be \"channels_last\" or \"channels_first\", got %s", cls, tostring(v)))
  end
  return v
end

-- An axis (an integer) or a list of them; copied.
function M.axes(cls, what, v, default)
  if v == nil then v = default end
  if is_int(v) then return v end
  if type(v) == "table" and #v > 0 then
    local out = {}
    for i, a in ipairs(v) do
      if not is_int(a) then break end
      out[i] = a
    end
    if #out == #v then return out end
  end
  binding.error(fmt("%s: %s must be an integer or a list of integers, got %s", cls, what, tostring(v)))
end

-- A 0-based axis of a rank-`rank` input (negative counts from the end), checked.
function M.resolve_axis(who, axis, rank)
  local a = axis < 0 and rank + axis or axis
  if a < 0 or a >= rank then
    binding.error(fmt("%s: axis %d is out of range for an input of rank %d", who, axis, rank))
  end
  return a
end

return M
