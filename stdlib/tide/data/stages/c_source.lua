-- stdlib/tide/data/stages/c_source.lua — datasets of what a C source reads
-- (TFRecordDataset, TextLineDataset, CsvDataset, tide.data.from_c_source): C under either engine.
--
-- Such a dataset (kind "c_source") holds make_source(), which gives a fresh
-- tide_dataset * each call; data/files.lua, csv.lua and init.lua make them.
local c_engine = require "tide.data.c_engine"

local s = { copyable = true }

function s.c(ds) return ds.make_source() end

-- Only C reads the files: under the Lua engine too, a pass over the source is C's.
function s.lua(ds) return c_engine.open(ds) end

return { stages = { c_source = s } }
