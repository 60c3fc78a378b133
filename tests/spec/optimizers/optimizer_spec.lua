-- tests/spec/optimizers/optimizer_spec.lua — the Optimizer API: learning_rate (a
-- Variable, settable), iterations, variables and slots, apply/apply_gradients with
-- nil gradients, minimize, weight-decay exclusions, configs and get by name, and
-- the errors. (Update math: keras_fixtures_spec.lua; traced steps: traced_spec.lua.)
local tide = require "tide"
local h = require "helpers"
local O = tide.optimizers

local function f32(t) return tide.tensor(t, "float32") end

-- h.close for Variables too.
local function close(actual, expected, tol)
  if tide.is_variable(actual) then actual = actual:numpy() end
  return h.close(actual, expected, tol)
end

-- What fn writes on io.stderr, and its results.
local function capture_stderr(fn)
  local saved, out = io.stderr, {}
  io.stderr = { write = function(_, ...) for _, s in ipairs { ... } do out[#out + 1] = s end end }
  local ok, err = pcall(fn)
  io.stderr = saved
  if not ok then error(err, 0) end
  return table.concat(out)
end

describe("Optimizer", function()
  it("keeps a number learning_rate in a float32 Variable that can be read and set", function()
    local opt = O.SGD { learning_rate = 0.5 }
    assert.is_true(tide.is_variable(opt.learning_rate))
    assert.are.equal("float32", opt.learning_rate.dtype)
    assert.are.equal(0.5, opt.learning_rate:item())
    opt.learning_rate = 0.25
    assert.are.equal(0.25, opt.learning_rate:item())
    opt.learning_rate = tide.tensor(0.125, "float64")
    assert.are.equal(0.125, opt.learning_rate:item())
    local w = tide.Variable({ 1, 2 }, { name = "w" })
    opt:apply_gradients { { f32 { 1, 1 }, w } }
    close(w, { 0.875, 1.875 })
    assert.are.equal(0.125, opt:get_config().learning_rate)
  end)

  it("evaluates a schedule or a function of the step at iterations", function()
    local sched = O.schedules.PiecewiseConstantDecay({ 0 }, { 1.0, 0.5 })
    local opt = O.SGD { learning_rate = sched }
    assert.are.equal(1, opt.learning_rate:item())
    local w = tide.Variable({ 0 }, { name = "w" })
    opt:apply_gradients { { f32 { 1 }, w } }
    assert.are.equal(0.5, opt.learning_rate:item())
    opt:apply_gradients { { f32 { 1 }, w } }
    close(w, { -1.5 })
    assert.are.equal(1, #opt.variables) -- iterations only: no learning-rate Variable
    h.errors("SGD: this optimizer was created with a schedule or a function as its learning_rate, so its " ..
      "learning rate cannot be set to a number", function() opt.learning_rate = 0.1 end)

    local seen
    local by_step = O.SGD { learning_rate = function(step)
      seen = step
      return tide.cast(step + 1, "float32") * 0.1
    end }
    local v = tide.Variable({ 0 }, { name = "v" })
    by_step:apply_gradients { { f32 { 1 }, v } }
    by_step:apply_gradients { { f32 { 1 }, v } }
    assert.are.equal(by_step.iterations, seen)
    close(v, { -0.3 })
    local constant = O.SGD { learning_rate = function() return 0.5 end } -- Keras calls it with no step
    constant:apply_gradients { { f32 { 2 }, v } }
    close(v, { -1.3 })
  end)

  it("can change from a number to a schedule, and the Variable leaves `variables`", function()
    local opt = O.Adam()
    assert.are.equal(2, #opt.variables)
    opt.learning_rate = O.schedules.ExponentialDecay(0.1, 1, 0.5)
    assert.are.equal(1, #opt.variables)
    close({ opt.learning_rate:item() }, { 0.1 })
  end)

  it("counts iterations in an int64 Variable and returns it from apply_gradients", function()
    local opt = O.Adagrad()
    local w = tide.Variable({ 1, 2 }, { name = "w" })
    assert.are.equal("int64", opt.iterations.dtype)
    assert.are.equal("iteration", opt.iterations.name)
    for i = 1, 3 do
      assert.are.equal(opt.iterations, opt:apply_gradients { { f32 { 1, 1 }, w } })
      assert.are.equal(i, opt.iterations:item())
    end
  end)

  it("builds slots eagerly, named after their variables, listed in Keras's order", function()
    local opt = O.Adam { amsgrad = true }
    local a, b = tide.Variable({ 1, 2 }, { name = "a" }), tide.Variable(3, { name = "b", dtype = "float64" })
    assert.is_false(opt.built)
    opt:build { a, b }
    assert.is_true(opt.built)
    local names = {}
    for i, v in ipairs(opt.variables) do names[i] = v.name end
    assert.are.same({ "iteration", "learning_rate", "a_momentum", "a_velocity", "b_momentum", "b_velocity",
                      "a_velocity_hat", "b_velocity_hat" }, names)
    assert.are.equal("float64", opt:get_slot(b, "velocity").dtype)
    assert.are.same({ 2 }, opt:get_slot(a, "momentum").shape:as_list())
    assert.is_false(opt:get_slot(a, "momentum").trainable)
    assert.is_nil(opt:get_slot(a, "nothing"))
    opt:build { a, b } -- again: nothing new
    assert.are.equal(8, #opt.variables)
    local c = tide.Variable({ 0 }, { name = "c" })
    opt:build { c } -- a new variable gets its slots (Keras would refuse it)
    assert.are.equal(11, #opt.variables)
    local ada = O.Adagrad { initial_accumulator_value = 0.25 }
    ada:build { a }
    close(ada:get_slot(a, "accumulator"), { 0.25, 0.25 })
  end)

  it("apply(grads, vars) takes the lists tape:gradient gives, nil holes included", function()
    local w, u = tide.Variable({ 1, 2 }, { name = "w" }), tide.Variable({ 5 }, { name = "u" })
    local tape = tide.GradientTape()
    local loss = tape:run(function() return tide.reduce_sum(w * w) end)
    local grads = tape:gradient(loss, { w, u })
    assert.is_nil(grads[2])
    local opt = O.SGD { learning_rate = 0.5 }
    local text = capture_stderr(function() opt:apply(grads, { w, u }) end)
    assert.truthy(text:find("gradients do not exist for variables {'u'}", 1, true))
    close(w, { 0, 0 })
    close(u, { 5 })
    opt:apply { f32 { 1, 1 }, f32 { 1 } } -- without variables: those it was built with
    close(w, { -0.5, -0.5 })
    close(u, { 4.5 })
  end)

  it("warns once per set of variables without gradients, and refuses a step with none", function()
    local opt = O.SGD()
    local w, u = tide.Variable({ 1 }, { name = "w" }), tide.Variable({ 1 }, { name = "u" })
    local text = capture_stderr(function()
      for _ = 1, 3 do opt:apply_gradients { { f32 { 1 }, w }, { nil, u } } end
    end)
    local _, count = text:gsub("gradients do not exist", "")
    assert.are.equal(1, count)
    assert.are.equal(3, opt.iterations:item())
    h.errors("SGD: no gradients provided for any variable", opt.apply_gradients, opt, { { nil, w }, { nil, u } })
    assert.are.equal(3, opt.iterations:item())
    opt:apply_gradients {} -- nothing to do: no step, as Keras
    assert.are.equal(3, opt.iterations:item())
  end)

  it("minimize runs a loss function under a tape, or takes a tensor and its tape", function()
    local w = tide.Variable({ 3 }, { name = "w" })
    local opt = O.SGD { learning_rate = 0.25 }
    assert.are.equal(opt.iterations, opt:minimize(function() return tide.reduce_sum(w * w) end, { w }))
    close(w, { 1.5 })
    local tape = tide.GradientTape()
    local loss = tape:run(function() return tide.reduce_sum(w * w) end)
    opt:minimize(loss, function() return { w } end, { tape = tape })
    close(w, { 0.75 })
    h.errors("SGD: minimize: a tape is required when loss is a tensor", opt.minimize, opt, loss, { w })
    h.errors("SGD: minimize: loss must be a function or a tensor, got 3 (number)", opt.minimize, opt, 3, { w })
    h.errors("SGD: minimize: unknown option 'tap'", opt.minimize, opt, function() return w * 1 end, { w },
      { tap = tape })
  end)

  it("applies weight decay except to the variables excluded by list or name", function()
    local opt = O.SGD { learning_rate = 0.5, weight_decay = 0.5 }
    local kernel = tide.Variable({ 4 }, { name = "dense_kernel" })
    local bias = tide.Variable({ 4 }, { name = "dense_bias" })
    local other = tide.Variable({ 4 }, { name = "other" })
    opt:exclude_from_weight_decay { var_list = { other }, var_names = { "bias" } }
    opt:apply_gradients { { f32 { 0 }, kernel }, { f32 { 0 }, bias }, { f32 { 0 }, other } }
    close(kernel, { 3 })
    close(bias, { 4 })
    close(other, { 4 })
    h.errors("SGD: exclude_from_weight_decay can only be configured before the optimizer is built",
      opt.exclude_from_weight_decay, opt, { var_names = { "x" } })
  end)

  it("clips with clipnorm to a zero gradient without NaN (Keras's two-sided where)", function()
    local w = tide.Variable({ 1, 1 }, { name = "w" })
    O.SGD { clipnorm = 1 }:apply_gradients { { f32 { 0, 0 }, w } }
    close(w, { 1, 1 })
  end)

  it("updates float64 and float16 variables in their dtype", function()
    local w = tide.Variable(tide.tensor({ 1, 2 }, "float16"), { name = "w" })
    O.SGD { learning_rate = 0.5, momentum = 0.5 }:apply_gradients { { tide.tensor({ 1, -1 }, "float16"), w } }
    assert.are.equal("float16", w.dtype)
    close(w, { 0.5, 2.5 }, 1e-3)
    local d = tide.Variable(tide.tensor({ 1 }, "float64"), { name = "d" })
    O.SGD { learning_rate = 0.5 }:apply_gradients { { f32 { 1 }, d } } -- the gradient is cast, as Keras
    close(d, { 0.5 }, 1e-12)
  end)
end)

describe("optimizer configs and lookup", function()
  it("get_config and from_config make the same optimizer, schedules included", function()
    local sched = O.schedules.CosineDecay { initial_learning_rate = 0.1, decay_steps = 10, warmup_target = 0.2,
                                           warmup_steps = 2 }
    for _, opt in ipairs { O.RMSprop { learning_rate = 0.5, centered = true, clipvalue = 2, name = "r" },
                           O.Nadam { learning_rate = sched, global_clipnorm = 1 },
                           O.AdamW { weight_decay = 0.1, amsgrad = true } } do
      local cfg = opt:get_config()
      local cls = O[opt.__name]
      local again = cls.from_config(cfg)
      local cfg2 = again:get_config()
      assert.are.same(cfg, cfg2)
      assert.are.same(cfg2, cls:from_config(cfg2):get_config())
      if type(cfg.learning_rate) == "table" then assert.are.equal("CosineDecay", cfg.learning_rate.class_name) end
    end
    assert.are.equal("r", O.RMSprop { name = "r" }:get_config().name)
  end)

  it("get finds optimizers by name (any case), config or instance", function()
    local adam = O.get("adam")
    assert.are.equal("Adam", adam.__name)
    assert.are.equal("RMSprop", O.get("RMSprop").__name)
    assert.are.equal("SGD", O.get("sgd").__name)
    for _, name in ipairs { "adamw", "adamax", "nadam", "adagrad", "adadelta" } do
      assert.are.equal(name, O.get(name).__name:lower())
    end
    assert.are.equal(adam, O.get(adam))
    assert.is_nil(O.get(nil))
    local sgd = O.get { class_name = "SGD", config = { learning_rate = 0.5, momentum = 0.5 } }
    assert.are.equal(0.5, sgd.momentum)
    local ser = O.serialize(sgd)
    assert.are.equal("SGD", ser.class_name)
    assert.are.same(sgd:get_config(), ser.config)
    assert.are.equal(0.5, O.deserialize(ser).learning_rate:item())
    assert.is_true(O.is_optimizer(sgd))
    assert.is_false(O.is_optimizer({}))
    h.errors("optimizers: unknown optimizer 'adm' (known: adadelta, adafactor, adagrad, adam, adamax, adamw, ftrl, " ..
      "lamb, lion, muon, nadam, rmsprop, schedulefreeadamw, sgd)", O.get, "adm")
    h.errors("optimizers.get: could not interpret the optimizer identifier 3 (number)", O.get, 3)
    h.errors("optimizers.serialize: expects an optimizer", O.serialize, {})
  end)

  it("takes positional values in Keras's order, and list entries in the options", function()
    local a = O.Adam(0.01, 0.8)
    assert.are.equal(0.8, a.beta_1)
    local b = O.Adam { 0.02, 0.7, epsilon = 1e-3 }
    assert.are.equal(0.7, b.beta_1)
    assert.are.equal(1e-3, b.epsilon)
    close({ b.learning_rate:item() }, { 0.02 })
    assert.are.equal(0.5, O.AdamW(0.01, 0.5).weight_decay) -- AdamW's second argument, as Keras
    assert.are.equal("<tide.optimizers.Adam 'x'>", tostring(O.Adam { name = "x" }))
  end)
end)

describe("optimizer errors", function()
  local w = tide.Variable({ 1, 2, 3 }, { name = "w" })

  it("name a bad learning_rate", function()
    h.errors("Adam: learning_rate must be a number, a schedule (tide.optimizers.schedules.*) or a function of " ..
      "the step, got the string \"fast\"", O.Adam, { learning_rate = "fast" })
    h.errors("(pass a Lua number, e.g. x:item())", O.SGD, { learning_rate = tide.tensor(0.1) })
    h.errors("RMSprop: learning_rate must be a number", O.RMSprop, { learning_rate = true })
    local opt = O.SGD()
    h.errors("SGD: learning_rate must be a number", function() opt.learning_rate = "x" end)
    local bad = O.SGD { learning_rate = function() return "x" end }
    h.errors("SGD: the learning_rate function returned the string \"x\"", bad.apply_gradients, bad,
      { { f32 { 1, 1, 1 }, w } })
  end)

  it("name bad arguments", function()
    h.errors("Adam: unknown option 'beta1' (expected: learning_rate, beta_1, beta_2", O.Adam, { beta1 = 0.9 })
    h.errors("SGD: momentum must be a number between 0 and 1, got 1.5", O.SGD, { momentum = 1.5 })
    h.errors("SGD: nesterov must be true or false, got 1", O.SGD, { nesterov = 1 })
    h.errors("Adam: epsilon must be a number, got the string \"1e-7\"", O.Adam, { epsilon = "1e-7" })
    h.errors("Adam: only one of clipnorm, clipvalue and global_clipnorm can be set", O.Adam,
      { clipnorm = 1, clipvalue = 1 })
    h.errors("SGD: clipnorm must be a number >= 0, got -1", O.SGD, { clipnorm = -1 })
    h.errors("Adagrad: name must be a string, got 3 (number)", O.Adagrad, { name = 3 })
    h.errors("SGD: expected at most", O.SGD, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14)
    h.errors("SGD: ema_momentum must be a number between 0 and 1, got 1.5", O.SGD, { use_ema = true,
      ema_momentum = 1.5 })
    h.errors("Adam: ema_overwrite_frequency must be an integer >= 1 or nil, got 0", O.Adam, { use_ema = true,
      ema_overwrite_frequency = 0 })
    h.errors("Adam: use_ema must be true or false, got 1", O.Adam, { use_ema = 1 })
  end)

  it("name a gradient whose shape is not its variable's", function()
    local opt = O.Adam()
    h.errors("Adam: the gradient for variable 'w' (float32, shape (3,)) (pair 1) has shape (2,); it must have " ..
      "the variable's shape", opt.apply_gradients, opt, { { f32 { 1, 2 }, w } })
    h.errors("has shape (1, 3)", opt.apply_gradients, opt, { { f32 { { 1, 2, 3 } }, w } })
    h.errors("has shape ()", opt.apply_gradients, opt, { { f32(1), w } })
    assert.are.equal(0, opt.iterations:item())
    close(w, { 1, 2, 3 })
  end)

  it("name pairs without a Variable, non-float variables and non-tensor gradients", function()
    local opt = O.SGD()
    h.errors("SGD: pair 1 is a tensor where a tide.Variable is due", opt.apply_gradients, opt,
      { { f32 { 1 }, f32 { 1 } } })
    h.errors("SGD: pair 2 is nil (nil) where a tide.Variable is due", opt.apply_gradients, opt,
      { { f32 { 1, 1, 1 }, w }, { f32 { 1 } } })
    local n = tide.Variable({ 1, 2 }, { dtype = "int32", name = "n" })
    h.errors("SGD: pair 1 is the int32 variable 'n'; optimizers update float variables only", opt.apply_gradients,
      opt, { { tide.tensor { 1, 1 }, n } })
    h.errors("SGD: the gradient for variable 'w' (float32, shape (3,)) (pair 1) is the string \"g\"; it must be " ..
      "a tensor", opt.apply_gradients, opt, { { "g", w } })
    h.errors("SGD: the gradient for variable 'w' (float32, shape (3,)) (pair 1) is a int32 tensor; gradients " ..
      "must be float", opt.apply_gradients, opt, { { tide.tensor { 1, 2, 3 }, w } })
    h.errors("SGD: apply_gradients: pair 1 is 3 (number); each entry must be a {gradient, variable} table",
      opt.apply_gradients, opt, { 3 })
    h.errors("SGD: apply_gradients expects a list of {gradient, variable} pairs, got a Variable",
      opt.apply_gradients, opt, w)
    h.errors("SGD: build expects a list of Variables", opt.build, opt, w)
    h.errors("SGD: apply without variables needs a built optimizer", O.SGD().apply, O.SGD(), { f32 { 1 } })
  end)
end)

describe("use_ema", function()
  it("fit leaves the moving averages in the weights at its end (Keras's finalize_variable_values)", function()
    tide.random.set_seed(4)
    local model = tide.Sequential { tide.Input { shape = { 3 } }, tide.layers.Dense { 1 } }
    local opt = tide.optimizers.SGD { learning_rate = 0.1, use_ema = true, ema_momentum = 0.5 }
    model:compile { optimizer = opt, loss = "mse" }
    model:fit(tide.random.normal { 16, 3 }, tide.random.normal { 16, 1 }, { epochs = 2, batch_size = 4,
      verbose = 0, shuffle = false })
    local kernel = model.layers[1].kernel
    assert.are.same(kernel:numpy(), opt:get_slot(kernel, "average"):numpy())
    assert.is_true(opt:get_config().use_ema)
    assert.are.equal(0.5, opt:get_config().ema_momentum)
  end)
end)
