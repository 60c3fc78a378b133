-- stdlib/tide/ops/betainc.lua — tf.math.betainc: the regularized incomplete beta function I_x(a, b) of three
-- broadcast float32/float64 tensors (one C op, cpu/betainc.c); its gradient (in x only, as TF) is grad/betainc.lua's.
local binding = require "tide.binding"
local convert = require "tide.convert"
local dispatch = require "tide.dispatch"
local dtype = require "tide.dtype"

local M = {}

-- Equal shapes (a None dim or an unknown rank agrees with anything; the C op broadcasts what is left).
local function shapes_agree(p, q)
  if p.ndim < 0 or q.ndim < 0 then return true end
  if p.ndim ~= q.ndim then return false end
  for i = 0, p.ndim - 1 do
    if p.dims[i] >= 0 and q.dims[i] >= 0 and p.dims[i] ~= q.dims[i] then return false end
  end
  return true
end
local BETAINC = binding.C.TIDE_OP_BETAINC

-- betainc(a, b, x): NaN where a <= 0, b <= 0 or x is outside [0, 1]. As TF, the inputs have one shape, or are
-- scalars (which broadcast); a Lua number takes a tensor argument's dtype.
function M.betainc(a, b, x)
  local op = "betainc"
  local like
  for _, v in ipairs { a, b, x } do
    if binding.istensor(v) then like = like or v end
  end
  local dt = like and dtype.names[like.dt] or "float32"
  local function arg(v, what)
    if v == nil then binding.error(op .. ": " .. what .. " is required") end
    if binding.istensor(v) then return v end
    return convert.tensor(v, dt, op .. " (" .. what .. ")")
  end
  local ins, names, first = { arg(a, "a"), arg(b, "b"), arg(x, "x") }, { "a", "b", "x" }, nil
  for i, t in ipairs(ins) do
    if t.ndim ~= 0 then
      if first and not shapes_agree(ins[first], t) then
        binding.error(string.format("%s: shapes of %s and %s are inconsistent: %s vs %s (each the same, or a scalar)",
          op, names[first], names[i], tostring(ins[first].shape), tostring(t.shape)))
      end
      first = first or i
    end
  end
  return (dispatch.run(BETAINC, nil, ins, 1))
end

return M
