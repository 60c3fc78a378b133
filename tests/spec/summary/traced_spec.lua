-- tests/spec/summary/traced_spec.lua — tide.summary.scalar/histogram inside
-- tide.trace: a graph node that writes at each run (TF's summary ops in a
-- tf.function), the step read at each run, record_if, and the errors.
local tide = require "tide"
local tmp = require "tmp"
local reader = require "event_reader"
local S = tide.summary

local tmpdir, remove_tmpdirs = tmp.dirs("summary_traced")

-- {tag, step, value(s)} of each summary of a closed writer's file.
local function summaries(path)
  local out = {}
  for _, e in ipairs(reader.read(path)) do
    for _, v in ipairs(e.values) do out[#out + 1] = { tag = v.tag, step = e.step, v = v } end
  end
  return out
end

describe("tide.summary inside tide.trace", function()
  teardown(remove_tmpdirs)
  after_each(function() S.experimental.set_step(nil) end)

  it("a traced training step that logs its loss writes one value per call, at the step read at each run", function()
    local w = S.create_file_writer(tmpdir())
    local weight = tide.Variable(tide.tensor({ 2 }, "float32"))
    local iterations = tide.Variable(tide.tensor(0, "int64"))
    S.experimental.set_step(iterations)
    local traces = 0
    local train_step = tide.trace(function(x, y)
      traces = traces + 1
      local tape = tide.GradientTape()
      local loss = tape:run(function() return tide.reduce_mean(tide.square(x * weight - y)) end)
      local g = tape:gradient(loss, { weight })[1]
      weight:assign_sub(g * 0.1)
      S.scalar("loss", loss)
      S.histogram("weight", weight, { buckets = 4 })
      iterations:assign_add(1)
      return loss
    end)
    local x, y = tide.tensor({ 1, 2, 3 }, "float32"), tide.tensor({ 3, 6, 9 }, "float32")
    local losses = {}
    w:as_default(function()
      for i = 1, 5 do losses[i] = train_step(x, y):item() end
    end)
    w:close()
    assert.are.equal(1, traces)
    local got = summaries(w.path)
    local scalars, hists = {}, {}
    for _, s in ipairs(got) do
      if s.tag == "loss" then scalars[#scalars + 1] = s else hists[#hists + 1] = s end
    end
    assert.are.equal(5, #scalars)
    assert.are.equal(5, #hists)
    for i, s in ipairs(scalars) do
      assert.are.equal(i - 1, s.step)
      assert.are.equal("scalars", s.v.plugin_name)
      assert.are.equal(losses[i], reader.as_float(s.v.tensor.content))
      assert.are.equal("weight", hists[i].tag)
      assert.are.equal(i - 1, hists[i].step)
      assert.are.equal("histograms", hists[i].v.plugin_name)
      assert.are.same({ 4, 3 }, hists[i].v.tensor.shape)
    end
    -- the loss went down: each call wrote its own value
    assert.truthy(losses[5] < losses[1])
  end)

  it("writes inside a tide.cond branch only when it runs; a number step is baked in", function()
    local w = S.create_file_writer(tmpdir())
    local f = tide.trace(function(x)
      return tide.cond(x:gt(0), function()
        S.scalar("positive", x, { step = 7 })
        return x
      end, function() return -x end)
    end)
    w:as_default(function()
      f(tide.tensor(1.5, "float32"))
      f(tide.tensor(-2, "float32"))
      f(tide.tensor(3, "float32"))
    end)
    w:close()
    local got = summaries(w.path)
    assert.are.equal(2, #got)
    assert.are.equal(1.5, reader.as_float(got[1].v.tensor.content))
    assert.are.equal(3, reader.as_float(got[2].v.tensor.content))
    assert.are.equal(7, got[2].step)
  end)

  it("takes the writer and record_if when traced, as TF; a record_if tensor is read at each run", function()
    local w = S.create_file_writer(tmpdir())
    local f = tide.trace(function(x) return S.scalar("x", x, { step = 1 }) end)
    -- no default writer while tracing: nothing recorded, also when a later call has one (TF keeps the trace)
    assert.is_false(f(tide.tensor(1, "float32")))
    w:as_default(function() f(tide.tensor(2, "float32")) end)
    local every_other = tide.Variable(tide.tensor(0, "int32"))
    local g = tide.trace(function(x)
      S.scalar("g", x, { step = 0 })
      every_other:assign_add(1)
      return x
    end)
    w:as_default(function()
      S.record_if(function() return tide.equal(tide.floormod(every_other:read_value(), 2), 0) end, function()
        for i = 1, 4 do g(tide.tensor(i, "float32")) end
      end)
    end)
    local h = tide.trace(function(x) S.scalar("never", x, { step = 0 }); return x end)
    w:as_default(function() S.record_if(false, function() h(tide.tensor(1, "float32")) end) end)
    w:as_default(function() h(tide.tensor(1, "float32")) end) -- the trace is kept: still nothing
    w:close()
    local values = {}
    for _, s in ipairs(summaries(w.path)) do values[#values + 1] = s.tag .. "=" .. reader.as_float(s.v.tensor.content) end
    assert.are.same({ "g=1", "g=3" }, values)
  end)

  it("shows in the graph and refuses to be saved in a SavedModel", function()
    local w = S.create_file_writer(tmpdir())
    local f = tide.trace(function(x)
      S.scalar("s", tide.reduce_sum(x), { step = 0 })
      return x * 2
    end, { input_signature = { tide.TensorSpec({ 2 }, "float32") } })
    local cf
    w:as_default(function() cf = f:get_concrete_function() end)
    assert.truthy(tostring(cf.graph):find("summary.scalar", 1, true))
    -- and in the GraphDef TensorBoard shows, reading the value it writes
    local nodes = reader.graph_def(require("tide.summary.graph").graph_def(cf))
    local node
    for _, n in ipairs(nodes) do if n.op == "summary.scalar" then node = n end end
    assert.truthy(node)
    assert.are.same({ "Const", "sum" }, { node.inputs[1]:match("^Const"), node.inputs[2] })
    local err = select(2, pcall(tide.saved_model.save, { f = f }, tmpdir() .. "/m", { signatures = f }))
    assert.truthy(tostring(err):find("writes summaries (summary.scalar", 1, true), tostring(err))
    w:close()
  end)

  it("errors: bad data and step when traced, a closed writer when run", function()
    local w = S.create_file_writer(tmpdir())
    w:as_default(function()
      local f = tide.trace(function(x) return S.scalar("v", x, { step = 0 }) end)
      assert.has_error(function() f(tide.ones({ 2 })) end,
        "summary.scalar 'v': data must be a scalar (rank 0), got shape (2,)")
      local g = tide.trace(function(x) return S.scalar("v", x, { step = 1.5 }) end)
      assert.has_error(function() g(tide.tensor(1, "float32")) end, "summary.scalar 'v': the step must be an integer, got 1.5")
      local h = tide.trace(function(x) return S.histogram("v", x, { step = 0, buckets = "x" }) end)
      assert.has_error(function() h(tide.tensor(1, "float32")) end, "summary.histogram 'v': buckets must be an integer, got x")
      local k = tide.trace(function(x) return S.scalar("v", x) end)
      assert.has_error(function() k(tide.tensor(1, "float32")) end,
        "summary.scalar 'v': no step set; pass {step = ...} or call tide.summary.experimental.set_step(step) first")
      local t = tide.trace(function(x) S.text("t", "hi", { step = 0 }); return x end)
      assert.has_error(function() t(tide.tensor(1, "float32")) end)
    end)
    local f
    w:as_default(function()
      f = tide.trace(function(x) return S.scalar("late", x, { step = 0 }) end)
      f(tide.tensor(1, "float32"))
    end)
    w:close()
    local ok, err = pcall(f, tide.tensor(1, "float32"))
    assert.is_false(ok)
    assert.truthy(tostring(err):find("is closed", 1, true), tostring(err))
  end)
end)
