-- stdlib/tide/ops/linalg_norm.lua — tf.linalg's norms, as compositions of
-- other ops (their gradients follow): norm (vector and matrix orders),
-- global_norm, l2_normalize and normalize.
local binding = require "tide.binding"
local convert = require "tide.convert"
local args = require "tide.args"
local dtype = require "tide.dtype"
local shape = require "tide.ops.shape"
local reduce = require "tide.ops.reduce"
local math_ops = require "tide.ops.math"
local decomp = require "tide.ops.linalg_decomp"
local C, Tensor = binding.C, binding.Tensor
local istype = binding.ffi.istype
local fmt = string.format

local M = {}

local INF = math.huge

-- `ord` as TF spells it: "euclidean", "fro", "nuclear" (tide's extension, for
-- matrices), or a number (math.huge for inf).
local function ord_text(ord) return ord == INF and "inf" or tostring(ord) end

-- The axes of a matrix norm: a pair of distinct axes, normalized against rank r (when known).
local function matrix_axes(axis, r)
  local a, b = axis[1], axis[2]
  if type(a) ~= "number" or type(b) ~= "number" or a ~= math.floor(a) or b ~= math.floor(b) then
    binding.error("norm: 'axis' must be None, an integer, or a tuple of 2 unique integers")
  end
  if r >= 0 then
    for _, v in ipairs { a, b } do
      if v < -r or v >= r then binding.error(fmt("norm: axis %d is out of range for a tensor of rank %d", v, r)) end
    end
    a, b = a < 0 and a + r or a, b < 0 and b + r or b
  end
  if a == b then binding.error(fmt("norm: 'axis' must be None, an integer, or a tuple of 2 unique integers, got {%d, %d}",
    axis[1], axis[2])) end
  return a, b
end

-- The squeeze of keepdims' size-1 axes (all when axes is nil).
local function squeeze(t, axes)
  if axes == nil then return shape.reshape(t, {}) end
  return shape.squeeze(t, axes)
end

