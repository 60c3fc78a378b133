-- tests/spec/ops/dynamic_shape_spec.lua — shapes as tensors (tide.shape,
-- tide.num_elements, tide.rank) and creation and reshaping ops given one:
-- eagerly, traced with known dims (constants), traced with None dims (sized
-- when the graph runs), their errors, and gradients through them.
local tide = require "tide"
local h = require "helpers"

local None = tide.None

-- A float32 tensor of `shape` holding 0, 1, 2, ...
local function iota(shape)
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  if n == 0 then return tide.zeros(shape) end
  return tide.range(n, { dtype = "float32" }):reshape(shape)
end

local function spec(n, dt)
  local dims = {}
  for i = 1, n do dims[i] = None end
  return tide.TensorSpec(dims, dt or "float32")
end

-- Graph text of traced f for these arguments.
local function graph_text(f, ...) return f:get_concrete_function(...):graph_text() end

describe("tide.shape, num_elements and rank", function()
  it("give the dims, element count and rank eagerly", function()
    local x = iota { 2, 3, 4 }
    local s = tide.shape(x)
    assert.are.equal("int32", s.dtype)
    assert.are.same({ 2, 3, 4 }, s:totable())
    assert.are.equal("int64", tide.shape(x, { out_type = "int64" }).dtype)
    assert.are.same({}, tide.shape(tide.tensor(5)):totable())
    assert.are.equal(24, tide.num_elements(x):item())
    assert.are.equal(0, tide.num_elements(iota { 3, 0 }):item())
    assert.are.equal("int32", tide.rank(x).dtype)
    assert.are.equal(3, tide.rank(x):item())
    -- x.shape is still the Lua list, and x:size() a Lua number
    assert.are.same({ 2, 3, 4 }, x.shape:as_list())
    assert.are.equal(24, x:size())
  end)

  it("reject another out_type", function()
    h.errors("shape: out_type must be int32 or int64, got float32", tide.shape, iota { 2 }, { out_type = "float32" })
    h.errors("num_elements: out_type must be int32 or int64", tide.num_elements, iota { 2 }, { out_type = "int8" })
  end)

  it("are constants when a traced tensor's dims are known, as in TF", function()
    local f = tide.trace(function(x) return tide.zeros(tide.shape(x)) + x, tide.num_elements(x) end)
    local a, n = f(iota { 2, 3 })
    h.close(a, iota { 2, 3 })
    assert.are.equal(6, n:item())
    local text = graph_text(f, iota { 2, 3 })
    assert.is_nil(text:find("shape(", 1, true), text)
    assert.is_nil(text:find("fill(", 1, true), text)
  end)

  it("are computed when the graph runs with None dims", function()
    local f = tide.trace(function(x) return tide.shape(x), tide.num_elements(x), tide.rank(x) end,
      { input_signature = { spec(2) } })
    for _, shape in ipairs { { 2, 3 }, { 5, 1 }, { 0, 4 } } do
      local s, n, r = f(iota(shape))
      assert.are.same(shape, s:totable())
      assert.are.equal(shape[1] * shape[2], n:item())
      assert.are.equal(2, r:item())
    end
    assert.truthy(graph_text(f, iota { 2, 3 }):find("= shape(", 1, true))
  end)
end)

