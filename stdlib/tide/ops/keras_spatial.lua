-- stdlib/tide/ops/keras_spatial.lua — tide.ops' adaptive pools (PyTorch's cells: rows floor(i n / k) to
-- ceil((i + 1) n / k)), unfold/fold (im2col on channels-first images, as keras.ops) and einops' rearrange.
local binding = require "tide.binding"
local args = require "tide.args"
local convert = require "tide.convert"
local math_ops = require "tide.ops.math"
local reduce_ops = require "tide.ops.reduce"
local shape_ops = require "tide.ops.shape"
local segment = require "tide.ops.segment"
local u = require "tide.ops.keras_util"

local M = {}
local m, r, s = math_ops, reduce_ops, shape_ops
local fmt = string.format

-- The input's spatial axes moved to channels last (and a function moving a result back).
local function channels_last(op, x, data_format)
  if data_format == nil or data_format == "channels_last" then return x, function(y) return y end end
  if data_format ~= "channels_first" then
    binding.error(fmt("%s: data_format must be \"channels_last\" or \"channels_first\", got %s", op,
      tostring(data_format)))
  end
  local rank = x.ndim
  local perm, inv = { 0 }, { 0 }
  for i = 2, rank - 1 do perm[#perm + 1] = i end
  perm[#perm + 1] = 1
  inv[2] = rank - 1
  for i = 1, rank - 2 do inv[i + 2] = i end
  return s.transpose(x, perm), function(y) return s.transpose(y, inv) end
end

-- One axis pooled into k cells by `reduce` (each cell reduced on its own, then stacked in order).
local function pool_axis(x, axis, k, reduce)
  local n = u.dim("adaptive pool", x, axis)
  local cells = {}
  for i = 0, k - 1 do
    local lo, hi = math.floor(i * n / k), math.ceil((i + 1) * n / k)
    local spec = {}
    for d = 1, x.ndim do spec[d] = {} end
    spec[axis + 1] = { lo, hi }
    cells[i + 1] = reduce(x:slice(spec), axis, true)
  end
  return s.concat(cells, axis)
end

local function adaptive(op, reduce)
  return function(inputs, output_size, ...)
    local o = args.parse(op, { "data_format" }, ...)
    local x = u.arg(op, inputs, "inputs")
    local nd = u.rank(op, x) - 2
    if nd < 1 or nd > 3 then
      binding.error(fmt("%s: inputs must be 3-D, 4-D or 5-D (batch, spatial..., channels), got shape %s", op,
        tostring(x.shape)))
    end
    local y, back = channels_last(op, x, o.data_format)
    local sizes = type(output_size) == "table" and output_size or {}
    for i = 1, nd do
      local k = type(output_size) == "number" and output_size or sizes[i]
      if type(k) ~= "number" or k < 1 or k % 1 ~= 0 then
        binding.error(fmt("%s: output_size must be a whole number >= 1 or one per spatial dim", op))
      end
      y = pool_axis(y, i, k, reduce)
    end
    return back(y)
  end
end
M.adaptive_average_pool = adaptive("adaptive_average_pool", r.reduce_mean)
M.adaptive_max_pool = adaptive("adaptive_max_pool", r.reduce_max)

-- A pair from a number or a pair.
local function pair(op, what, v)
  if type(v) == "number" then v = { v, v } end
  if type(v) ~= "table" or #v ~= 2 or type(v[1]) ~= "number" or type(v[2]) ~= "number" then
    binding.error(fmt("%s: %s must be a number or a pair", op, what))
  end
  return v
end

-- The flat positions (in the padded H x W image) that unfold reads: [kh * kw, L], and L's grid.
local function positions(op, h, w, k, d, p, st)
  local hp, wp = h + 2 * p[1], w + 2 * p[2]
  local oh = math.floor((hp - d[1] * (k[1] - 1) - 1) / st[1]) + 1
  local ow = math.floor((wp - d[2] * (k[2] - 1) - 1) / st[2]) + 1
  if oh < 1 or ow < 1 then binding.error(fmt("%s: the kernel does not fit the padded %dx%d image", op, hp, wp)) end
  local idx = {}
  for ky = 0, k[1] - 1 do
    for kx = 0, k[2] - 1 do
      local row = {}
      for oy = 0, oh - 1 do
        for ox = 0, ow - 1 do
          row[#row + 1] = (oy * st[1] + ky * d[1]) * wp + (ox * st[2] + kx * d[2])
        end
      end
      idx[#idx + 1] = row
    end
  end
  return idx, hp, wp, oh * ow
end

-- unfold(x, kernel_size, dilation=1, padding=0, stride=1): [N, C, H, W] -> [N, C * kh * kw, L], the sliding
-- blocks as columns (im2col; channels first, as keras.ops).
function M.unfold(x, kernel_size, ...)
  local o = args.parse("unfold", { "dilation", "padding", "stride" }, ...)
  x = u.arg("unfold", x)
  if u.rank("unfold", x) ~= 4 then binding.error(fmt("unfold: x must be 4-D [N, C, H, W], got shape %s",
    tostring(x.shape))) end
  local k, d = pair("unfold", "kernel_size", kernel_size), pair("unfold", "dilation", o.dilation or 1)
  local p, st = pair("unfold", "padding", o.padding or 0), pair("unfold", "stride", o.stride or 1)
  local n, c, h, w = u.dim("unfold", x, 0), u.dim("unfold", x, 1), u.dim("unfold", x, 2), u.dim("unfold", x, 3)
  local idx, hp, wp, l = positions("unfold", h, w, k, d, p, st)
  local padded = s.pad(x, { { 0, 0 }, { 0, 0 }, { p[1], p[1] }, { p[2], p[2] } })
  local flat = s.reshape(padded, { n, c, hp * wp })
  local cols = s.gather(flat, convert.tensor(idx, "int32"), { axis = 2 }) -- [N, C, K, L]
  return s.reshape(cols, { n, c * k[1] * k[2], l })
end

-- fold(x, output_size, kernel_size, dilation=1, padding=0, stride=1): unfold's inverse sum: [N, C * K, L] ->
-- [N, C, H, W], overlapping blocks added.
function M.fold(x, output_size, kernel_size, ...)
  local o = args.parse("fold", { "dilation", "padding", "stride" }, ...)
  x = u.arg("fold", x)
  if u.rank("fold", x) ~= 3 then binding.error(fmt("fold: x must be 3-D [N, C * kh * kw, L], got shape %s",
    tostring(x.shape))) end
  local hw = pair("fold", "output_size", output_size)
  local k, d = pair("fold", "kernel_size", kernel_size), pair("fold", "dilation", o.dilation or 1)
  local p, st = pair("fold", "padding", o.padding or 0), pair("fold", "stride", o.stride or 1)
  local idx, hp, wp, l = positions("fold", hw[1], hw[2], k, d, p, st)
  local n, ck, lx = u.dim("fold", x, 0), u.dim("fold", x, 1), u.dim("fold", x, 2)
  local kk = k[1] * k[2]
  if ck % kk ~= 0 or lx ~= l then
    binding.error(fmt("fold: x has shape %s but the kernel and output_size need [N, C * %d, %d]", tostring(x.shape),
      kk, l))
  end
  local c = ck / kk
  local ids = {}
  for _, row in ipairs(idx) do for _, v in ipairs(row) do ids[#ids + 1] = v end end
  -- [N, C, K * L] -> [K * L, N, C], summed into the padded image's positions
  local t = s.transpose(s.reshape(x, { n, c, kk * l }), { 2, 0, 1 })
  local img = segment.unsorted_segment_sum(t, convert.tensor(ids, "int32"), hp * wp) -- [Hp * Wp, N, C]
  img = s.reshape(s.transpose(img, { 1, 2, 0 }), { n, c, hp, wp })
  return img:slice { {}, {}, { p[1], p[1] + hw[1] }, { p[2], p[2] + hw[2] } }
end

-- rearrange(tensor, pattern, axes_lengths): einops' "b (h w) c -> b h w c" forms: named axes and
-- parenthesized groups on both sides (no ellipsis, no 1s); sizes a group cannot tell come in axes_lengths.
local function parse_side(op, text)
  local groups, seen = {}, {}
  local i = 1
  local cur
  for tok in text:gmatch("%S+") do
    local open, name, close = tok:match("^(%(?)([%w_]*)(%)?)$")
    if not open then binding.error(fmt("%s: cannot read '%s' in the pattern (names and groups only)", op, tok)) end
    if open == "(" then
      if cur then binding.error(op .. ": groups cannot nest") end
      cur = {}
    end
    if name ~= "" then
      if seen[name] then binding.error(fmt("%s: axis '%s' appears twice on one side", op, name)) end
      seen[name] = true
      if cur then cur[#cur + 1] = name else groups[#groups + 1] = { name } end
    end
    if close == ")" then
      if not cur then binding.error(op .. ": a ')' without its '('") end
      groups[#groups + 1] = cur
      cur = nil
    end
    i = i + 1
  end
  if cur then binding.error(op .. ": a '(' without its ')'") end
  return groups, seen
end

function M.rearrange(x, pattern, lengths)
  local op = "rearrange"
  x = u.arg(op, x, "tensor")
  if type(pattern) ~= "string" or not pattern:find("->", 1, true) then
    binding.error("rearrange: pattern must be a string \"left -> right\"")
  end
  if pattern:find("...", 1, true) then binding.error("rearrange: '...' is not supported; name every axis") end
  local left, right = pattern:match("^(.-)%->(.*)$")
  local lg, lset = parse_side(op, left)
  local rg, rset = parse_side(op, right)
  for name in pairs(lset) do
    if not rset[name] then binding.error(fmt("rearrange: axis '%s' is on the left only", name)) end
  end
  for name in pairs(rset) do
    if not lset[name] then binding.error(fmt("rearrange: axis '%s' is on the right only", name)) end
  end
  local rank = u.rank(op, x)
  if #lg ~= rank then
    binding.error(fmt("rearrange: the pattern's left side has %d axes but the tensor has rank %d", #lg, rank))
  end
  local size = {}
  for k2, v in pairs(lengths or {}) do size[k2] = v end
  local elementary = {}
  for gi, g in ipairs(lg) do
    local total = u.dim(op, x, gi - 1)
    local known, unknown = 1, nil
    for _, name in ipairs(g) do
      elementary[#elementary + 1] = name
      if size[name] then known = known * size[name]
      elseif unknown then binding.error(fmt("rearrange: give the size of '%s' or '%s' (axes_lengths)", unknown, name))
      else unknown = name end
    end
    if unknown then
      if known == 0 or total % known ~= 0 then
        binding.error(fmt("rearrange: dim %d (%d) does not split by %d", gi - 1, total, known))
      end
      size[unknown] = total / known
    elseif known ~= total then
      binding.error(fmt("rearrange: dim %d is %d but its group's sizes make %d", gi - 1, total, known))
    end
  end
  local shp = {}
  for i, name in ipairs(elementary) do shp[i] = size[name] end
  local y = s.reshape(x, shp)
  local pos = {}
  for i, name in ipairs(elementary) do pos[name] = i - 1 end
  local perm, out = {}, {}
  for gi, g in ipairs(rg) do
    local n = 1
    for _, name in ipairs(g) do perm[#perm + 1] = pos[name]; n = n * size[name] end
    out[gi] = n
  end
  return s.reshape(s.transpose(y, perm), out)
end

return M
