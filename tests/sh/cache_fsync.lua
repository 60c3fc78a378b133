-- tests/sh/cache_fsync.lua — writes one cache file through the C engine (a
-- memory-free pipeline: from_tensor_slices -> cache(file)) and, with "lua",
-- through the Lua engine (a generator input); test_cache_fsync.sh traces it.
local tide = require "tide"
local D = tide.data.Dataset
local path, engine = arg[1], arg[2]
local ds
if engine == "lua" then
  ds = D.from_generator(function()
    local i = -1
    return function() i = i + 1; if i < 5 then return tide.tensor(i, "int32") end end
  end, { output_signature = tide.TensorSpec({}, "int32") }):cache(path)
else
  ds = D.from_tensor_slices(tide.tensor({ 1, 2, 3, 4, 5 }, "int32")):cache(path)
end
assert(#ds:totable() == 5)
print("written " .. path)