-- The largest singular value (2) or their sum (nuclear) over matrix axes a, b, kept as size-1 dims.
local function spectral(x, a, b, ord)
  local r = x.ndim
  if r < 0 then binding.error("norm: a matrix norm of order " .. ord_text(ord) .. " needs the input's rank") end
  local perm, after = {}, {}
  for i = 0, r - 1 do
    if i ~= a and i ~= b then perm[#perm + 1] = i end
  end
  perm[#perm + 1], perm[#perm + 2] = a, b
  local s = decomp.svd(shape.transpose(x, perm), { compute_uv = false })
  local v = ord == "nuclear" and reduce.reduce_sum(s, -1, true) or reduce.reduce_max(s, -1, true)
  v = shape.expand_dims(v, -1) -- [batch..., 1, 1], in perm's order
  for i, p in ipairs(perm) do after[p + 1] = i - 1 end
  return shape.transpose(v, after)
end

-- norm(tensor, ord="euclidean", axis=nil, keepdims=false) as tf.linalg.norm:
-- a vector norm over one axis (or the whole tensor) of order "euclidean", 1,
-- 2, inf (math.huge) or any p > 0; a matrix norm over a pair of axes of order
-- "fro", "euclidean", 1, 2, inf, or "nuclear" (which TF's lacks).
function M.norm(x, ...)
  local o = args.parse("norm", { "ord", "axis", "keepdims" }, ...)
  x = convert.arg(x, "norm")
  local ord = o.ord == nil and "euclidean" or o.ord
  if istype(Tensor, ord) then ord = ord:item() end
  local keep = args.bool("norm", "keepdims", o.keepdims, false)
  local axis = o.axis
  if istype(Tensor, axis) then axis = axis:totable() end
  local is_matrix = type(axis) == "table" and #axis == 2
  local axes -- the reduced axes, as reduce_* take them
  if is_matrix then
    if not (ord == "euclidean" or ord == "fro" or ord == "nuclear" or ord == 1 or ord == 2 or ord == INF) then
      binding.error(fmt("norm: 'ord' must be a supported matrix norm in ['euclidean', 'fro', 1, 2, inf, 'nuclear'], " ..
        "got %s", ord_text(ord)))
    end
    axes = { matrix_axes(axis, x.ndim) }
  else
    if type(axis) == "table" then
      if #axis ~= 1 then
        binding.error("norm: 'axis' must be None, an integer, or a tuple of 2 unique integers, got " .. #axis .. " axes")
      end
      axis = axis[1]
    end
    if axis ~= nil then axes = { args.int("norm", "axis", axis) } end
    local ok = ord == "euclidean" or ord == "fro" or (type(ord) == "number" and ord > 0)
    if not ok then binding.error(fmt("norm: 'ord' must be a supported vector norm, got %s", ord_text(ord))) end
  end
  if not dtype.is_float[tonumber(x.dt)] then
    binding.error(fmt("norm: tensor must be a float tensor, got %s (use :cast(\"float32\"))", dtype.names[tonumber(x.dt)]))
  end
  local result
  if is_matrix and (ord == 2 or ord == "nuclear") then
    result = spectral(x, axes[1], axes[2], ord)
  elseif ord == "euclidean" or ord == "fro" or ord == 2 then
    result = math_ops.sqrt(reduce.reduce_sum(x * x, axes, true))
  else
    local ax = math_ops.abs(x)
    if ord == 1 then -- columns summed, then the largest (matrix); the sum (vector)
      result = reduce.reduce_sum(ax, axes and axes[1], true)
      if is_matrix then result = reduce.reduce_max(result, axes[2], true) end
    elseif ord == INF then -- rows summed, then the largest (matrix); the largest (vector)
      if is_matrix then ax = reduce.reduce_sum(ax, axes[2], true) end
      result = reduce.reduce_max(ax, axes and axes[1], true)
    else
      result = math_ops.pow(reduce.reduce_sum(math_ops.pow(ax, ord), axes, true), 1 / ord)
    end
  end
  if keep then return result end
  return squeeze(result, axes)
end

-- global_norm(t_list) as tf.linalg.global_norm: sqrt of the sum of squares of
-- every element of every tensor (nil entries skipped: a list with holes can
-- be given as {n = count, ...}); the tensors must share a float dtype.
function M.global_norm(t_list)
  if type(t_list) ~= "table" or istype(Tensor, t_list) then
    binding.error("global_norm: t_list must be a Lua list of tensors")
  end
  local total, dt
  for i = 1, t_list.n or #t_list do
    local t = t_list[i]
    if t ~= nil then
      t = convert.arg(t, "global_norm")
      if not dtype.is_float[tonumber(t.dt)] then
        binding.error(fmt("global_norm: t_list[%d] must be a float tensor, got %s", i, dtype.names[tonumber(t.dt)]))
      end
      if dt and t.dt ~= dt then
        binding.error(fmt("global_norm: t_list[%d] is %s but an earlier tensor is %s", i, dtype.names[tonumber(t.dt)],
          dtype.names[tonumber(dt)]))
      end
      dt = t.dt
      local s = reduce.reduce_sum(math_ops.square(t))
      total = total and total + s or s
    end
  end
  if total == nil then return convert.tensor(0, "float32") end
  return math_ops.sqrt(total)
end

-- l2_normalize(x, axis=nil, epsilon=1e-12) as tf.linalg.l2_normalize (and
-- tf.math's, tf.nn's: the one home of all three): x / sqrt(max(sum(x^2),
-- epsilon)) over axis (all when nil; `dim` is TF's older name for it).
function M.l2_normalize(x, ...)
  local o = args.parse("l2_normalize", { "axis", "epsilon", "name", "dim", lists = { axis = true, dim = true } }, ...)
  if o.axis == nil then o.axis = o.dim end
  x = convert.arg(x, "l2_normalize")
  if not dtype.is_float[tonumber(x.dt)] then
    binding.error(fmt("l2_normalize: x must be a float tensor, got %s (use :cast(\"float32\"))",
      dtype.names[tonumber(x.dt)]))
  end
  local eps = o.epsilon == nil and 1e-12 or args.number("l2_normalize", "epsilon", o.epsilon)
  local sq = reduce.reduce_sum(math_ops.square(x), o.axis, true)
  return x * math_ops.rsqrt(math_ops.maximum(sq, eps))
end

-- normalize(tensor, ord="euclidean", axis=nil) as tf.linalg.normalize: tensor
-- divided by its norm, and the norm (kept dims).
function M.normalize(x, ...)
  local o = args.parse("normalize", { "ord", "axis" }, ...)
  x = convert.arg(x, "normalize")
  local n = M.norm(x, { ord = o.ord, axis = o.axis, keepdims = true })
  return x / n, n
end

return M
