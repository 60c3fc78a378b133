-- Devices where no GPU is visible (CUDA_VISIBLE_DEVICES set empty before the
-- first device query, so this holds on a GPU machine too): the GPU list is
-- empty, asking for a GPU is a clear error, and the CPU paths work.
local ffi = require "ffi"
ffi.cdef "int setenv(const char *name, const char *value, int overwrite);"
ffi.C.setenv("CUDA_VISIBLE_DEVICES", "", 1)

local tide = require "tide"

local NO_GPU = "no CUDA device visible"

-- The message of the error fn raises (fails when it raises none).
local function message(fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok, "expected an error")
  return tostring(err)
end

describe("devices without a GPU", function()
  it("lists no GPU and one CPU", function()
    assert.are.same({}, tide.config.list_physical_devices("GPU"))
    local cpus = tide.config.list_physical_devices("CPU")
    assert.are.same({ { name = "/physical_device:CPU:0", device_type = "CPU" } }, cpus)
    assert.are.same(cpus, tide.config.list_physical_devices())
    assert.matches("device_type must be", message(tide.config.list_physical_devices, "TPU"))
  end)

  it("refuses cuda:0 in tide.device, naming why, and runs nothing", function()
    local ran = false
    local err = message(tide.device, "cuda:0", function() ran = true end)
    assert.matches(NO_GPU, err, 1, true)
    assert.matches("cuda:0", err, 1, true)
    assert.matches("CUDA_VISIBLE_DEVICES", err, 1, true)
    assert.is_false(ran)
    assert.matches(NO_GPU, message(tide.device, "gpu:0", function() end), 1, true)
    assert.matches(NO_GPU, message(tide.device, "/device:GPU:0", function() end), 1, true)
    assert.matches(NO_GPU, message(tide.device, "/gpu:1", function() end), 1, true)
  end)

  it("takes TF's device names for the CPU", function()
    for _, name in ipairs { "/cpu:0", "CPU:0", "/device:CPU:0", "/physical_device:CPU:0",
      "/job:localhost/replica:0/task:0/device:CPU:0" } do
      assert.are.equal("cpu", tide.device(name, function() return tide.tensor { 1 }.device end), name)
    end
    assert.are.equal("OneDeviceStrategy", tostring(tide.distribute.OneDeviceStrategy("/cpu:0")):match("^%a+"))
    assert.matches("not a device name", message(tide.device, "/tpu:0", function() end), 1, true)
  end)

  it("runs tide.device(\"cpu\", fn) and returns its results", function()
    local a, b = tide.device("cpu", function()
      local t = tide.tensor{1, 2, 3}
      return t.device, (t * 2):totable()
    end)
    assert.are.equal("cpu", a)
    assert.are.same({2, 4, 6}, b)
  end)

  it("leaves the placement as it was when fn fails", function()
    local err = message(tide.device, "cpu", function() error("inside") end)
    assert.matches("inside", err, 1, true)
    assert.are.equal("cpu", tide.tensor{1}.device)
  end)

  it("checks tide.device's arguments", function()
    assert.matches("not a device name", message(tide.device, "tpu:0", function() end), 1, true)
    assert.matches("must be a string", message(tide.device, 0, function() end), 1, true)
    assert.matches("must be a function", message(tide.device, "cpu", 42), 1, true)
  end)

  it("keeps x:to(\"cpu\") and x:cpu() on the same tensor and refuses cuda", function()
    local x = tide.tensor{1.5, 2.5}
    assert.are.equal("cpu", x.device)
    assert.is_true(rawequal(x, x:to("cpu")))
    assert.is_true(rawequal(x, x:cpu()))
    local err = message(x.to, x, "cuda:0")
    assert.matches("to: " .. NO_GPU, err, 1, true)
    assert.matches(NO_GPU, message(x.to, x, "cuda"), 1, true)
    assert.matches("expected a tensor", message(x.to, 3, "cpu"), 1, true)
    assert.matches("expected a tensor", message(x.cpu, "x"), 1, true)
  end)

  it("gives host memory_info as before and refuses a GPU's", function()
    local host = tide.config.memory_info()
    assert.is_number(host.current)
    assert.is_number(tide.config.memory_info("cpu").peak)
    local err = message(tide.config.memory_info, "cuda:0")
    assert.matches("memory_info: " .. NO_GPU, err, 1, true)
  end)

  it("refuses GPU memory settings for a GPU that is not there", function()
    local gpu = { name = "/physical_device:GPU:0", device_type = "GPU" }
    assert.matches(NO_GPU, message(tide.config.set_memory_growth, gpu, true), 1, true)
    assert.matches(NO_GPU, message(tide.config.set_logical_device_configuration, "cuda:0", { memory_limit = 512 }),
      1, true)
    assert.matches(NO_GPU, message(tide.config.set_logical_device_configuration, gpu, { { memory_limit = 512 } }),
      1, true)
    assert.matches("is not a GPU", message(tide.config.set_memory_growth, "cpu", true), 1, true)
  end)

  it("enables and disables TF32 (off by default)", function()
    assert.is_false(tide.config.tensor_float_32_enabled())
    tide.config.enable_tensor_float_32(true)
    assert.is_true(tide.config.tensor_float_32_enabled())
    tide.config.enable_tensor_float_32(false)
    assert.is_false(tide.config.tensor_float_32_enabled())
    assert.matches("expected true or false", message(tide.config.enable_tensor_float_32, 1), 1, true)
  end)
end)
