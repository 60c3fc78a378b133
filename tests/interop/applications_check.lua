-- tests/interop/applications_check.lua DIR — the full-size models apps_gen.py full wrote into DIR
-- (Keras's weights in both layouts, Keras's outputs in full.lua) built by tide.applications,
-- loaded from each file, and compared with Keras's outputs (1e-4, relative to the largest).
local tide = require "tide"
local A = tide.applications
local dir = assert(arg[1], "usage: applications_check.lua DIR")
local E = dofile(dir .. "/full.lua")
local f = require("tide.io.h5").open(dir .. "/full_inputs.h5")
local x = f:read("x")
f:close()

local MAKE = {
  ResNet50 = function(w) -- logits: softmax of random weights saturates
    return A.ResNet50 { weights = w, input_shape = { 64, 64, 3 }, classes = 10, classifier_activation = tide.None }
  end,
  MobileNetV2 = function(w)
    return A.MobileNetV2 { weights = w, input_shape = { 64, 64, 3 }, include_top = false, pooling = "avg" }
  end,
  VGG16 = function(w) return A.VGG16 { weights = w, input_shape = { 64, 64, 3 }, include_top = false } end,
  EfficientNetB0 = function(w)
    return A.EfficientNetB0 { weights = w, input_shape = { 64, 64, 3 }, classes = 10 }
  end,
}
local failed = 0
for _, name in ipairs { "ResNet50", "MobileNetV2", "VGG16", "EfficientNetB0" } do
  for _, file in ipairs { "full_" .. name .. ".weights.h5", "full_" .. name .. "_legacy.h5" } do
    local y = MAKE[name](dir .. "/" .. file):predict(x, { verbose = 0 })
    local want = E[name]
    local shape = y.shape:as_list()
    local got = tide.reshape(y, { 2, -1 }):slice { {}, { 0, 64 } }:totable()
    local worst, scale = 0, 1e-6
    for r = 1, 2 do
      for i, v in ipairs(want.y[r]) do
        scale = math.max(scale, math.abs(v))
        worst = math.max(worst, math.abs(v - got[r][i]))
      end
    end
    local ok = table.concat(shape, ",") == table.concat(want.shape, ",") and worst <= 1e-4 * math.max(1, scale)
    print(string.format("%-16s %-34s shape %s, largest difference %.3g (values up to %.3g): %s", name, file,
      table.concat(shape, "x"), worst, scale, ok and "ok" or "FAIL"))
    if not ok then failed = failed + 1 end
  end
end
if failed > 0 then
  io.stderr:write(failed .. " models differ from Keras's\n")
  os.exit(1)
end
