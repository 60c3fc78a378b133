-- bench/index.lua — the index-driven ops on about a million rows: gather_nd,
-- tensor_scatter_nd_add, where(cond), boolean_mask, unique and the segment
-- sums and maxima; bench/index_torch.py does the same work in PyTorch.
local tide = require "tide"
local timing = dofile(arg[0]:match("^(.-)[^/]*$") .. "timing.lua")

local R = tide.random
R.set_seed(1)
local N, W = 1000000, 16

-- [N, 2] int64 index pairs into a [1000, 1000] float32 matrix.
local params = R.uniform({ 1000, 1000 })
local pairs_ = R.uniform({ N, 2 }, { maxval = 1000, dtype = "int64" })
timing.emit("gather_nd_1m", timing.measure(function() return tide.gather_nd(params, pairs_) end, 5) * 1e3, "ms")

-- 1M rows of 16 floats added into 1000 rows (many repeats).
local rows = R.uniform({ N, 1 }, { maxval = 1000, dtype = "int64" })
local upd, base = R.uniform({ N, W }), tide.zeros { 1000, W }
timing.emit("scatter_nd_add_1m", timing.measure(function() return tide.tensor_scatter_nd_add(base, rows, upd) end, 3)
  * 1e3, "ms")

-- segment sums over sorted ids (1000 segments) and unsorted maxima
local sorted_ids = tide.floordiv(tide.range(N, { dtype = "int64" }), 1000)
local ids = rows:reshape { N }
timing.emit("segment_sum_1m", timing.measure(function() return tide.segment_sum(upd, sorted_ids) end, 3) * 1e3, "ms")
timing.emit("unsorted_segment_sum_1m", timing.measure(function() return tide.unsorted_segment_sum(upd, ids, 1000) end, 3)
  * 1e3, "ms")
timing.emit("unsorted_segment_max_1m", timing.measure(function() return tide.unsorted_segment_max(upd, ids, 1000) end, 3)
  * 1e3, "ms")

-- where(cond) and boolean_mask with half the elements true
local cond = R.uniform({ 10 * N }):lt(0.5)
timing.emit("where_10m", timing.measure(function() return tide.where(cond) end, 3) * 1e3, "ms")
local mask = R.uniform({ N }):lt(0.5)
timing.emit("boolean_mask_1m", timing.measure(function() return tide.boolean_mask(upd, mask) end, 3) * 1e3, "ms")

-- unique over 1M int32 with 10000 distinct values
local vals = R.uniform({ N }, { maxval = 10000, dtype = "int32" })
timing.emit("unique_1m", timing.measure(function() return tide.unique(vals) end, 3) * 1e3, "ms")
