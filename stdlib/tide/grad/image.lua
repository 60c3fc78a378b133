-- stdlib/tide/grad/image.lua — gradients of tide.image's resize ops (TF's
-- image_grad.py): each gradient op is linear in dy, its own gradient a resize again.
local binding = require "tide.binding"
local grad = require "tide.grad.registry"
local util = require "tide.grad.util"
local dispatch = require "tide.dispatch"
local dtype = require "tide.dtype"
local math_ops = require "tide.ops.math"
local ffi, C = binding.ffi, binding.C

local reg = grad.register
local attrs_size = ffi.sizeof("tide_attrs")

-- Run resize op `op` on inputs with `src`'s attrs and result dtype `dt`;
-- `size`, when given, is the {height, width} to resize to.
local function run(op, src, inputs, dt, size)
  local a = dispatch.attrs()
  ffi.copy(a, src, attrs_size)
  a.dtype = dt
  if size then
    a.ints[0], a.ints[1] = size[1], size[2]
    a.nints = 2
  end
  return dispatch.run(op, a, inputs)
end

-- The height and width of image t (rank 3 or 4), which a resize back to it needs known.
local function hw(t, op)
  local h, w = t.ndim - 3, t.ndim - 2
  if t.ndim < 0 or t.dims[h] < 0 or t.dims[w] < 0 then
    util.error(string.format("GradientTape:gradient: %s's second-order gradient needs dy's height and width known " ..
      "while tracing, and dy has shape %s", op, tostring(t.shape)))
  end
  return { tonumber(t.dims[h]), tonumber(t.dims[w]) }
end

-- resize_*(x) -> y: dx = resize_*_grad(dy, x), in x's dtype (none for integer images).
for fwd, bwd in pairs { resize_bilinear = "resize_bilinear_grad", resize_nearest = "resize_nearest_grad" } do
  local op = C["TIDE_OP_" .. bwd:upper()]
  reg(fwd, function(node, dys)
    local x = node.inputs[1]
    if not dtype.is_float[tonumber(x.dt)] then return nil end
    return run(op, node.attrs, { dys[1], x }, x.dt)
  end)
end

-- resize_*_grad(dy, x) is linear in dy: its gradient there is the forward
-- resize of g to dy's size, in dy's dtype; x gives only a shape.
for bwd, fwd in pairs { resize_bilinear_grad = "resize_bilinear", resize_nearest_grad = "resize_nearest" } do
  local op = C["TIDE_OP_" .. fwd:upper()]
  reg(bwd, function(node, dys, needs)
    local dy = node.inputs[1]
    if not util.needs(needs, dy) then return nil, nil end
    local g = dys[1]
    local y = run(op, node.attrs, { g }, dy.dt, hw(dy, bwd))
    if y.dt ~= dy.dt then y = math_ops.cast(y, dtype.names[tonumber(dy.dt)]) end -- nearest keeps g's dtype
    return y, nil
  end)
end
