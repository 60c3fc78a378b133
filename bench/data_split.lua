-- bench/data_split.lua — shard and unbatch per row, in C (kernels/data/split.c)
-- and in the Lua engine (as before their C stage), rows per CPU second of the
-- consumer's thread (os.clock: steadier than wall time on a shared machine),
-- best of 5 passes with no prefetch and no map (the pass is that one thread):
-- unbatch of batches of 256 (rows of one int64, of 4 float32 — both copied —
-- and of 784 float32 — viewed) batched again by 256, and shard(2, 1) of int64 rows.
local tide = require "tide"
local timing = dofile(arg[0]:match("^(.-)[^/]*$") .. "timing.lua")
local D = tide.data.Dataset

local N = 200000
local function lua_from(ds, kind) -- the Lua engine for ds's stages down to the first `kind`
  ds._c_ok = false
  if ds.kind ~= kind then lua_from(ds.input, kind) end
  return ds
end
local small, vec4, big = tide.range(0, N, 1, "int64"), tide.ones({ N, 4 }, "float32"), tide.ones({ 20000, 784 }, "float32")
local cases = {
  { "unbatch_rows_int64", function() return D.from_tensor_slices(small):batch(256):unbatch():batch(256), "unbatch", N end },
  { "unbatch_rows_f32x4", function() return D.from_tensor_slices(vec4):batch(256):unbatch():batch(256), "unbatch", N end },
  { "unbatch_rows_f32x784", function() return D.from_tensor_slices(big):batch(256):unbatch():batch(256), "unbatch", 20000 end },
  { "shard2_rows_int64", function() return D.from_tensor_slices(small):shard(2, 1):batch(256), "shard", N / 2 end },
}
for _, case in ipairs(cases) do
  local name, make = case[1], case[2]
  local best = { c = math.huge, lua = math.huge }
  local want
  for _ = 1, 5 do
    for _, mode in ipairs { "c", "lua" } do -- alternating, so that both see the same machine
      local ds, kind, n = make()
      want = n
      if mode == "lua" then lua_from(ds, kind) end
      collectgarbage()
      local t0 = os.clock()
      local count = 0
      for a in ds:iter { prefetch = false } do count = count + a.shape[1] end
      local dt = os.clock() - t0
      assert(count == want, count)
      if dt < best[mode] then best[mode] = dt end
    end
  end
  timing.emit(name, want / best.c, "rows/cpu-s")
  timing.emit(name .. "_lua_engine", want / best.lua, "rows/cpu-s")
end
