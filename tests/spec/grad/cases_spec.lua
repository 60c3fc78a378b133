-- tests/spec/grad/cases_spec.lua — "every differentiable op has a gradient
-- check", enforced: each registry op without TIDE_OPF_NO_GRAD needs a
-- registered gradient and float64 finite-difference cases in
-- tests/support/grad_cases.lua; each case must run its op and pass
-- tests/support/gradcheck.lua (first order, with None dims, second order where asked).
local tide = require "tide"
local binding = require "tide.binding"
local gc = require "gradcheck"
local G = require "grad_cases"
local ffi, C = binding.ffi, binding.C
require "tide.grad" -- the families fill the registry when loaded
local grads = require("tide.grad.registry").fns

-- The registry's op names, in code order.
local function op_names()
  local names = {}
  for op = 0, tonumber(C.TIDE_NUM_OPS) - 1 do names[#names + 1] = ffi.string(C.tide_op_name(op)) end
  return names
end

-- The op codes a tape records while f runs on inputs and while the tape of
-- sum(f) gives its first-order gradients (where a gradient op runs).
local function recorded_ops(f, inputs)
  local outer = tide.GradientTape()
  outer:run(function()
    for _, x in ipairs(inputs) do outer:watch(x) end
    local inner = tide.GradientTape()
    local loss = inner:run(function()
      for _, x in ipairs(inputs) do inner:watch(x) end
      return tide.reduce_sum(f(unpack(inputs)))
    end)
    inner:gradient(loss, inputs)
  end)
  local seen = {}
  for _, node in ipairs(outer._nodes) do
    if node.op then seen[tonumber(node.op)] = true end
  end
  return seen
end

describe("finite-difference cases of the differentiable ops (tests/support/grad_cases.lua)", function()
  it("has cases and a gradient for every differentiable registry op, and only for those", function()
    local wrong = {}
    for op = 0, tonumber(C.TIDE_NUM_OPS) - 1 do
      local name = ffi.string(C.tide_op_name(op))
      if bit.band(C.tide_op_flags(op), C.TIDE_OPF_NO_GRAD) == 0 then
        if not G[name] then
          wrong[#wrong + 1] = "differentiable op '" .. name .. "' has no finite-difference case in " ..
            "tests/support/grad_cases.lua (or flag it TIDE_OPF_NO_GRAD in ops.def)"
        end
        if not grads[op] then
          wrong[#wrong + 1] = "differentiable op '" .. name .. "' has no gradient (register one in stdlib/tide/grad/)"
        end
      elseif G[name] then
        wrong[#wrong + 1] = "op '" .. name .. "' is flagged TIDE_OPF_NO_GRAD but has finite-difference cases"
      end
    end
    for name in pairs(G) do
      if C.tide_op_lookup(name) < 0 then wrong[#wrong + 1] = "grad_cases names no registry op: '" .. name .. "'" end
    end
    table.sort(wrong)
    assert(#wrong == 0, table.concat(wrong, "\n"))
  end)

  for _, name in ipairs(op_names()) do
    if G[name] then
      local code, n = C.tide_op_lookup(name), 0
      G[name](function(label, f, inputs, opts)
        n = n + 1
        local what = name .. (label ~= "" and " [" .. label .. "]" or "")
        it(what, function()
          assert(recorded_ops(f, inputs)[code], what .. ": the case never runs op " .. name)
          if opts and opts.second_only then gc.check_second(f, inputs, opts) else gc.check(f, inputs, opts) end
        end)
      end)
      if n == 0 then it(name, function() error(name .. ": its entry in grad_cases adds no case") end) end
    end
  end
end)
