-- bench/data_more.lua — tide.data's further transformations, input elements/s
-- (median of 5 passes): flat_map captured into C against the same in Lua,
-- window -> flat_map(batch), scan (traced), unique, sample_from_datasets and
-- group_by_window (Lua-engine readers). bench/data_more_peers.py runs them in tf.data.
local tide = require "tide"
local timing = dofile(arg[0]:match("^(.-)[^/]*$") .. "timing.lua")
local D = tide.data.Dataset

-- Input elements per second (n_in) over whole passes giving n_out elements
-- (batched by 1,000 at the end, as the peer script, so that neither side
-- pays a per-element hand-off to its interpreter), median of 5.
local function rate(ds, n_out, n_in)
  local times = {}
  ds = ds:batch(1000)
  for i = 1, 5 do
    collectgarbage()
    local t0 = timing.wall()
    local count = 0
    for b in ds:iter() do count = count + b.shape[1] end
    assert(count == n_out, count)
    times[i] = timing.wall() - t0
  end
  table.sort(times)
  return (n_in or n_out) / times[3]
end

local r = D.range
local N = 100000
timing.emit("flat_map_c", rate(r(2000):flat_map(function(x) return r(x, x + 50) end), N), "elements/s")
timing.emit("flat_map_lua", rate(r(2000):flat_map(function(x) local v = x:item(); return r(v, v + 50) end), N),
  "elements/s")
timing.emit("window8_flat_map_batch", rate(r(20000):window(8, { shift = 1, drop_remainder = true })
  :flat_map(function(w) return w:batch(8) end), 19993, 20000), "elements/s")
timing.emit("scan_cumsum", rate(r(N):scan(tide.constant(0, "int64"), function(s, x) return s + x, s end), N),
  "elements/s")
timing.emit("unique", rate(r(N):map(function(x) return x % 1000 end):unique(), 1000, N), "elements/s")
timing.emit("sample_from_datasets", rate(D.sample_from_datasets({ r(N / 2), r(N / 2) }, { seed = 1 }), N),
  "elements/s")
timing.emit("group_by_window", rate(r(N):group_by_window(function(x) return x % 10 end,
  function(k, w) return w:batch(32) end, { window_size = 32 }):unbatch(), N), "elements/s")
