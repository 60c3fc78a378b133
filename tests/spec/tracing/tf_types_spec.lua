-- tests/spec/tracing/tf_types_spec.lua — TF's top-level type names, scopes and graph-mode helpers
-- (stdlib/tide/tracing/tf_types.lua and tf_module.lua): behaviour and errors, and that `require "tide"` loads neither.
local tide = require "tide"
local h = require "helpers"

local function err(f, ...) local ok, e = pcall(f, ...); assert.is_false(ok); return tostring(e) end

describe("TF's type names", function()
  it("load nothing at require", function()
    local code = [[local t = require "tide"
      for _, m in ipairs { "tide.tracing.tf_types", "tide.tracing.tf_module", "tide.ops.tf_top_ops",
                           "tide.ops.tf_top_misc" } do
        if package.loaded[m] then print("loaded " .. m) end
      end
      assert(t.Module ~= nil and package.loaded["tide.tracing.tf_module"])
      print("ok")]]
    local f = assert(io.popen("build/tide -e '" .. code:gsub("'", "'\\''") .. "' 2>&1"))
    local out = f:read("*a")
    f:close()
    assert.are.equal("ok\n", out)
  end)

  it("Tensor, TensorShape, DType check and build", function()
    assert.is_true(tide.Tensor:is_instance(tide.zeros { 2 }))
    assert.is_false(tide.Tensor:is_instance({ 1 }))
    h.close(tide.Tensor({ 1, 2 }), { 1, 2 }, 0)
    local s = tide.TensorShape { 2, tide.None }
    assert.is_true(tide.TensorShape:is_instance(s))
    assert.is_true(tide.TensorShape:is_instance(tide.zeros { 3 }.shape))
    assert.are.equal("(2, None)", tostring(s))
    assert.is_nil(tide.TensorShape(nil).rank)
    assert.are.equal(tide.float32, tide.DType("float32"))
    assert.is_true(tide.DType:is_instance(tide.int64))
    assert.is_false(tide.DType:is_instance("int64"))
    assert.matches("DType: expected a dtype name, got number", err(tide.DType, 3))
    assert.matches("TensorShape: dimension 1 must be a size", err(tide.TensorShape, { -3 }))
  end)

  it("is_symbolic_tensor and type_spec_from_value", function()
    assert.is_false(tide.is_symbolic_tensor(tide.zeros { 1 }))
    assert.is_false(tide.is_symbolic_tensor(3))
    local seen
    tide.trace(function(x) seen = tide.is_symbolic_tensor(x); return x end)(tide.zeros { 1 })
    assert.is_true(seen)
    local s = tide.type_spec_from_value(tide.zeros({ 2, 3 }, "int32"))
    assert.are.same({ 2, 3 }, s.shape)
    assert.are.equal("int32", s.dtype)
    assert.are.equal("float32", tide.type_spec_from_value(tide.Variable { 1, 2 }).dtype)
    assert.is_true(tide.type_spec_from_value(nil) == tide.NoneTensorSpec())
    local slices = tide.IndexedSlices(tide.tensor { { 1, 2 }, { 3, 4 } }, tide.tensor { 2, 0 }, { 3, 2 })
    h.close(slices:to_dense(), { { 3, 4 }, { 0, 0 }, { 1, 2 } }, 0)
    local is = tide.type_spec_from_value(slices)
    assert.are.equal("IndexedSlicesSpec", getmetatable(is).__name)
    assert.are.equal("int32", tostring(is.indices_dtype))
    assert.matches("type_spec_from_value: could not build a TypeSpec for a function",
      err(tide.type_spec_from_value, print))
    assert.matches("IndexedSlices: indices must be int32 or int64, got float32",
      err(tide.IndexedSlices, tide.zeros { 1 }, tide.zeros { 1 }))
  end)

  it("the TypeSpec classes compare by their fields", function()
    local a = tide.RaggedTensorSpec({ 2, tide.None }, "int32")
    assert.are.equal(1, a.ragged_rank)
    assert.are.equal("int64", tostring(a.row_splits_dtype))
    assert.is_true(a == tide.RaggedTensorSpec({ 2, tide.None }, "int32", 1))
    assert.is_false(a == tide.RaggedTensorSpec({ 2, tide.None }, "float32"))
    assert.is_true(a:is_compatible_with(tide.RaggedTensorSpec({ 2, tide.None }, "int32")))
    assert.is_false(a:is_compatible_with(tide.TensorArraySpec({ 2 }, "int32")))
    assert.matches("RaggedTensorSpec%(", tostring(a))
    assert.are.equal("TensorArray", tide.TensorArraySpec().value_type)
    assert.are.equal(tide.NoneTensorSpec(), tide.OptionalSpec(tide.NoneTensorSpec()).element_spec)
    assert.matches("TypeSpec: is abstract", err(tide.TypeSpec))
    assert.matches("RaggedTensorSpec: row_splits_dtype must be int32 or int64",
      err(tide.RaggedTensorSpec, { 2, 3 }, "float32", 1, "float32"))
    assert.matches("OptionalSpec: element_spec must be a TypeSpec", err(tide.OptionalSpec, 3))
  end)

  it("the enums", function()
    assert.are.equal("SUM", tide.VariableAggregation.SUM.name)
    assert.are.equal(tide.VariableAggregation.MEAN, tide.VariableAggregation(2))
    assert.are.equal(tide.AggregationMethod.ADD_N, tide.AggregationMethod.DEFAULT)
    assert.are.equal("zero", tide.UnconnectedGradients.ZERO.value)
    assert.are.equal("VariableSynchronization.ON_READ", tostring(tide.VariableSynchronization.ON_READ))
    assert.matches("VariableAggregation: no member has the value 9", err(tide.VariableAggregation, 9))
  end)

  it("DeviceSpec reads and writes TF's device strings", function()
    local d = tide.DeviceSpec.from_string("/job:worker/replica:0/task:1/device:GPU:0")
    assert.are.equal("worker", d.job)
    assert.are.equal(1, d.task)
    assert.are.equal("GPU", d.device_type)
    assert.are.equal(0, d.device_index)
    assert.are.equal("/job:worker/replica:0/task:1/device:GPU:0", d:to_string())
    assert.are.equal("/device:CPU:*", tide.DeviceSpec.from_string("/cpu:*"):to_string())
    assert.are.equal("/device:GPU:1", tostring(tide.DeviceSpec.from_string("/gpu:1")))
    assert.are.equal("/job:worker/replica:0/task:1/device:CPU:0", d:replace { device_type = "cpu" }:to_string())
    local m = d:make_merged_spec(tide.DeviceSpec { job = "ps" })
    assert.are.equal("/job:ps/replica:0/task:1/device:GPU:0", m:to_string())
    assert.is_true(d == tide.DeviceSpec.from_string("/job:worker/replica:0/task:1/device:GPU:0"))
    assert.matches("DeviceSpec.from_string: cannot read \"bogus\"", err(tide.DeviceSpec.from_string, "/bogus"))
    assert.matches("DeviceSpec: task must be a non%-negative integer", err(tide.DeviceSpec, { task = -1 }))
    assert.matches("DeviceSpec: unknown field color", err(tide.DeviceSpec, { color = 1 }))
  end)

  it("CriticalSection, get_logger, check_pinned, nondifferentiable_batch_function", function()
    local cs = tide.CriticalSection()
    assert.are.equal(5, cs:execute(function(a) return a + 1 end, 4))
    assert.matches("already running", err(cs.execute, cs, function() return cs:execute(function() end) end))
    assert.are.equal(2, cs:execute(function() return 2 end)) -- released after the error
    assert.matches("boom", err(cs.execute, cs, function() error("boom") end))
    assert.are.equal(3, cs:execute(function() return 3 end))
    local co = coroutine.create(function() cs:execute(function() coroutine.yield() end) end)
    coroutine.resume(co)
    assert.matches("held by a coroutine", err(cs.execute, cs, function() end))
    coroutine.resume(co)
    local log = tide.get_logger()
    local lines = {}
    local write = log.write
    log.write = function(s) lines[#lines + 1] = s end
    log:info("hidden")
    log:warning("shown %d", 1)
    log:setLevel("DEBUG")
    log:debug("now")
    log.write = write
    log:setLevel(0)
    assert.are.same({ "WARNING:tensorflow:shown 1\n", "DEBUG:tensorflow:now\n" }, lines)
    assert.matches("unknown level loud", err(log.setLevel, log, "loud"))
    local t = tide.zeros { 1 }
    assert.is_true(rawequal(t, tide.check_pinned(t)))
    assert.matches("check_pinned: expected a tensor", err(tide.check_pinned, 1))
    local f = tide.nondifferentiable_batch_function(1, 8, 100)(function(a) return a * 2 end)
    local x = tide.tensor({ 1, 2 }, "float64")
    local tape = tide.GradientTape()
    local y = tape:run(function() tape:watch(x); return f(x) end)
    h.close(y, { 2, 4 }, 0)
    assert.is_nil(tape:gradient(y, x))
    assert.matches("max_batch_size must be a non%-negative integer",
      err(tide.nondifferentiable_batch_function, 1, -1, 0))
  end)

  it("register_tensor_conversion_function hooks tide.tensor and op arguments", function()
    local class = require "tide.class"
    local P = class("PointForConversion")
    function P:__init(x, y) self.x, self.y = x, y end
    local Q = class("PointChild", P)
    tide.register_tensor_conversion_function(P, function(p, dt) return tide.tensor({ p.x, p.y }, dt) end)
    h.close(tide.tensor(P(1, 2)), { 1, 2 }, 0)
    assert.are.equal("float64", tide.tensor(P(1, 2), "float64").dtype)
    h.close(tide.add(Q(3, 4), 1), { 4, 5 }, 0) -- a derived class converts through its parent's function
    local Bad = class("BadConversion")
    tide.register_tensor_conversion_function(Bad, function() return "no" end)
    assert.matches("the conversion function for BadConversion returned a string", err(tide.tensor, Bad()))
    assert.matches("conversion_func must be a function", err(tide.register_tensor_conversion_function, P, 1))
    assert.matches("the conversion of tensors cannot be overridden",
      err(tide.register_tensor_conversion_function, tide.Tensor, function() end))
  end)
end)

describe("TF's scopes, Module and graph-mode gradients", function()
  it("name_scope names Variables and nests; the scope is left on errors", function()
    tide.name_scope("outer", function()
      assert.are.equal("outer", tide.get_current_name_scope())
      local v = tide.name_scope("inner"):run(function() return tide.Variable(1, { name = "v" }) end)
      assert.are.equal("outer/inner/v", v.name)
      tide.name_scope("abs/", function() assert.are.equal("abs", tide.get_current_name_scope()) end)
      tide.name_scope("", function() assert.are.equal("", tide.get_current_name_scope()) end)
    end)
    assert.are.equal("", tide.get_current_name_scope())
    assert.matches("boom", err(tide.name_scope, "x", function() error("boom") end))
    assert.are.equal("", tide.get_current_name_scope())
    assert.are.equal("Variable", tide.Variable(1).name)
    assert.matches("name_scope: '%?bad' is not a valid scope name", err(tide.name_scope, "?bad"))
    assert.matches("name_scope: name must be a string", err(tide.name_scope, 3))
  end)

  it("init_scope pauses the tapes", function()
    local x = tide.tensor(2, "float32")
    local tape = tide.GradientTape()
    local y = tape:run(function()
      tape:watch(x)
      return tide.init_scope(function() return x * x end) + x
    end)
    h.close(tape:gradient(y, x), 1, 0)
    assert.matches("init_scope: expects a function", err(tide.init_scope, 1))
  end)

  it("Module collects variables and submodules from its fields", function()
    local m = tide.Module { name = "net" }
    m.w = tide.Variable(1, { name = "w" })
    m.sub = tide.Module()
    m.sub.b = tide.Variable(2, { name = "b", trainable = false })
    m.list = { tide.Variable(3, { name = "c" }), m.w }
    local names = {}
    for _, v in ipairs(m:variables()) do names[#names + 1] = v.name end
    assert.are.same({ "c", "w", "b" }, names)
    assert.are.equal(2, #m:trainable_variables())
    assert.are.equal(1, #m:non_trainable_variables())
    assert.are.equal(1, #m:submodules())
    assert.are.equal("module", m.sub.name)
    assert.are.equal("net", m.name)
    local v = m:with_name_scope(function() return tide.Variable(0, { name = "k" }) end)
    assert.are.equal("net/k", v.name)
    local Dense = require("tide.class")("MyDense", tide.Module)
    assert.are.equal("my_dense", Dense().name)
    assert.matches("Module: name must be a valid", err(tide.Module, { name = "a b" }))
  end)

  it("variable_creator_scope wraps tide.Variable, nested and undone", function()
    local log = {}
    local v = tide.variable_creator_scope(function(next_creator, init, o)
      log[#log + 1] = "outer"
      return next_creator(init, o)
    end, function()
      return tide.variable_creator_scope(function(next_creator, init, o)
        log[#log + 1] = "inner"
        o.name = "renamed"
        return next_creator(init, o)
      end, function() return tide.Variable(5, { name = "x" }) end)
    end)
    assert.are.same({ "inner", "outer" }, log)
    assert.are.equal("renamed", v.name)
    tide.Variable(1)
    assert.are.equal(2, #log)
    assert.matches("the creator returned a number", err(tide.variable_creator_scope, function() return 1 end,
      function() return tide.Variable(1) end))
    tide.Variable(1) -- the hook is gone after the error
  end)

  it("gradients and hessians differentiate a function of xs, eagerly and traced", function()
    local x = tide.tensor({ 1, 2 }, "float64")
    local y = tide.tensor(3, "float64")
    local g = tide.gradients(function(a, b) return a * a * b end, { x, y })
    h.close(g[1], { 6, 12 }, 1e-12)
    h.close(g[2], 5, 1e-12)
    local gw = tide.gradients(function(a) return a * 2 end, x, { grad_ys = tide.tensor({ 1, 3 }, "float64") })
    h.close(gw[1], { 2, 6 }, 0)
    local unc = tide.gradients(function(a, b) return a * 2 end, { x, y }, { unconnected_gradients = "zero" })
    h.close(unc[2], 0, 0)
    assert.is_nil(tide.gradients(function(a) return a * 2 end, { x, y })[2])
    local traced = tide.trace(function(a) return tide.gradients(function(b) return tide.reduce_sum(b * b) end, { a })[1] end)
    h.close(traced(x), { 2, 4 }, 0)
    local hs = tide.hessians(function(a) return tide.reduce_sum(a * a * a) end, { x })
    h.close(hs[1], { { 6, 0 }, { 0, 12 } }, 1e-12)
    assert.matches("gradients: ys must be a function", err(tide.gradients, x, { x }))
  end)

  it("RegisterGradient and no_gradient are refused where tide has a gradient", function()
    assert.matches("RegisterGradient: Registering two gradient with name 'sin'", err(tide.RegisterGradient, "sin"))
    assert.matches("RegisterGradient: no op named 'nope'", err(tide.RegisterGradient, "nope"))
    assert.matches("Registering two gradient with name 'add'", err(tide.no_gradient, "add"))
    local reg = require "tide.grad.registry"
    local C = require("tide.binding").C
    local code = C.tide_op_lookup("all_reduce_sum")
    assert.is_nil(reg.fns[code])
    local fn = function(op, dy) return dy end
    assert.are.equal(fn, tide.RegisterGradient("all_reduce_sum")(fn))
    local node_seen
    local ok = pcall(function()
      local out = reg.fns[code]({ inputs = {} }, { tide.tensor(1) })
      node_seen = out
    end)
    reg.fns[code], reg.files[code] = nil, nil -- leave the registry as the other specs know it
    assert.is_true(ok)
    h.close(node_seen, 1, 0)
  end)
end)
