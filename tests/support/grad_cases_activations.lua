-- tests/support/grad_cases_activations.lua — float64 finite-difference cases of Keras 3's activation kernels
-- (ops/activations.lua's and the registry's celu ... tanh_shrink), merged by grad_cases.lua.
-- Each input keeps clear of the kinks (the shrinks' thresholds, sparse_plus's and hard_tanh's +-1).
local tide = require "tide"
local gc = require "gradcheck"

local M = {}
local R = gc.random
local act = tide.activations

local function f64(v) return tide.tensor(v, "float64") end
-- [2, 3] inputs on both sides of +-1 and of +-0.5, contiguous and as a transposed view.
local WIDE = { { -1.7, -0.8, -0.2 }, { 0.3, 0.7, 1.6 } }
local WIDE_T = { { -1.3, 0.35 }, { -0.65, 0.9 }, { 0.1, 1.9 } }

-- op -> list of { label, f, input }
local CASES = {
  celu = {
    { "alpha 1", act.celu, R({ 2, 3 }, -2, 2, 201) },
    { "alpha 0.5, transposed", function(x) return act.celu(x, 0.5) end, R({ 3, 2 }, -2, 2, 202):transpose() },
  },
  hard_shrink = {
    { "threshold 0.5", act.hard_shrink, f64(WIDE) },
    { "threshold 0.25, transposed", function(x) return act.hard_shrink(x, { threshold = 0.25 }) end,
      f64(WIDE_T):transpose() },
  },
  soft_shrink = {
    { "threshold 0.5", act.soft_shrink, f64(WIDE) },
    { "threshold 0.25, transposed", function(x) return act.soft_shrink(x, 0.25) end, f64(WIDE_T):transpose() },
  },
  squareplus = {
    { "b 4", act.squareplus, R({ 2, 3 }, -3, 3, 203) },
    { "b 0.5, transposed", function(x) return act.squareplus(x, { b = 0.5 }) end, R({ 3, 2 }, -3, 3, 204):transpose() },
  },
  sparse_plus = { { "", tide.sparse_plus, f64(WIDE) }, { "transposed", tide.sparse_plus, f64(WIDE_T):transpose() } },
  sparse_sigmoid = {
    { "", tide.sparse_sigmoid, f64(WIDE) }, { "transposed", tide.sparse_sigmoid, f64(WIDE_T):transpose() },
  },
  hard_tanh = { { "", tide.hard_tanh, f64(WIDE) }, { "transposed", tide.hard_tanh, f64(WIDE_T):transpose() } },
  tanh_shrink = {
    { "", tide.tanh_shrink, R({ 2, 3 }, -2, 2, 205) },
    { "transposed", tide.tanh_shrink, R({ 3, 2 }, -2, 2, 206):transpose() },
  },
}
for name, list in pairs(CASES) do
  M[name] = function(add)
    for _, c in ipairs(list) do add(c[1], c[2], { c[3] }, { second_order = name == "celu" or name == "squareplus"
      or name == "tanh_shrink" }) end
  end
end

return M
