-- tests/spec/summary/graph_spec.lua — traced graphs as TensorBoard GraphDefs:
-- summary.graph, trace_on/trace_export (nodes, names, inputs, scopes, the
-- tagged RunMetadata), the TensorBoard callback's write_graph, and the errors.
local tide = require "tide"
local tmp = require "tmp"
local reader = require "event_reader"
local S = tide.summary

local tmpdir, remove_tmpdirs = tmp.dirs("summary_graph")

-- The graph events of a closed writer's file: {step =, nodes = {...}, by_name = {...}}.
local function graphs(path)
  local out = {}
  for _, e in ipairs(reader.read(path)) do
    if e.graph_def then
      local nodes = reader.graph_def(e.graph_def)
      local by_name = {}
      for _, n in ipairs(nodes) do by_name[n.name] = n end
      out[#out + 1] = { step = e.step, nodes = nodes, by_name = by_name }
    end
  end
  return out
end

local function ops_of(g)
  local ops = {}
  for _, n in ipairs(g.nodes) do ops[n.op] = (ops[n.op] or 0) + 1 end
  return ops
end

describe("tide.summary graphs", function()
  teardown(remove_tmpdirs)
  after_each(function() S.trace_off(); S.experimental.set_step(nil) end)

  it("trace_export writes the graph of a traced function that ran, with TF's node names and inputs", function()
    local v = tide.Variable(tide.tensor({ { 1, 2 }, { 3, 4 } }, "float32"), { name = "dense/kernel" })
    local f = tide.trace(function(x)
      local y = tide.matmul(x, v)
      v:assign_add(tide.fill({ 2, 2 }, 1.5))
      return tide.relu(y) + tide.exp(y), tide.reduce_sum(x)
    end)
    local w = S.create_file_writer(tmpdir())
    S.trace_on { graph = true }
    f(tide.ones({ 2, 2 }))
    f(tide.ones({ 2, 2 })) -- the same concrete function: one graph
    local n = w:as_default(function() return S.trace_export { name = "f_trace", step = 5 } end)
    assert.are.equal(1, n)
    w:close()
    local gs = graphs(w.path)
    assert.are.equal(1, #gs)
    local g = gs[1]
    assert.are.equal(5, g.step)
    local by = g.by_name
    assert.are.equal("Placeholder", by.x.op)
    assert.are.equal("VarHandleOp", by["dense/kernel"].op)
    assert.are.equal("ReadVariableOp", by.ReadVariableOp.op)
    assert.are.same({ "dense/kernel" }, by.ReadVariableOp.inputs)
    assert.are.equal("matmul", by.matmul.op)
    assert.are.same({ "x", "ReadVariableOp" }, by.matmul.inputs)
    assert.are.equal("AssignAddVariableOp", by.AssignAddVariableOp.op)
    assert.are.equal("dense/kernel", by.AssignAddVariableOp.inputs[1])
    -- relu and exp are fused when the graph is optimized; the GraphDef shows the ops
    local ops = ops_of(g)
    assert.truthy(ops.relu and ops.exp and ops.add, "ops: " .. table.concat((function()
      local l = {}
      for k in pairs(ops) do l[#l + 1] = k end
      return l
    end)(), ","))
    assert.are.equal("Identity", by.Identity.op)
    assert.are.equal("Identity", by.Identity_1.op)
    assert.are.same({ "sum" }, by.Identity_1.inputs)
    -- every input names a node of the graph
    for _, node in ipairs(g.nodes) do
      for _, i in ipairs(node.inputs) do
        assert.truthy(by[i:gsub("^%^", ""):gsub(":%d+$", "")], node.name .. " reads a missing " .. i)
      end
      assert.truthy(node.attrs.T or node.attrs.dtype, node.name)
    end
    -- and, as tf.summary.trace_export, a tagged summary for the graphs plugin
    local tagged
    for _, e in ipairs(reader.read(w.path)) do
      for _, val in ipairs(e.values) do if val.tag == "f_trace" then tagged = { e = e, v = val } end end
    end
    assert.truthy(tagged)
    assert.are.equal(5, tagged.e.step)
    assert.are.equal("graph_run_metadata_graph", tagged.v.plugin_name)
    assert.are.equal("1", tagged.v.content)
    -- RunMetadata{function_graphs(4){pre_optimization_graph(2)}} holds the same GraphDef
    local rm = reader.fields(tagged.v.tensor.strings[1])
    assert.are.equal(4, rm[1].num)
    local fg = reader.fields(rm[1].value)
    assert.are.equal(2, fg[1].num)
    assert.are.equal(#g.nodes, #reader.graph_def(fg[1].value))
  end)

  it("writes cond and while subgraphs under their node's name scope", function()
    local f = tide.trace(function(x)
      local z = tide.cond(tide.reduce_sum(x):gt(0), function() return x * 2 end, function() return x - 1 end)
      local _, s = tide.while_loop(function(i) return i:lt(3) end, function(i, s) return i + 1, s + z end,
        { tide.tensor(0), z })
      return s
    end)
    local w = S.create_file_writer(tmpdir())
    S.trace_on { graph = true }
    f(tide.tensor({ 1, 2 }, "float32"))
    w:as_default(function() S.trace_export("loops", { step = 0 }) end)
    w:close()
    local by = graphs(w.path)[1].by_name
    assert.are.equal("If", by.cond.op)
    assert.are.equal("mul", by["cond/then/mul"].op)
    assert.are.equal("sub", by["cond/else/sub"].op)
    assert.are.same({ "cond/then/mul" }, by["cond/then/output"].inputs)
    assert.are.equal("While", by["while"].op)
    assert.are.equal("LoopVar", by["while/body/loop_var_1"].op)
    assert.are.same({ "cond" }, by["while/body/loop_var_1"].inputs)
    assert.are.same({ "while:1" }, by.Identity.inputs)
    -- a capture reads the enclosing graph's node itself
    local mul = by["cond/then/mul"]
    assert.are.equal("x", mul.inputs[1])
  end)

  it("puts several functions under their names; exports only functions run since trace_on", function()
    local f = tide.trace(function(x) return x + 1 end, { name = "f" })
    local g = tide.trace(function(x) return x * 2 end, { name = "g" })
    local old = tide.trace(function(x) return -x end, { name = "old" })
    old(tide.ones({ 2 }))
    local w = S.create_file_writer(tmpdir())
    S.trace_on { graph = true }
    f(tide.ones({ 2 }))
    g(tide.ones({ 2 }))
    assert.are.equal(2, w:as_default(function() return S.trace_export { name = "two", step = 1 } end))
    -- trace_export turned tracing off: nothing to export now
    assert.has_error(function() w:as_default(function() S.trace_export { name = "again", step = 1 } end) end,
      "summary.trace_export: tracing is not on; call tide.summary.trace_on{graph = true} first")
    w:close()
    local by = graphs(w.path)[1].by_name
    assert.are.equal("add", by["f/add"].op)
    assert.are.equal("mul", by["g/mul"].op)
    assert.are.equal("Placeholder", by["f/x"].op)
    assert.is_nil(by["old/neg"])
    assert.is_nil(by.neg)
  end)

  it("summary.graph writes a traced function's graph at step 0; nothing without a default writer", function()
    local f = tide.trace(function(a, b) return tide.matmul(a, b) end)
    assert.has_error(function() S.graph(f) end,
      "summary.graph: the traced function has not been traced yet; call it (or get_concrete_function) first")
    f(tide.ones({ 2, 3 }), tide.ones({ 3, 1 }))
    assert.is_false(S.graph(f))
    local w = S.create_file_writer(tmpdir())
    assert.is_true(w:as_default(function() return S.graph(f) end))
    w:close()
    local gs = graphs(w.path)
    assert.are.equal(1, #gs)
    assert.are.equal(0, gs[1].step)
    assert.are.same({ "a", "b" }, gs[1].by_name.matmul.inputs)
  end)

  it("the TensorBoard callback writes the train step's graph (write_graph, on by default)", function()
    local dir = tmpdir()
    local model = tide.Sequential { tide.layers.Dense { 2, name = "d" } }
    model:compile { optimizer = "sgd", loss = "mse" }
    model:fit(tide.ones({ 4, 3 }), tide.zeros({ 4, 2 }), { epochs = 2, batch_size = 2, verbose = 0,
      callbacks = { tide.callbacks.TensorBoard { log_dir = dir } } })
    local files = reader.files(dir .. "/train")
    local found = {}
    for _, p in ipairs(files) do
      for _, g in ipairs(graphs(p)) do found[#found + 1] = g end
    end
    assert.are.equal(1, #found)
    local by = found[1].by_name
    assert.are.equal("VarHandleOp", by["d/kernel"].op)
    assert.truthy(by.matmul)
    assert.truthy(ops_of(found[1]).AssignSubVariableOp) -- the optimizer's update
    local dir2 = tmpdir()
    model:fit(tide.ones({ 4, 3 }), tide.zeros({ 4, 2 }), { epochs = 1, batch_size = 2, verbose = 0,
      callbacks = { tide.callbacks.TensorBoard { log_dir = dir2, write_graph = false } } })
    for _, p in ipairs(reader.files(dir2 .. "/train")) do assert.are.equal(0, #graphs(p)) end
  end)

  it("refuses bad arguments with clear errors", function()
    assert.has_error(function() S.trace_on { graph = true, profiler = true } end)
    assert.has_error(function() S.trace_export { step = 0 } end,
      "summary.trace_export: name must be a non-empty string, e.g. trace_export{name = \"my_trace\", step = 0}")
    assert.has_error(function() S.graph(42) end,
      "summary.graph: expected a traced function (tide.trace) or one of its concrete functions, got number")
    local f = tide.trace(function(x) return x + 1 end)
    f(tide.ones({ 1 }))
    assert.has_error(function() S.graph(f, { bogus = 1 }) end, "summary.graph: unknown option 'bogus' (step)")
    -- trace_export needs a step, as TF's
    local w = S.create_file_writer(tmpdir())
    S.trace_on { graph = true }
    f(tide.ones({ 1 }))
    assert.has_error(function() w:as_default(function() S.trace_export { name = "nostep" } end) end)
    w:close()
  end)
end)
