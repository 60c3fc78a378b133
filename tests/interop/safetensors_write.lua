-- tests/interop/safetensors_write.lua DIR [check] — writes safetensors files with
-- tide for tests/interop/safetensors_check.py (every dtype with known values in
-- DIR/tide_all.safetensors and its values as JSON, a model's weights, a
-- checkpoint); with "check", reads DIR/python.safetensors (written by the
-- Python side) and compares it with DIR/python.json.
local tide = require "tide"
local dir, mode = arg[1], arg[2]

local function json_value(v)
  if type(v) == "table" then
    local parts = {}
    for i, x in ipairs(v) do parts[i] = json_value(x) end
    return "[" .. table.concat(parts, ",") .. "]"
  elseif type(v) == "boolean" then
    return tostring(v)
  elseif v ~= v then
    return '"nan"'
  elseif v == math.huge then
    return '"inf"'
  elseif v == -math.huge then
    return '"-inf"'
  end
  return string.format("%.17g", v)
end

local function describe_all(tensors)
  local names = {}
  for k in pairs(tensors) do names[#names + 1] = k end
  table.sort(names)
  local parts = {}
  for _, k in ipairs(names) do
    local t = tensors[k]
    parts[#parts + 1] = string.format('"%s":{"dtype":"%s","shape":%s,"values":%s}', k, t.dtype,
      json_value(t.shape:as_list()), json_value(t:reshape({ -1 }):totable()))
  end
  return "{" .. table.concat(parts, ",") .. "}"
end

if mode == "check" then
  local got = tide.safetensors.load_file(dir .. "/python.safetensors")
  local want = io.open(dir .. "/python.json"):read("*a")
  local mine = describe_all(got)
  if mine ~= want then
    io.stderr:write("tide read python.safetensors as\n" .. mine .. "\nbut Python wrote\n" .. want .. "\n")
    os.exit(1)
  end
  local meta = tide.safetensors.load_metadata(dir .. "/python.safetensors")
  assert(meta.writer == "python", "python.safetensors's metadata")
  os.exit(0)
end

local tensors = {
  f32 = tide.tensor({ { 1.5, -2.25, 3 }, { 0, 1e-3, -7 } }, "float32"),
  f32_special = tide.tensor({ math.huge, -math.huge, 0 / 0 }, "float32"),
  f64 = tide.tensor({ math.pi, -1e300, 5e-324 }, "float64"),
  f16 = tide.tensor({ 1, -2.5, 65504 }, "float16"),
  bf16 = tide.tensor({ 1, -2.5, 3.140625 }, "bfloat16"),
  i8 = tide.tensor({ -128, 127, 0 }, "int8"),
  u8 = tide.tensor({ 0, 255, 7 }, "uint8"),
  i32 = tide.tensor({ { -2147483648, 2147483647 }, { 1, -1 } }, "int32"),
  i64 = tide.tensor({ 2 ^ 53, -2 ^ 62, 42 }, "int64"),
  bool = tide.tensor { true, false, true },
  empty = tide.zeros({ 2, 0 }, { dtype = "int64" }),
  scalar = tide.tensor(2.5, "float32"),
  strided = tide.tensor({ { 1, 2, 3 }, { 4, 5, 6 } }, "float32"):transpose(),
}
tide.safetensors.save_file(tensors, dir .. "/tide_all.safetensors", { metadata = { writer = "tide", n = 13 } })
local f = io.open(dir .. "/tide_all.json", "w")
f:write(describe_all(tensors))
f:close()

local model = tide.Sequential { tide.Input { shape = { 3 } }, tide.layers.Dense { 4 }, tide.layers.Dense { 2 } }
model:save_weights(dir .. "/model.safetensors")
local weights = {}
for i, w in ipairs(model.weights) do weights[string.format("%d/%s", i - 1, w.name)] = w:read_value() end
f = io.open(dir .. "/model.json", "w")
f:write(describe_all(weights))
f:close()

local ckpt = tide.train.Checkpoint { model = model, step = tide.Variable(7, { dtype = "int64" }) }
ckpt:save(dir .. "/ckpt")
