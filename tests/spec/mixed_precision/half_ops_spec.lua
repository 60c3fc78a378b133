-- tests/spec/mixed_precision/half_ops_spec.lua — float16 and bfloat16 on the CPU:
-- every registry case of tests/support/trace_ops_cases.lua with half inputs gives
-- the float32 computation of the same values rounded once to the half dtype
-- (kernels compute halves in float32, accumulate in float32 and round at the
-- end), and the gradients of the ops a Keras model uses, taken in half
-- precision, are the float64 gradients to within a few half ulps. (The
-- float64 finite-difference checks in tests/spec/grad stay the main ones.)
local tide = require "tide"
local T = require "trace_ops_cases"

local HALF = { float16 = true, bfloat16 = true }
local ULP = { float16 = 2 ^ -10, bfloat16 = 2 ^ -7 }

local function pack(...) return { n = select("#", ...), ... } end

-- Where a half result differs from the rounded float32 one on purpose, as TF's:
-- unique compares half bit patterns (-0 and 0 stay apart), and an empty
-- segment's max/min is the half dtype's lowest/highest finite value, not
-- float32's rounded to infinity.
local AS_TF = {
  unique = { ["float16 specials"] = true, ["bfloat16 specials"] = true },
  unsorted_segment_max = true, unsorted_segment_min = true,
}

local function flat(t) return t:cast("float64"):reshape { -1 }:totable() end

