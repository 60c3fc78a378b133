-- stdlib/tide/ops/morphology.lua — tf.nn.dilation2d and erosion2d (grayscale morphology) as a running
-- maximum over the filter's shifted, strided views of the padded input: compositions, so the tape's
-- maximum gradient (ties to the first) gives TF's (the first window position that attains the max).
local binding = require "tide.binding"
local convert = require "tide.convert"
local dtype = require "tide.dtype"
local args = require "tide.args"
local m = require "tide.ops.math"
local shape = require "tide.ops.shape"

local M = {}
local fmt = string.format

-- A [1, a, b, 1] list option (strides, dilations): {a, b}.
local function pair4(op, what, v)
  local list = args.int_list(op, what, v == nil and { 1, 1, 1, 1 } or v)
  if #list ~= 4 or list[1] ~= 1 or list[4] ~= 1 then
    binding.error(fmt("%s: %s must be [1, rows, cols, 1], got a list of %d", op, what, #list))
  end
  if list[2] < 1 or list[3] < 1 then binding.error(fmt("%s: %s must be positive", op, what)) end
  return list[2], list[3]
end

-- The output size and the padding before, for one spatial dim (TF's SAME and VALID).
local function out_size(op, n, k, s, same)
  if same then
    local o = math.ceil(n / s)
    local total = math.max((o - 1) * s + k - n, 0)
    return o, math.floor(total / 2)
  end
  local o = math.ceil((n - k + 1) / s)
  if o < 0 then o = 0 end
  return o, 0
end

-- dilation2d(input, filters, strides, padding, data_format="NHWC", dilations): out[b, y, x, c] =
-- max over (i, j) of input[b, y sy + i ry - pt, x sx + j rx - pl, c] + filters[i, j, c], padding never
-- the max (filled with -inf).
function M.dilation2d(input, filters, strides, padding, data_format, dilations)
  local op = "dilation2d"
  if type(strides) == "table" and strides.padding ~= nil then -- one options table
    local o = strides
    strides, padding, data_format, dilations = o.strides, o.padding, o.data_format, o.dilations
  end
  if data_format ~= nil and data_format ~= "NHWC" then
    binding.error(fmt("%s: data_format must be NHWC, got %s", op, tostring(data_format)))
  end
  local x, f = convert.arg(input, op .. " (input)"), convert.arg(filters, op .. " (filters)")
  if not dtype.is_float[x.dt] then binding.error(fmt("%s: input must be a float tensor, got %s", op, dtype.names[x.dt])) end
  if x.ndim ~= 4 then binding.error(fmt("%s: input must be 4-D [batch, height, width, depth], got shape %s", op,
    tostring(x.shape))) end
  if f.ndim ~= 3 then binding.error(fmt("%s: filters must be 3-D [height, width, depth], got shape %s", op,
    tostring(f.shape))) end
  local h, w, c = tonumber(x.dims[1]), tonumber(x.dims[2]), tonumber(x.dims[3])
  local kh, kw, fc = tonumber(f.dims[0]), tonumber(f.dims[1]), tonumber(f.dims[2])
  if h < 0 or w < 0 then binding.error(fmt("%s: height and width must be known, got shape %s", op, tostring(x.shape))) end
  if c >= 0 and fc ~= c then binding.error(fmt("%s: filters have depth %d but input %d", op, fc, c)) end
  local sy, sx = pair4(op, "strides", strides)
  local ry, rx = pair4(op, "dilations", dilations)
  local mode = type(padding) == "string" and padding:upper() or nil
  if mode ~= "SAME" and mode ~= "VALID" then
    binding.error(fmt("%s: padding must be \"SAME\" or \"VALID\", got %s", op, tostring(padding)))
  end
  local ekh, ekw = (kh - 1) * ry + 1, (kw - 1) * rx + 1
  local oh, pt = out_size(op, h, ekh, sy, mode == "SAME")
  local ow, pl = out_size(op, w, ekw, sx, mode == "SAME")
  local pb, pr = math.max((oh - 1) * sy + ekh - h - pt, 0), math.max((ow - 1) * sx + ekw - w - pl, 0)
  local xp = x
  if pt + pb + pl + pr > 0 then
    xp = shape.pad(x, { { 0, 0 }, { pt, pb }, { pl, pr }, { 0, 0 } }, { constant_values = -math.huge })
  end
  local out
  for i = 0, kh - 1 do
    for j = 0, kw - 1 do
      local y0, x0 = i * ry, j * rx
      local view = xp:slice { {}, { y0, y0 + (oh - 1) * sy + 1, sy }, { x0, x0 + (ow - 1) * sx + 1, sx }, {} }
      local term = m.add(view, f:slice { i, j, {} })
      out = out and m.maximum(out, term) or term
    end
  end
  return out
end

-- erosion2d(value, filters, strides, padding, data_format, dilations): -dilation2d(-value, reversed filters).
function M.erosion2d(value, filters, strides, padding, data_format, dilations)
  local f = convert.arg(filters, "erosion2d (filters)")
  local rev = shape.reverse(f, { 0, 1 })
  return m.neg(M.dilation2d(m.neg(convert.arg(value, "erosion2d (value)")), rev, strides, padding, data_format, dilations))
end

return M
