-- tests/interop/summary_write.lua — writes the event file that
-- tests/interop/summary_check.py reads with TensorBoard and TensorFlow:
--   build/tide tests/interop/summary_write.lua DIR
local tide = require "tide"
local S = tide.summary

local dir = assert(arg[1], "usage: summary_write.lua DIR")
local w = S.create_file_writer(dir)
w:as_default(function()
  for step = 0, 9 do
    S.scalar("loss", 1 / (step + 1), { step = step })
    S.scalar("accuracy", step / 10, { step = step, description = "share right" })
  end
  local v = {}
  for i = 0, 999 do v[#v + 1] = ((i * 37) % 101) / 7 - 3 end
  S.histogram("weights", tide.tensor(v, "float64"), { step = 3 })
  S.histogram("weights", tide.tensor(v, "float32") * 2, { step = 4, buckets = 10 })
  S.text("notes", "hello *TensorBoard*", { step = 5 })
  S.text("table", { { "a", "b" }, { "c", "d" } }, { step = 6 })
  local px = {}
  for i = 0, 2 * 8 * 6 * 3 - 1 do px[#px + 1] = (i * 11) % 256 end
  S.image("pictures", tide.tensor(px, "uint8"):reshape { 2, 8, 6, 3 }, { step = 7, max_outputs = 2 })
end)
w:close()
print(w.path)