describe("float16 and bfloat16 kernels", function()
  it("give the float32 result rounded once, for every registry case with half inputs", function()
    local names = {}
    for name in pairs(T.cases) do names[#names + 1] = name end
    table.sort(names)
    local checked, exact, total = 0, 0, 0
    for _, name in ipairs(names) do
      T.cases[name](function(label, fn, inputs)
        local dt
        for _, x in ipairs(inputs) do if HALF[x.dtype] then dt = x.dtype end end
        local skip = AS_TF[name] == true or (AS_TF[name] and AS_TF[name][label])
        if not dt or skip then return end
        local wide = {}
        for i, x in ipairs(inputs) do wide[i] = HALF[x.dtype] and x:cast("float32") or x end
        local got, want = pack(fn(unpack(inputs))), pack(fn(unpack(wide)))
        local what = name .. " [" .. label .. "]"
        assert(got.n == want.n, what .. ": result counts differ")
        for i = 1, got.n do
          local g, w = got[i], want[i]
          if HALF[g.dtype] then
            assert(w.dtype == "float32" or w.dtype == g.dtype, what .. ": the float32 run gave " .. w.dtype)
            local gv, wv = flat(g), flat(w:cast(g.dtype))
            assert(#gv == #wv, what .. ": sizes differ")
            for j = 1, #gv do
              local a, b = gv[j], wv[j]
              total = total + 1
              if a == b or (a ~= a and b ~= b) then
                exact = exact + 1
              else -- one half ulp at most (a float32 sum in another order may round the other way)
                local e = math.abs(a - b) / math.max(math.abs(b), 2 ^ -14)
                assert(e <= ULP[g.dtype], string.format("%s, result %d, value %d: %s in %s, %s through float32",
                  what, i, j, tostring(a), g.dtype, tostring(b)))
              end
            end
            checked = checked + 1
          else
            assert(g.dtype == w.dtype or w.dtype == "float32", what .. ": dtypes " .. g.dtype .. " and " .. w.dtype)
          end
        end
      end)
    end
    assert.is_true(checked > 400, "only " .. checked .. " half results checked")
    assert.is_true(exact >= total * 0.99, string.format("%d of %d values exact", exact, total))
  end)

  -- op name -> function of float inputs (of one dtype), and the inputs' shapes
  local f = tide.nn
  local CASES = {
    { "matmul", function(a, b) return tide.matmul(a, b) end, { { 3, 4 }, { 4, 2 } } },
    { "add broadcast (bias)", function(a, b) return a + b end, { { 3, 4 }, { 4 } } },
    { "mul", function(a, b) return a * b end, { { 3, 4 }, { 3, 4 } } },
    { "relu", function(a) return tide.relu(a) end, { { 3, 4 } } },
    { "sigmoid", function(a) return tide.sigmoid(a) end, { { 3, 4 } } },
    { "tanh", function(a) return tide.tanh(a) end, { { 3, 4 } } },
    { "gelu", function(a) return tide.gelu(a) end, { { 3, 4 } } },
    { "softmax", function(a) return f.softmax(a) end, { { 3, 4 } } },
    { "log_softmax", function(a) return f.log_softmax(a) end, { { 3, 4 } } },
    { "sparse xent", function(a) return f.sparse_softmax_cross_entropy_with_logits(tide.tensor { 1, 0, 3 }, a) end,
      { { 3, 4 } } },
    { "reduce_mean", function(a) return tide.reduce_mean(a, 1) end, { { 3, 4 } } },
    { "conv2d", function(x, k) return f.conv2d(x, k, 1, "SAME") end, { { 1, 4, 4, 2 }, { 3, 3, 2, 3 } } },
    { "max_pool2d", function(x) return f.max_pool2d(x, 2, 2, "VALID") end, { { 1, 4, 4, 2 } } },
    { "avg_pool2d", function(x) return f.avg_pool2d(x, 2, 2, "VALID") end, { { 1, 4, 4, 2 } } },
    { "moments", function(x) local m, v = f.moments(x, { 0 }); return m + v end, { { 4, 3 } } },
    { "cast", function(a) return a:cast("float32") * 3 end, { { 3, 4 } } },
  }

  -- Deterministic inputs in [-2, 2], distinct enough that max pooling has no ties.
  local function input(shape, k)
    local n = 1
    for _, d in ipairs(shape) do n = n * d end
    local v = {}
    for i = 1, n do v[i] = math.sin(i * 1.3 + k) * 2 + i * 1e-3 end
    return tide.tensor(v, "float64"):reshape(shape)
  end

  -- The tape's gradients of sum(f(...) * w) (w fixed, in [0.5, 1.5)) in float32, per input.
  local function gradients(fn, xs)
    local tape = tide.GradientTape()
    local loss = tape:run(function()
      for _, x in ipairs(xs) do tape:watch(x) end
      local y = fn(unpack(xs)):cast("float64")
      local w = (tide.range(0, y:size(), 1, "float64") % 7 / 7 + 0.5):reshape(y.shape:as_list())
      return tide.reduce_sum(y * w)
    end)
    return tape:gradient(loss, xs)
  end

  it("take the gradients of Keras's ops to within a few half ulps of float64's", function()
    for _, c in ipairs(CASES) do
      local name, fn, shapes = c[1], c[2], c[3]
      local wide = {}
      for i, s in ipairs(shapes) do wide[i] = input(s, i) end
      for _, dt in ipairs { "float16", "bfloat16" } do
        local xs = {}
        for i, x in ipairs(wide) do xs[i] = x:cast(dt) end
        local want = gradients(fn, (function()
          local r = {}
          for i, x in ipairs(xs) do r[i] = x:cast("float64") end -- the same (rounded) values in float64
          return r
        end)())
        local got = gradients(fn, xs)
        for i = 1, #xs do
          assert(got[i] and got[i].dtype == dt, string.format("%s %s: input %d's gradient is %s", name, dt, i,
            got[i] and got[i].dtype or "missing"))
          local gv, wv = flat(got[i]), flat(want[i])
          local scale = 0
          for _, v in ipairs(wv) do scale = math.max(scale, math.abs(v)) end
          for j = 1, #gv do
            local e = math.abs(gv[j] - wv[j]) / math.max(scale, 1e-3)
            assert(e <= 8 * ULP[dt], string.format("%s %s: gradient %d, value %d: %s, float64 %s (%.1f ulps of max)",
              name, dt, i, j, tostring(gv[j]), tostring(wv[j]), e / ULP[dt]))
          end
        end
      end
    end
  end)
end)
