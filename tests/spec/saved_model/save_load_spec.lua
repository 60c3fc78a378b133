-- tide.saved_model.save/load: traced functions with variables round trip,
-- run in a fresh process that never saw their Lua, and loaded variables
-- can be read, assigned and trained.
local tide = require "tide"
local prog = require "tide_program"
local sm = require "tide.saved_model"

local function close(a, b, tol)
  local x, y = a:totable(), b:totable()
  local function walk(p, q)
    if type(p) == "table" then
      assert.are.equal(#p, #q)
      for i = 1, #p do walk(p[i], q[i]) end
    else
      assert.is_true(math.abs(p - q) <= (tol or 1e-6) * (1 + math.abs(q)), tostring(p) .. " vs " .. tostring(q))
    end
  end
  walk(x, y)
end

describe("tide.saved_model", function()
  local dir
  before_each(function() dir = prog.make_tmpdir("sm") end)
  after_each(function() prog.remove_tmpdir(dir) end)

  local function dense_fn()
    local w = tide.Variable(tide.tensor({{1, 2}, {3, 4}, {5, 6}}, "float32"), {name = "w"})
    local b = tide.Variable(tide.tensor({0.5, -0.5}, "float32"), {name = "b"})
    local f = tide.trace(function(x) return tide.tanh(tide.matmul(x, w) + b) * 2 + 1 end,
      {input_signature = {tide.TensorSpec({tide.None, 3}, "float32", "x")}})
    return f, w, b
  end

  it("saves a traced function and loads it: same results, named outputs, None dims", function()
    local f = dense_fn()
    local x = tide.tensor({{0.1, 0.2, 0.3}, {0.4, 0.5, 0.6}}, "float32")
    sm.save(f, dir .. "/m")
    local m = sm.load(dir .. "/m")
    local out = m.signatures.serving_default(x)
    close(out.output_0, f(x))
    local x5 = tide.ones({5, 3})
    close(m.signatures.serving_default(x5).output_0, f(x5))
    close(m.signatures.serving_default{x = x}.output_0, f(x)) -- inputs by name, as TF's keyword arguments
    close(m:c_function("serving_default")(x), f(x)) -- the graph rebuilt by C alone
    assert.are.equal(2, #m.variables)
    local names = { m.variables[1].name, m.variables[2].name }
    table.sort(names)
    assert.are.same({"b", "w"}, names)
  end)

  it("checks inputs against the saved signature", function()
    sm.save((dense_fn()), dir .. "/m")
    local m = sm.load(dir .. "/m")
    assert.has_error(function() m.signatures.serving_default(tide.ones({2, 4})) end)
    assert.has_error(function() m.signatures.serving_default(tide.ones({2, 3}, "float64")) end)
  end)

  it("runs in a fresh process that never saw the defining code", function()
    local f = dense_fn()
    local x = tide.tensor({{0.1, 0.2, 0.3}}, "float32")
    sm.save(f, dir .. "/m")
    local want = f(x):totable()[1]
    prog.write_file(dir .. "/load.lua", [[
      local tide = require "tide"
      local m = tide.saved_model.load(arg[1])
      local y = m.signatures.serving_default(tide.tensor({{0.1, 0.2, 0.3}}, "float32")).output_0
      local r = y:totable()[1]
      io.write(string.format("%.6f %.6f", r[1], r[2]))
    ]])
    local rc, out, err = prog.sh(dir, prog.quote(prog.path) .. " " .. dir .. "/load.lua " .. dir .. "/m")
    assert.are.equal(0, rc, err)
    local a, b = out:match("(%S+) (%S+)")
    assert.is_true(math.abs(tonumber(a) - want[1]) < 1e-5 and math.abs(tonumber(b) - want[2]) < 1e-5, out)
  end)

  it("names outputs by the keys of a returned table, and saves several signatures", function()
    local v = tide.Variable(tide.tensor({1, 2}, "float32"), {name = "v"})
    local f = tide.trace(function(x) return {scaled = x * v, total = tide.reduce_sum(x * v)} end,
      {input_signature = {tide.TensorSpec({2}, "float32")}})
    local g = tide.trace(function(x, y) return x + y, x - y end,
      {input_signature = {tide.TensorSpec({2}, "float32"), tide.TensorSpec({2}, "float32")}})
    sm.save(nil, dir .. "/m", {signatures = {serving_default = f, pair = g}})
    local m = sm.load(dir .. "/m")
    local x = tide.tensor({3, 4}, "float32")
    local o = m.signatures.serving_default(x)
    assert.are.same({3, 8}, o.scaled:totable())
    assert.are.equal(11, o.total:item())
    local p = m.signatures.pair(x, tide.tensor({1, 1}, "float32"))
    assert.are.same({4, 5}, p.output_0:totable())
    assert.are.same({2, 3}, p.output_1:totable())
  end)

  it("loaded variables are read, assigned and trained through a signature", function()
    sm.save((dense_fn()), dir .. "/m")
    local m = sm.load(dir .. "/m")
    local w, b = m.variables[1], m.variables[2]
    if w.name ~= "w" then w, b = b, w end
    assert.are.same({{1, 2}, {3, 4}, {5, 6}}, w:read_value():totable())
    local x = tide.tensor({{0.1, -0.2, 0.05}}, "float32")
    -- gradients match the original function's
    local f2, w2, b2 = dense_fn()
    local t1, t2 = tide.GradientTape(), tide.GradientTape()
    local l1 = t1:run(function() return tide.reduce_sum(m.signatures.serving_default(x).output_0) end)
    local l2 = t2:run(function() return tide.reduce_sum(f2(x)) end)
    close(l1, l2)
    local g1 = t1:gradient(l1, {w, b})
    local g2 = t2:gradient(l2, {w2, b2})
    close(g1[1], g2[1], 1e-5)
    close(g1[2], g2[2], 1e-5)
    -- a few SGD steps change the loss as they change the original's
    local opt = tide.optimizers.SGD{learning_rate = 0.1}
    for _ = 1, 3 do
      local tape = tide.GradientTape()
      local loss = tape:run(function() return tide.reduce_sum(tide.square(m.signatures.serving_default(x).output_0)) end)
      local grads = tape:gradient(loss, m.trainable_variables)
      opt:apply_gradients{{grads[1], m.trainable_variables[1]}, {grads[2], m.trainable_variables[2]}}
    end
    assert.is_false(w:read_value():totable()[1][1] == 1)
    w:assign(tide.zeros({3, 2}))
    b:assign(tide.zeros({2}))
    close(m.signatures.serving_default(x).output_0, tide.ones({1, 2}))
    close(m:c_function("serving_default")(x), tide.ones({1, 2}))
  end)

  it("saves assignments in program order, and the loaded graph applies them", function()
    local v = tide.Variable(tide.tensor(1, "float32"), {name = "counter"})
    local f = tide.trace(function(x)
      local before = v:read_value()
      v:assign_add(x)
      v:assign(v * 2)
      return before, v:read_value()
    end, {input_signature = {tide.TensorSpec({}, "float32")}})
    sm.save(f, dir .. "/m")
    local m = sm.load(dir .. "/m")
    local o = m.signatures.serving_default(tide.tensor(2, "float32"))
    assert.are.equal(1, o.output_0:item())
    assert.are.equal(6, o.output_1:item())
    assert.are.equal(6, m.variables[1]:read_value():item())
    assert.are.equal(1, v:read_value():item()) -- the original is untouched
  end)

  it("refuses what it cannot save, naming what to do", function()
    local plain = tide.trace(function(x) return x * 2 end)
    assert.has_error(function() sm.save(plain, dir .. "/m") end,
      "saved_model.save: the object was traced without an input_signature; give one (tide.trace(f, " ..
      "{input_signature = {...}})) or pass f:get_concrete_function(...)")
    assert.has_error(function() sm.save(function() end, dir .. "/m") end)
    assert.has_error(function() sm.save(plain, "") end, "saved_model.save: dir must be a path string")
    assert.has_error(function() sm.load(dir .. "/nothing") end)
  end)
end)

describe("tide.saved_model writing", function()
  local dir
  before_each(function() dir = prog.make_tmpdir("sm") end)
  after_each(function() prog.remove_tmpdir(dir) end)

  local function fn(k)
    return tide.trace(function(x) return x * k end, {input_signature = {tide.TensorSpec({2}, "float32")}})
  end

  it("saves and loads a function that tide.prints a captured eager tensor (its constant comes first)", function()
    local c = tide.tensor({ 1, 2 }, "float32")
    local f = tide.trace(function(x)
      tide.print("c=%t", c)
      return x + c
    end, { input_signature = { tide.TensorSpec({ 2 }, "float32") } })
    sm.save(f, dir .. "/m")
    local m = sm.load(dir .. "/m")
    assert.are.same({ 2, 3 }, m.signatures.serving_default(tide.ones({ 2 })).output_0:totable())
  end)

  it("keeps the variables in the order the function first uses them (loaded.variables, cf.variables)", function()
    local vars = {}
    for i = 1, 24 do vars[i] = tide.Variable(tide.tensor({ i, i }, "float32"), { name = "v" .. i }) end
    local f = tide.trace(function(x)
      local acc = x
      for i = 1, 24 do acc = acc + vars[i] end
      vars[3]:assign_add(x) -- a variable used again keeps its first place
      return acc
    end, { input_signature = { tide.TensorSpec({ 2 }, "float32") } })
    local names = {}
    for i = 1, 24 do names[i] = "v" .. i end
    local cf = f:get_concrete_function()
    local got = {}
    for i, v in ipairs(cf.variables) do got[i] = v.name end
    assert.are.same(names, got)
    sm.save(f, dir .. "/m")
    local m = sm.load(dir .. "/m")
    got = {}
    for i, v in ipairs(m.variables) do got[i] = v.name end
    assert.are.same(names, got)
  end)

  it("replaces an existing SavedModel whole and leaves no temporary files", function()
    sm.save(fn(2), dir .. "/m")
    sm.save(fn(3), dir .. "/m")
    local m = sm.load(dir .. "/m")
    assert.are.same({3, 6}, m.signatures.serving_default(tide.tensor({1, 2}, "float32")).output_0:totable())
    local p = io.popen("ls -A " .. prog.quote(dir))
    local names = p:read("*a")
    p:close()
    assert.are.equal("m\n", names)
  end)

  it("a failed save leaves the previous SavedModel intact", function()
    sm.save(fn(2), dir .. "/m")
    assert.has_error(function() sm.save(fn(5), dir .. "/m", {extra = "{not json"}) end,
      "saved model: the extra text is not JSON")
    local m = sm.load(dir .. "/m")
    assert.are.same({2, 4}, m.signatures.serving_default(tide.tensor({1, 2}, "float32")).output_0:totable())
  end)

  it("refuses to write over a folder that is not a SavedModel", function()
    os.execute("mkdir " .. prog.quote(dir .. "/other") .. " && touch " .. prog.quote(dir .. "/other/keep.txt"))
    assert.has_error(function() sm.save(fn(2), dir .. "/other") end,
      "saved model: " .. dir .. "/other exists and is not a SavedModel (nothing was written)")
    assert.is_not_nil(prog.read_file(dir .. "/other/keep.txt"))
  end)

  it("keeps extra JSON for the loader", function()
    sm.save(fn(2), dir .. "/m", {extra = '{"config": {"layers": 3}}'})
    assert.are.equal('{"config":{"layers":3}}', sm.load(dir .. "/m").extra)
  end)

  it("replays an op of more than two outputs (all_reduce_sum over three tensors) in Lua", function()
    local f = tide.trace(function(a, b, c)
      local r = tide.distribute.all_reduce_sum({ a * 2, b + 1, c })
      return r[1] + r[2], r[3]
    end, { input_signature = { tide.TensorSpec({ 2 }, "float32"), tide.TensorSpec({ 2 }, "float32"),
      tide.TensorSpec({ 3 }, "float32") } })
    local a, b, c = tide.tensor({ 1, 2 }, "float32"), tide.tensor({ 3, 4 }, "float32"), tide.tensor({ 5, 6, 7 }, "float32")
    sm.save(f, dir .. "/m")
    local out = sm.load(dir .. "/m").signatures.serving_default(a, b, c)
    assert.are.same({ 6, 9 }, out.output_0:totable())
    assert.are.same({ 5, 6, 7 }, out.output_1:totable())
    -- and under a tape: the replayed op's gradient (all_reduce_sum's, in a world of one: the identity)
    local x = tide.Variable(tide.tensor({ 1, 2 }, "float32"))
    local tape = tide.GradientTape()
    local loss = tape:run(function()
      local o = sm.load(dir .. "/m").signatures.serving_default(x:read_value(), b, c)
      return tide.reduce_sum(o.output_0)
    end)
    assert.are.same({ 2, 2 }, tape:gradient(loss, { x })[1]:totable())
  end)
end)
