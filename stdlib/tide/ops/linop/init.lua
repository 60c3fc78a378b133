-- stdlib/tide/ops/linop/init.lua — tf.linalg's LinearOperator classes by TF's names (tide.linalg.*):
-- the base (base.lua) and one module per family of operators.
local base = require "tide.ops.linop.base"
local full = require "tide.ops.linop.full"
local diag = require "tide.ops.linop.diag"
local wrap = require "tide.ops.linop.wrap"
local kronecker = require "tide.ops.linop.kronecker"
local block = require "tide.ops.linop.block"
local low_rank = require "tide.ops.linop.low_rank"
local circulant = require "tide.ops.linop.circulant"
local structured = require "tide.ops.linop.structured"

local M = { LinearOperator = base.LinearOperator }
for _, mod in ipairs { full, diag, wrap, kronecker, block, low_rank, circulant, structured } do
  for short, cls in pairs(mod) do
    if type(cls) ~= "table" then goto continue end
    M["LinearOperator" .. short] = cls
    cls.__tostring = base.LinearOperator.__tostring -- metamethods are read from the class itself, not inherited
    ::continue::
  end
end
return M
