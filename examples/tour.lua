-- examples/tour.lua — an eager tour of tide's tensor API (what `make demo`
-- runs until training lands). Run it: build/tide examples/tour.lua
local tide = require "tide"

local function section(title) print("\n== " .. title .. " ==") end

section("Tensors from Lua values")
local a = tide.tensor{{1, 2}, {3, 4}}           -- integers -> int32, as in TF
local b = tide.tensor({{0.5, 1.5}, {2.5, 3.5}}) -- fractions -> float32
print(a)
print(b)
print("shape", a.shape, "dtype", a.dtype, "ndim", a.ndim, "size", a:size())

section("Arithmetic broadcasts; Lua numbers take the tensor's dtype")
print(a * 10 + tide.tensor{1, 2})
print(b / 2)
print("mixing dtypes is an error that says what to do:")
print(select(2, pcall(function() return a + b end)))
print(a:cast("float32") + b)

section("Elementwise math and comparisons")
local x = tide.linspace(-2, 2, 5)
print(x)
print("relu   ", tide.relu(x))
print("sigmoid", tide.sigmoid(x))
print("x > 0  ", x:gt(0))
print("where  ", tide.where(x:gt(0), x, 0))

section("Reductions")
local m = tide.reshape(tide.range(12), {3, 4}):cast("float32")
print(m)
print("sum        ", tide.reduce_sum(m))
print("sum axis 0 ", m:sum{axis = 0})
print("mean axis 1", tide.reduce_mean(m, 1, true))
print("argmax     ", tide.argmax(m, 1))
print("top_k      ", (tide.top_k(m[0], 2)))

section("Shapes and views (no copies)")
local t = m:transpose()
print("transpose", t.shape, "row 1 of m:", m[1], "column 1:", m:slice{{}, 1})
local parts = tide.split(m, 2, 1)
print("split into", #parts, "parts of shape", parts[1].shape)
print("concat back", tide.concat(parts, 1).shape)
m[0][0] = 100                                   -- writes go through views
print("after m[0][0] = 100, t[0][0] =", t[0][0]:item())

section("Matrix multiply (OpenBLAS)")
local w = tide.random.normal({4, 2}, {seed = 1})
print(tide.matmul(m, w))

section("Random numbers are reproducible")
tide.random.set_seed(42)
local r1 = tide.random.uniform({3})
tide.random.set_seed(42)
local r2 = tide.random.uniform({3})
print(r1, r2)
print("equal:", tide.reduce_all(tide.equal(r1, r2)):item())

section("Gradients: GradientTape")
local v = tide.Variable(3.0, {name = "v"})
local tape = tide.GradientTape()
local y = tape:run(function() return v ^ 2 + 2 * v - 5 end)
print("y =", y:item(), "dy/dv =", tape:gradient(y, v):item())   -- 10 and 8

section("tide.trace: a Lua function as a graph that runs in C")
local step = tide.trace(function(x, w)
  local inner = tide.GradientTape()
  local loss = inner:run(function() return tide.reduce_mean((tide.matmul(x, w) - 1) ^ 2) end)
  w:assign_sub(0.1 * inner:gradient(loss, w))   -- the backward pass is part of the graph
  return loss
end)
local xs = tide.random.normal({8, 4}, {seed = 2})
local wv = tide.Variable(tide.zeros{4, 1}, {name = "w"})
for i = 1, 50 do
  local loss = step(xs, wv)
  if i == 1 or i == 50 then print(string.format("step %d: loss %.4f", i, loss:item())) end
end
print("traced", step:trace_count(), "time(s); its graph:")
print(step:get_concrete_function(xs, wv).graph)

section("Memory")
local info = tide.config.memory_info()
print(string.format("tensors hold %d bytes now (peak %d)", info.current, info.peak))
print("threads:", tide.config.get_num_threads())
