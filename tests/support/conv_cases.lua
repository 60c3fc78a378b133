-- tests/support/conv_cases.lua — the geometries the conv and pool specs share
-- with tests/support/grad_cases_nn.lua: conv strides/dilations/padding, pool
-- windows, and max_pool2d's gradient ops run raw with a forward node's attrs.
local nn = require "tide.ops.nn_conv"
local ffi = require("tide.binding").ffi

local M = {}

M.CONV = { -- strides, dilations, padding
  { { 1, 1 }, { 1, 1 }, "SAME" }, { { 1, 1 }, { 1, 1 }, "VALID" },
  { { 2, 2 }, { 1, 1 }, "SAME" }, { { 2, 1 }, { 1, 1 }, "VALID" },
  { { 1, 1 }, { 2, 2 }, "SAME" }, { { 1, 2 }, { 2, 1 }, "VALID" },
  { { 2, 3 }, { 2, 1 }, "SAME" }, { { 3, 3 }, { 1, 1 }, "SAME" },
  { { 1, 1 }, { 1, 1 }, { { 0, 0 }, { 1, 2 }, { 0, 1 }, { 0, 0 } } },
  { { 2, 2 }, { 2, 1 }, { { 0, 0 }, { 2, 0 }, { 1, 1 }, { 0, 0 } } },
  -- pads wider than the window: whole output rows and columns see only padding
  { { 1, 2 }, { 1, 1 }, { { 0, 0 }, { 3, 1 }, { 0, 4 }, { 0, 0 } } },
}

function M.conv_name(c)
  local p = type(c[3]) == "table" and "explicit" or c[3]
  return string.format("strides %d,%d dilations %d,%d %s", c[1][1], c[1][2], c[2][1], c[2][2], p)
end

-- Every window, stride and padding case max_pool2d takes, including VALID
-- windows larger than the input (empty results).
M.POOL = {
  { 2, 2, "VALID" }, { 3, 2, "SAME" }, { { 2, 3 }, 1, "SAME" }, { 3, { 1, 2 }, "VALID" }, { 1, 1, "VALID" },
  { 4, 3, "SAME" }, { { 6, 2 }, { 5, 1 }, "VALID" }, { { 6, 7 }, { 1, 2 }, "VALID" },
}

function M.pool_name(c)
  local function s(v) return type(v) == "table" and table.concat(v, "x") or tostring(v) end
  return string.format("ksize %s, strides %s, %s", s(c[1]), s(c[2]), c[3])
end

-- Pool attrs as the forward node records them: ksize, strides, padding (0 VALID, 1 SAME).
function M.pool_attrs(k, s, padding)
  k = type(k) == "table" and k or { k, k }
  s = type(s) == "table" and s or { s, s }
  local a = ffi.new("tide_attrs")
  a.ints[0], a.ints[1], a.ints[2], a.ints[3], a.nints = k[1], k[2], s[1], s[2], 4
  a.m = padding == "SAME" and 1 or 0
  return a
end

-- max_pool2d_grad(x, y, dy) and max_pool2d_grad_grad(x, y, g), y pooled from x.
function M.pool_grad(x, dy, k, s, p)
  return nn.raw.run(nn.raw.ops.max_pool2d_grad, M.pool_attrs(k, s, p), { x, nn.max_pool2d(x, k, s, p), dy })
end
function M.pool_grad_grad(x, g, k, s, p)
  return nn.raw.run(nn.raw.ops.max_pool2d_grad_grad, M.pool_attrs(k, s, p), { x, nn.max_pool2d(x, k, s, p), g })
end

return M
