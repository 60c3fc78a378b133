-- stdlib/tide/ops/plain.lua — the registry's plain elementwise ops (one or two
-- inputs, one output, no attributes), found by walking the registry and named
-- from it, so a new such op needs no Lua list: ops/math.lua and ops/bitwise.lua
-- install them. The few exceptions (TF's names, tide.bitwise's ops, ops with
-- attributes or another public face) are the three short tables below.
local binding = require "tide.binding"
local dispatch = require "tide.dispatch"
local ffi, C = binding.ffi, binding.C
local band = require("bit").band

local M = {}

-- Registry names whose Lua name is TF's (both names stay public: ops/math.lua
-- keeps the registry's as an alias).
M.LUA_NAME = { div_no_nan = "divide_no_nan" }

-- Ops that live in a namespace of their own (no methods, not in tide.* or
-- tide.math.*): tide.bitwise (tf.bitwise), tide.math.special (the functions
-- TF has only in tf.math.special) and tide.raw_ops (ops that only a gradient
-- runs, TF's tf.raw_ops); every other plain op is a tide.*, tide.math.* and
-- tensor method.
M.FAMILY = {
  bitwise_and = "bitwise", bitwise_or = "bitwise", bitwise_xor = "bitwise",
  left_shift = "bitwise", right_shift = "bitwise", invert = "bitwise",
  bessel_j0 = "special", bessel_j1 = "special", bessel_y0 = "special", bessel_y1 = "special",
  bessel_k0 = "special", bessel_k0e = "special", bessel_k1 = "special", bessel_k1e = "special",
  dawsn = "special", expint = "special", fresnel_cos = "special", fresnel_sin = "special", spence = "special",
  igamma_grad_a = "raw",
}

-- Where each family's functions are, as keys from the public tide table.
M.PATH = { math = {}, bitwise = { "bitwise" }, special = { "math", "special" }, raw = { "raw_ops" } }

-- The public function of plain op e (an entry of M.list) in the table `tide`.
function M.public(tide, e)
  local t = tide
  for _, k in ipairs(M.PATH[e.family]) do t = t[k] end
  return t[e.lua]
end

-- Elementwise ops of one or two inputs that are not plain: each keeps a
-- function of its own, where the reason says.
M.OWN = {
  gelu = "reads attrs (approximate): ops/math.lua",
  leaky_relu = "reads attrs (alpha): ops/math.lua",
  cast = "reads attrs (dtype): ops/math.lua",
  copy = "public as tide.contiguous: ops/shape.lua",
  celu = "reads attrs (alpha): ops/activations.lua",
  hard_shrink = "reads attrs (threshold): ops/activations.lua",
  soft_shrink = "reads attrs (threshold): ops/activations.lua",
  squareplus = "reads attrs (b): ops/activations.lua",
}

local ELEMENTWISE = C.TIDE_OPF_ELEMENTWISE

-- name -> { op = code, name = registry name, lua = Lua name, family = "math" |
-- "bitwise", nin = 1 | 2 } for every plain op, and M.list the same in code order.
M.ops, M.list = {}, {}
for op = 0, tonumber(C.TIDE_NUM_OPS) - 1 do
  local nin = C.tide_op_num_inputs(op)
  local name = ffi.string(C.tide_op_name(op))
  if band(C.tide_op_flags(op), ELEMENTWISE) ~= 0 and (nin == 1 or nin == 2) and C.tide_op_num_outputs(op) == 1
      and not M.OWN[name] then
    local e = { op = op, name = name, lua = M.LUA_NAME[name] or name, family = M.FAMILY[name] or "math", nin = nin }
    M.ops[name] = e
    M.list[#M.list + 1] = e
  end
end
for name in pairs(M.LUA_NAME) do assert(M.ops[name], "tide.ops.plain: LUA_NAME names no plain op '" .. name .. "'") end
for name in pairs(M.FAMILY) do assert(M.ops[name], "tide.ops.plain: FAMILY names no plain op '" .. name .. "'") end
for name in pairs(M.OWN) do
  local op = C.tide_op_lookup(name)
  assert(op >= 0 and band(C.tide_op_flags(op), ELEMENTWISE) ~= 0, "tide.ops.plain: OWN names no elementwise op '" .. name .. "'")
end

-- Put the Lua function of every plain op of `family` into `into` under its
-- Lua name (the hot one- and two-input paths of tide.dispatch).
function M.define(family, into)
  for _, e in ipairs(M.list) do
    if e.family == family then
      into[e.lua] = e.nin == 1 and dispatch.unary(e.lua, e.op) or dispatch.binary(e.lua, e.op)
    end
  end
  return into
end

return M
