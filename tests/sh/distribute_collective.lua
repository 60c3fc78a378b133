-- tests/sh/distribute_collective.lua — under mpirun -np 2 (tests/sh/test_distribute.sh):
-- the all_reduce_sum op across two workers: mixed dtypes and strided inputs
-- through small buckets (one MPI call per bucket), the same traced, and its
-- gradient (the sum over the workers of the upstream gradients), and its
-- refusal on a pipeline thread.
local tide = require "tide"
local D = tide.distribute
local s = D.MultiWorkerMirroredStrategy()
assert(s.num_replicas_in_sync == 2, "run with mpirun -np 2")
local r = s.worker_index

local function expect(want, got, what)
  local w, g = table.concat(want, ","), table.concat(got, ",")
  if w ~= g then error(string.format("worker %d, %s: expected %s, got %s", r, what, w, g), 0) end
end
local function flat(t) return tide.reshape(t, { -1 }):totable() end

-- worker r holds base + 100 r: the sums are 2 base + 100
local function values(n, dt, base)
  local v = {}
  for i = 1, n do v[i] = base + i + 100 * r end
  return tide.tensor(v, dt)
end
local function sums(n, base)
  local v = {}
  for i = 1, n do v[i] = 2 * (base + i) + 100 end
  return v
end

local a = values(10, "float32", 0)
local b = values(5, "float64", 20)
local c = tide.transpose(tide.reshape(values(6, "float32", 40), { 2, 3 })) -- a strided view
local c_sums = flat(tide.transpose(tide.reshape(tide.tensor(sums(6, 40), "float32"), { 2, 3 })))
-- float32: 16 elements, 64 bytes in buckets of 12 -> 6 calls; float64: 40 bytes in buckets of 8 -> 5 calls
local calls = D.collective_calls()
local out = D.all_reduce_sum({ a, b, c }, { bytes_per_pack = 12 })
expect({ 11 }, { D.collective_calls() - calls }, "MPI calls for 6 + 5 buckets")
expect(sums(10, 0), flat(out[1]), "float32 across buckets")
expect(sums(5, 20), flat(out[2]), "float64 across buckets")
expect(c_sums, flat(out[3]), "a strided view")
-- the default bucket: one call per dtype
calls = D.collective_calls()
D.all_reduce_sum { a, b, c }
expect({ 2 }, { D.collective_calls() - calls }, "MPI calls with the default bucket")

-- traced: the same sums, and the same calls at each run
local f = tide.trace(function(x, y, z)
  local o = D.all_reduce_sum({ x, y, z }, { bytes_per_pack = 12 })
  return o[1], o[2], o[3]
end)
for run = 1, 2 do
  calls = D.collective_calls()
  local x, y, z = f(a, b, c)
  expect({ 11 }, { D.collective_calls() - calls }, "MPI calls traced, run " .. run)
  expect(sums(10, 0), flat(x), "traced float32")
  expect(sums(5, 20), flat(y), "traced float64")
  expect(c_sums, flat(z), "traced strided")
end

-- the gradient: loss_r = sum(all_reduce(x) * w_r) on each worker; d loss_r / dx
-- (summed over the workers, as the gradient op does) = w_0 + w_1 = 3 + 7 = 10
local x = tide.tensor({ 1, 2, 3 }, "float64")
local w = r == 0 and 3 or 7
for _, traced in ipairs { false, true } do
  local function grad_of(xv)
    local tape = tide.GradientTape()
    tape:watch(xv)
    local loss = tape:run(function() return tide.reduce_sum(D.all_reduce_sum(xv) * w) end)
    return tape:gradient(loss, xv)
  end
  local g = traced and tide.trace(grad_of)(x) or grad_of(x)
  expect({ 10, 10, 10 }, g:totable(), traced and "traced gradient" or "gradient")
end
-- MPI runs FUNNELED: a graph run on a pipeline thread may not make a collective
local ds = tide.data.Dataset.from_tensor_slices(tide.tensor({ 1, 2 }, "float32"))
  :map(function(v) return D.all_reduce_sum(v) end, { parallel = 2 })
local ok, err = pcall(function() return ds:totable() end)
if ok or not tostring(err):find("collectives run on the thread that joined the world", 1, true) then
  error(string.format("worker %d: a collective on a pipeline thread: expected an error, got %s", r, tostring(err)), 0)
end
print("worker " .. r .. ": ok")
