-- tests/spec/utils/keras_utils_small_spec.lua — tide.utils.Progbar byte for byte against Keras 3 on a fake clock
-- (tests/fixtures/keras_utils/gen_progbar.py), the interactive logging switches, Config, standardize_dtype; errors.
local tide = require "tide"
local json = require "tide.json"
local progbar = require "tide.models.progbar"
local U = tide.utils

local function err(pattern, fn, ...)
  local ok, e = pcall(fn, ...)
  assert.is_false(ok, "expected an error matching " .. pattern)
  assert.matches(pattern, tostring(e), 1, true)
end

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

-- Runs fn with progbar's clock faked as the generator's (each reading 0.25 s after the last).
local function with_fake_clock(fn)
  local real, t = progbar.now, -0.25
  progbar.now = function() t = t + 0.25; return t end
  local ok, e = pcall(fn)
  progbar.now = real
  if not ok then error(e, 0) end
end

describe("tide.utils.Progbar", function()
  local cases = json.decode(read("tests/fixtures/keras_utils/progbar.json"), "progbar.json")
  for i, case in ipairs(cases) do
    it("writes Keras 3's bytes, case " .. i, function()
      local out = {}
      with_fake_clock(function()
        local c = case.ctor
        local target = c.target
        if target == tide.None then target = nil end
        local bar = progbar.new { target = target, width = c.width, verbose = c.verbose, interval = c.interval,
          stateful_metrics = c.stateful_metrics, stateless_metrics = c.stateless_metrics, unit_name = c.unit_name,
          dynamic = true, write = function(s) out[#out + 1] = s end }
        for _, step in ipairs(case.steps) do
          local a = step[2]
          if step[1] == "update" then bar:update(a[1], a[2], a[3]) else bar:add(a[1], a[2]) end
        end
      end)
      assert.are.equal(case.out, table.concat(out))
    end)
  end

  it("is made as Keras's Progbar(target, {...}) and checks its arguments", function()
    local bar = U.Progbar(10, { width = 5, verbose = 0 })
    assert.are.equal(10, bar.target)
    assert.are.equal(5, bar.width)
    assert.is_nil(U.Progbar { target = false }.target)
    assert.are.equal(2, U.Progbar { 7, verbose = 2 }.verbose)
    err("Progbar: target must be a non-negative number", U.Progbar, "ten")
    err("Progbar: verbose must be 0, 1 or 2", U.Progbar, 3, { verbose = 5 })
    err("Progbar: width must be a non-negative number", U.Progbar, 3, { width = "w" })
    err("Progbar: stateful_metrics must be a list of metric names", U.Progbar, 3, { stateful_metrics = "acc" })
    err("Progbar: only one of stateful_metrics and stateless_metrics", U.Progbar, 3,
      { stateful_metrics = {}, stateless_metrics = {} })
    err("Progbar: unit_name must be a string", U.Progbar, 3, { unit_name = 1 })
    err("Progbar: unknown", U.Progbar, 3, { colour = 1 })
    err("Progbar.update: current must be a number", function() bar:update("x") end)
    err("Progbar.update: values must be a list", function() bar:update(1, 5) end)
    err("Progbar.update: each value must be {name, value}", function() bar:update(1, { { 1, 2 } }) end)
    err("Progbar.add: n must be a number", function() bar:add(nil) end)
  end)

  it("takes 0-d tensors as values", function()
    local out = {}
    local bar = progbar.new { target = 2, verbose = 2, write = function(s) out[#out + 1] = s end }
    bar:update(2, { { "loss", tide.constant(0.25) } })
    assert.truthy(out[1]:match(" %- loss: 0%.2500\n$"), out[1])
  end)
end)

describe("interactive logging", function()
  local TIDE = (os.getenv("BUILD") or "build") .. "/tide"
  local function run(code)
    local p = io.popen(TIDE .. " -e '" .. code .. "' | cat")
    local s = p:read("*a")
    p:close()
    return s
  end

  it("is on by default and switched by disable/enable", function()
    assert.is_true(U.is_interactive_logging_enabled())
    U.disable_interactive_logging()
    assert.is_false(U.is_interactive_logging_enabled())
    U.enable_interactive_logging()
    assert.is_true(U.is_interactive_logging_enabled())
  end)

  it("silences fit's progress output and Progbar while off", function()
    local fit = [[local tide = require "tide"
      local m = tide.Sequential { tide.Input { shape = { 2 } }, tide.layers.Dense { 1 } }
      m:compile { optimizer = "sgd", loss = "mse" }
      local x, y = tide.ones { 8, 2 }, tide.ones { 8, 1 }
      %s
      m:fit(x, y, { epochs = 2, batch_size = 4, verbose = 1 })
      tide.utils.Progbar(2):update(2)
      io.write("end")]]
    local on = run(fit:format(""))
    assert.truthy(on:find("Epoch 2/2", 1, true), on)
    assert.truthy(on:find("2/2", 1, true), on)
    assert.are.equal("end", run(fit:format("tide.utils.disable_interactive_logging()")))
  end)
end)

describe("tide.utils.Config", function()
  it("holds values as fields and keys, iterates sorted, and serializes", function()
    local c = U.Config { learning_rate = 0.1, momentum = 0.9 }
    c.use_ema = true
    c["seed"] = 123
    assert.are.equal(0.1, c.learning_rate)
    assert.are.equal(123, c.seed)
    assert.are.equal(4, c:len())
    assert.are.same({ "learning_rate", "momentum", "seed", "use_ema" }, c:keys())
    assert.are.same({ 0.1, 0.9, 123, true }, c:values())
    local seen = {}
    for k, v in c:items() do seen[#seen + 1] = k .. "=" .. tostring(v) end
    assert.are.same({ "learning_rate=0.1", "momentum=0.9", "seed=123", "use_ema=true" }, seen)
    assert.are.same({ learning_rate = 0.1, momentum = 0.9, seed = 123, use_ema = true }, c:as_dict())
    assert.are.same({ learning_rate = 0.1, momentum = 0.9, seed = 123, use_ema = true },
      json.decode(c:to_json(), "to_json"))
    assert.are.equal(7, c:get("missing", 7))
    assert.is_true(c:contains("seed"))
    assert.are.equal(123, c:pop("seed"))
    assert.are.equal(0, c:pop("seed", 0))
    c:update { momentum = 0.5 }
    assert.are.equal(0.5, c.momentum)
    assert.truthy(tostring(c):find("<Config ", 1, true))
  end)

  it("freezes", function()
    local c = U.Config()
    c.optimizer = "adam"
    c:freeze()
    assert.is_true(c.frozen)
    err("Config: cannot mutate attribute(s) because the config is frozen", function() c.foo = "bar" end)
    err("Config: cannot mutate", function() c:pop("optimizer") end)
    err("Config: cannot mutate", function() c:update { a = 1 } end)
    assert.are.equal("adam", c.optimizer)
    c:unfreeze()
    c.foo = "bar"
    assert.are.equal("bar", c.foo)
  end)

  it("names what is wrong", function()
    local c = U.Config { learning_rate = 0.1 }
    err("Config: unknown attribute 'learning_rat'. Did you mean 'learning_rate'?", function() return c.learning_rat end)
    err("Config: unknown attribute 'zzz'.", function() return c.zzz end)
    err("Config: keys must be strings, got number", function() c[1] = 2 end)
    err("Config: 'freeze' is a method of Config", function() c.freeze = 1 end)
    err("Config: 'keys' is a method of Config", U.Config, { keys = 1 })
    err("Config: expects a table of named values, got number", U.Config, 5)
    err("Config: pop: no key 'nope'", function() c:pop("nope") end)
    err("Config: update expects a table", function() c:update(3) end)
  end)
end)

describe("tide.utils.standardize_dtype", function()
  it("names dtypes as Keras 3 does", function()
    assert.are.equal("float32", U.standardize_dtype(nil))
    assert.are.equal("int8", U.standardize_dtype(tide.int8))
    assert.are.equal("bfloat16", U.standardize_dtype("bfloat16"))
    assert.are.equal("uint32", U.standardize_dtype("uint32"))
    assert.are.equal("int64", U.standardize_dtype("int"))
    assert.are.equal("float64", U.standardize_dtype(tide.ones({ 2 }, "float64").dtype))
  end)
  it("refuses what is not a Keras dtype", function()
    err("standardize_dtype: invalid dtype: float", U.standardize_dtype, "float")
    err("standardize_dtype: invalid dtype: 5", U.standardize_dtype, 5)
  end)
end)

describe("tide.utils.array_to_img", function()
  local cases = json.decode(read("tests/fixtures/keras_utils/array_to_img.json"), "array_to_img.json")
  for i, case in ipairs(cases) do
    it("gives Keras's (PIL's) pixels, case " .. i, function()
      local img = U.array_to_img(tide.tensor(case.x, "float32"), case.opts)
      local want = case.pixels
      if case.mode == "L" or case.mode == "I" then -- PIL's one-channel images are [h, w]; tide keeps [h, w, 1]
        assert.are.same({ #want, #want[1], 1 }, img.shape)
        img = img:reshape { #want, #want[1] }
      end
      assert.are.equal(case.mode == "I" and "int32" or "uint8", img.dtype)
      assert.are.same(want, img:totable())
    end)
  end

  it("gives an image save_img writes and load_img reads back", function()
    local img = U.array_to_img(tide.tensor({ { { 0, 0, 0 }, { 255, 128, 1 } } }, "float32"), { scale = false })
    local path = os.tmpname() .. ".png"
    U.save_img(path, img, { scale = false })
    assert.are.same(img:totable(), U.load_img(path):totable())
    os.remove(path)
  end)

  it("names what is wrong", function()
    err("array_to_img: expected image array to have rank 3", U.array_to_img, tide.ones { 2, 2 })
    err("array_to_img: unsupported channel number: 2", U.array_to_img, tide.ones { 2, 2, 2 })
    err("array_to_img: data_format must be", U.array_to_img, tide.ones { 2, 2, 3 }, { data_format = "nhwc" })
    err("array_to_img: unknown option", U.array_to_img, tide.ones { 2, 2, 3 }, { mode = "RGB" })
  end)
end)
