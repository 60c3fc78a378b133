-- bench/linalg.lua — tide.linalg's LAPACK ops: inv, cholesky, qr, svd and eigh
-- of one 256x256 matrix, of a batch of 64 of them, and of a batch of 4096 8x8
-- ones (float32); bench/linalg_torch.py does the same work with torch.linalg.
local tide = require "tide"
local timing = dofile(arg[0]:match("^(.-)[^/]*$") .. "timing.lua")

local L = tide.linalg
local R = tide.random
R.set_seed(1)

-- n x n matrices (a batch of b when given), well conditioned: A A^T / n + I is
-- positive definite, for cholesky and eigh as for the rest.
local function spd(n, b)
  local shape = b and { b, n, n } or { n, n }
  local a = R.normal(shape)
  return tide.matmul(a, a, { transpose_b = true }) / n + L.eye(n)
end

local ops = {
  { "inv", L.inv }, { "cholesky", L.cholesky }, { "qr", function(x) return (L.qr(x)) end },
  { "svd", function(x) return (L.svd(x)) end }, { "eigh", function(x) return (L.eigh(x)) end },
  { "det", L.det },
}
for _, case in ipairs { { "256", spd(256), 3 }, { "256x64", spd(256, 64), 1 }, { "8x4096", spd(8, 4096), 3 } } do
  for _, op in ipairs(ops) do
    local f, x = op[2], case[2]
    timing.emit(op[1] .. "_" .. case[1], timing.measure(function() return f(x) end, case[3], 5) * 1e3, "ms")
  end
end