describe("creation and reshaping from a shape tensor", function()
  setup(function() tide.config.set_retracing_warning { enabled = false } end)
  teardown(function() tide.config.set_retracing_warning { enabled = true } end)

  it("reads an eager shape tensor's values", function()
    local s = tide.tensor { 2, 3 }
    assert.are.same({ 2, 3 }, tide.zeros(s).shape:as_list())
    h.close(tide.ones(tide.tensor({ 2 }, "int64")), { 1, 1 })
    h.close(tide.fill(s, 7), { { 7, 7, 7 }, { 7, 7, 7 } })
    assert.are.same({ 2, 3 }, tide.random.uniform(s).shape:as_list())
    assert.are.same({ 2, 3 }, tide.random.normal(s, { seed = 1 }).shape:as_list())
    assert.are.same({ 2, 3 }, tide.random.truncated_normal(s).shape:as_list())
    h.close(tide.reshape(iota { 6 }, tide.tensor { 3, -1 }), { { 0, 1 }, { 2, 3 }, { 4, 5 } })
    h.close(tide.broadcast_to(iota { 3 }, s), { { 0, 1, 2 }, { 0, 1, 2 } })
  end)

  it("gives results sized when the graph runs (None dims), matching eager", function()
    local function body(x)
      local s = tide.shape(x)
      return tide.zeros(s) + x, tide.ones(s, "int32"), tide.fill(s, 2.5), tide.reshape(x, tide.shape(x:transpose())),
        tide.broadcast_to(tide.reduce_sum(x, 0), s), tide.random.uniform(s), tide.random.normal(s),
        tide.random.truncated_normal(s)
    end
    local f = tide.trace(body, { input_signature = { spec(2) } })
    for _, shape in ipairs { { 2, 3 }, { 4, 1 }, { 1, 5 }, { 0, 2 } } do
      local x = iota(shape)
      local want = { body(x) }
      local got = { f(x) }
      assert.are.equal(#want, #got)
      for i = 1, #want do
        assert.are.same(want[i].shape:as_list(), got[i].shape:as_list())
        assert.are.equal(want[i].dtype, got[i].dtype)
        if i <= 5 then h.close(got[i], want[i]) end -- the random ones draw other numbers
      end
    end
    -- symbolic shapes while tracing: the shape tensor's length is the rank, the dims unknown
    local seen
    tide.trace(function(x)
      seen = tide.zeros(tide.shape(x)).shape
      return x
    end, { input_signature = { spec(3) } })(iota { 1, 2, 3 })
    assert.are.equal(3, #seen)
    assert.are.equal(None, seen[1])
  end)

  it("reshape takes a list mixing numbers and 0-d shape tensors; the numbers stay known while tracing", function()
    local seen
    local f = tide.trace(function(x)
      local s = tide.shape(x)
      local y = tide.reshape(x, { s[0], -1, 3 })
      local z = tide.reshape(x, { s[0] * s[1], 3, s[2] / 3 })
      seen = { y.shape, z.shape }
      return y, z
    end, { input_signature = { spec(3) } })
    local y, z = f(iota { 2, 4, 3 })
    assert.are.same({ 2, 4, 3 }, y.shape:as_list())
    assert.are.same({ 8, 3, 1 }, z.shape:as_list())
    h.close(y, iota({ 2, 4, 3 }):totable())
    assert.are.equal("(None, None, 3)", tostring(seen[1]))
    assert.are.equal("(None, 3, None)", tostring(seen[2]))
    -- eagerly, a 0-d tensor entry is read as its number
    assert.are.same({ 4, 6 }, tide.reshape(iota { 2, 4, 3 }, { tide.tensor(4), 6 }).shape:as_list())
    h.errors("reshape: shape entry 1 must be a number or a 0-d tensor", function()
      tide.trace(function(x) return tide.reshape(x, { tide.shape(x), 3 }) end, { input_signature = { spec(2) } })(
        iota { 2, 3 })
    end)
  end)

  it("takes a shape tensor that is an argument of the traced function", function()
    local f = tide.trace(function(s) return tide.zeros(s) end,
      { input_signature = { tide.TensorSpec({ 2 }, "int32") } })
    assert.are.same({ 2, 3 }, f(tide.tensor { 2, 3 }).shape:as_list())
    assert.are.same({ 4, 0 }, f(tide.tensor { 4, 0 }).shape:as_list())
    local r = tide.trace(function(x, s) return tide.reshape(x, s) end,
      { input_signature = { spec(1), tide.TensorSpec({ 2 }, "int64") } })
    h.close(r(iota { 6 }, tide.tensor({ 2, -1 }, "int64")), { { 0, 1, 2 }, { 3, 4, 5 } })
  end)

  it("rejects a float shape tensor, a 2-D one, and negative dims, naming the op and the values", function()
    h.errors("zeros: shape must be an integer tensor, got float32 (2,)",
      tide.zeros, tide.tensor({ 2, 3 }, "float32"))
    h.errors("zeros: shape must be a 1-D tensor, got shape (2, 2)", tide.zeros, tide.tensor { { 1, 2 }, { 3, 4 } })
    h.errors("fill: shape has a negative dimension (-3 at 1)", tide.fill, tide.tensor { 2, -3 }, 1)
    -- traced: the dtype and rank at trace time...
    h.errors("ones: shape must be an integer tensor", function()
      tide.trace(function(s) return tide.ones(s) end, { input_signature = { spec(1) } })(tide.tensor({ 2 }, "float32"))
    end)
    h.errors("uniform: shape must be a 1-D tensor, got shape (1, 2)", function()
      tide.trace(function(s) return tide.random.uniform(s) end,
        { input_signature = { tide.TensorSpec({ 1, 2 }, "int32") } })(tide.tensor { { 1, 2 } })
    end)
    -- ...and negative values when the graph runs
    local f = tide.trace(function(s) return tide.zeros(s) end,
      { input_signature = { tide.TensorSpec({ 2 }, "int32") } })
    local err = h.errors("fill: the shape tensor holds a negative dimension: [2, -1] (-1 at 1)", f, tide.tensor { 2, -1 })
    assert.truthy(err:find("recorded at", 1, true), err)
    local b = tide.trace(function(x, s) return tide.broadcast_to(x, s) end,
      { input_signature = { spec(1), tide.TensorSpec({ 2 }, "int32") } })
    h.errors("broadcast_to: cannot broadcast shape [3] to [2, 4]", b, iota { 3 }, tide.tensor { 2, 4 })
  end)

  it("keeps gradients flowing through zeros(shape(x))", function()
    local w = tide.Variable(tide.tensor({ 1, 2, 3 }, "float32"))
    local tape = tide.GradientTape()
    local y = tape:run(function() return tide.reduce_sum(w * w + tide.zeros(tide.shape(w))) end)
    h.close(tape:gradient(y, { w })[1], { 2, 4, 6 })
    -- traced with None dims: zeros, fill and reshape of a shape tensor in the tape
    local g = tide.trace(function(x)
      local t = tide.GradientTape()
      t:watch(x)
      local out = t:run(function()
        local s = tide.shape(x)
        return tide.reduce_sum(x * x + tide.zeros(s) + tide.reshape(x, tide.shape(x)) * tide.fill(s, 3, { dtype = "float32" }))
      end)
      return t:gradient(out, { x })[1]
    end, { input_signature = { spec(2) } })
    for _, shape in ipairs { { 2, 2 }, { 3, 1 } } do
      local x = iota(shape)
      h.close(g(x), x * 2 + 3)
    end
  end)
end)

describe("tide.ensure_shape (tf.ensure_shape)", function()
  it("refines a traced tensor's unknown dims; the run checks them", function()
    local seen
    local f = tide.trace(function(x)
      local z = tide.zeros(tide.stack { tide.shape(x)[1], tide.shape(x)[0], tide.constant(4, "int32") })
      local e = tide.ensure_shape(z, { None, None, 4 })
      seen = { z.shape:as_list(), e.shape:as_list() }
      return e
    end, { input_signature = { spec(2) } })
    assert.are.same({ 3, 2, 4 }, f(iota { 2, 3 }).shape:as_list())
    assert.are.same({ { None, None, None }, { None, None, 4 } }, seen)
    local g = tide.trace(function(x) return tide.ensure_shape(x, { None, 3 }) end, { input_signature = { spec(2) } })
    assert.are.same({ 2, 3 }, g(iota { 2, 3 }).shape:as_list())
    h.errors("the shape tensor holds 4 at 1 where the traced graph has 3", g, iota { 2, 4 })
  end)

  it("returns an eager or known-shaped tensor itself, and names a shape that does not fit", function()
    local x = iota { 2, 3 }
    assert.are.equal(x, tide.ensure_shape(x, { 2, None }))
    h.errors("ensure_shape: x has shape (2, 3), which is not compatible with (2, 4) (dim 1)", tide.ensure_shape, x, { 2, 4 })
    h.errors("(the ranks differ)", tide.ensure_shape, x, { 2 })
    h.errors("shape must be a list of dims", tide.ensure_shape, x, 3)
  end)
end)
