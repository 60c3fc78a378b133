-- tests/spec/profiler/profiler_spec.lua — tide.profiler: sessions, the
-- Chrome trace (parsed back as JSON: events, threads, nesting, durations)
-- of eager ops, traced graphs and a pipeline's worker threads, user
-- ranges, the summary, TensorBoard's profile_batch, and errors.
local tide = require "tide"
local h = require "helpers"
local tmp = require "tmp"
local C = require("tide.binding").C

local P = tide.profiler

local ev = require "trace_events"
local events_of, find_all, inside = ev.events_of, ev.find_all, ev.inside

local function this_file() return debug.getinfo(1, "S").short_src:match("[^/]*$") end

describe("tide.profiler", function()
  local tmpdir, remove_tmpdirs = tmp.dirs("profiler")
  teardown(remove_tmpdirs)
  after_each(function() if P.active() then P.stop() end end)

  it("gives sessions started in the same second their own runs (profiling every N steps)", function()
    local dir = tmpdir()
    local paths = {}
    for i = 1, 3 do
      P.start(dir)
      local _ = tide.ones({ 2 }) + i
      paths[i] = P.stop()
    end
    assert.are_not.equal(paths[1], paths[2])
    assert.are_not.equal(paths[2], paths[3])
    for i = 1, 3 do assert.is_true(#P.read_trace(paths[i]).traceEvents > 0, paths[i]) end
    -- within one second the second and third runs carry _2 and _3
    if paths[1]:match("profile/([^/]+)/") == paths[3]:match("profile/([^/]+)/"):gsub("_%d$", "") then
      assert.truthy(paths[3]:find("_3/[^/]+$"), paths[3])
    end
  end)

  it("writes eager ops and traced graphs as a Chrome trace in TensorBoard's profile layout", function()
    local dir = tmpdir()
    local a = tide.ones({ 2, 3 })
    local f = tide.trace(function(x) return tide.exp(x) * 2 + x end, { name = "scaled_exp" })
    f(a) -- traced before the session: only its runs are recorded
    P.start(dir)
    assert.is_true(P.active())
    for _ = 1, 3 do local _ = a + a end
    f(a)
    local path = P.stop()
    assert.is_false(P.active())
    assert.truthy(path:find("^" .. dir:gsub("%p", "%%%0") .. "/plugins/profile/%d%d%d%d_%d%d_%d%d_%d%d_%d%d_%d%d/[^/]+%.trace%.json%.gz$"),
      path)
    local trace = P.read_trace(path)
    local xs, names = events_of(trace)
    assert.is_true(#xs >= 5)
    for _, e in ipairs(xs) do
      assert.is_number(e.ts)
      assert.is_number(e.dur)
      assert.is_true(e.ts >= 0 and e.dur >= 0, e.name)
      assert.is_number(e.pid)
      assert.is_number(e.tid)
      assert.is_string(e.cat)
    end
    local adds = find_all(xs, function(e) return e.cat == "op" and e.name == "add" end)
    assert.are.equal(3, #adds)
    assert.are.equal("float32[2, 3] float32[2, 3]", adds[1].args.inputs)
    assert.is_string(names[adds[1].tid])
    local runs = find_all(xs, function(e) return e.cat == "graph" and e.name == "scaled_exp" end)
    assert.are.equal(1, #runs)
    local nodes = find_all(xs, function(e) return e.cat == "node" end)
    assert.is_true(#nodes >= 1)
    for _, n in ipairs(nodes) do
      assert.is_true(inside(n, runs[1]), "node " .. n.name .. " outside its graph's run")
      assert.truthy(n.args.recorded_at:find(this_file(), 1, true), n.args.recorded_at)
    end
    -- the traced graph fused its elementwise chain: one node names its ops
    assert.truthy(nodes[1].name:find("exp", 1, true), nodes[1].name)
    -- eager ops come before the graph's run, in order
    assert.is_true(adds[3].ts + adds[3].dur <= runs[1].ts + 0.002)
  end)

  it("records pipeline stages, with map functions on the worker threads", function()
    local ds = tide.data.Dataset.range(12):map(function(v) return v * 2 + 1 end, { parallel = 2 }):batch(3)
    P.start()
    local n = 0
    for _ in ds:iter() do n = n + 1 end
    assert.is_nil(P.stop()) -- no logdir: nothing written
    assert.are.equal(4, n)
    local dir = tmpdir()
    local trace = P.read_trace(P.write_trace(dir .. "/t.json"))
    local xs, names = events_of(trace)
    local main_tid = find_all(xs, function(e) return e.name == "batch" end)[1].tid
    local fns = find_all(xs, function(e) return e.cat == "data" and e.name == "map_function" end)
    assert.are.equal(12, #fns)
    for _, e in ipairs(fns) do
      assert.are_not.equal(main_tid, e.tid)
      assert.are.equal("tide-map", names[e.tid])
      -- the function's graph run nests inside it on the worker's thread
      local run = find_all(xs, function(g) return g.cat == "graph" and inside(g, e) end)
      assert.are.equal(1, #run)
      local nodes = find_all(xs, function(g) return g.cat == "node" and inside(g, run[1]) end)
      assert.is_true(#nodes >= 1)
    end
    -- each batch pulled 3 elements from the map stage inside it (one more at the end)
    local batches = find_all(xs, function(e) return e.cat == "data" and e.name == "batch" end)
    assert.is_true(#batches >= 4)
    local pulls = find_all(xs, function(e) return e.name == "parallel_map" and inside(e, batches[1]) end)
    assert.are.equal(3, #pulls)
  end)

  it("records user ranges around what they run, and passes results and errors through", function()
    P.start()
    local r1, r2 = P.trace("step", function(a, b) return a + b, "x" end, tide.ones { 2 }, tide.ones { 2 })
    local ok, err = pcall(P.trace, "failing", function() error("boom") end)
    P.stop()
    assert.are.same({ 2, 2 }, r1:totable())
    assert.are.equal("x", r2)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("boom", 1, true))
    local dir = tmpdir()
    local xs = events_of(P.read_trace(P.write_trace(dir .. "/t.json.gz")))
    local step = find_all(xs, function(e) return e.cat == "user" and e.name == "step" end)
    assert.are.equal(1, #step)
    local add = find_all(xs, function(e) return e.name == "add" end)
    assert.are.equal(1, #add)
    assert.is_true(inside(add[1], step[1]))
    assert.are.equal(1, #find_all(xs, function(e) return e.name == "failing" end))
  end)

  it("summarizes calls, total and self time by name, shares summing to one", function()
    local a = tide.ones { 4 }
    local f = tide.trace(function(x) return tide.sin(x) end, { name = "sine" })
    f(a)
    P.start()
    for _ = 1, 5 do local _ = a * a end
    for _ = 1, 2 do f(a) end
    P.stop()
    local rows = P.summary { print = false }
    local by = {}
    local share = 0
    for _, r in ipairs(rows) do
      by[r.category .. ":" .. r.name] = r
      share = share + r.share
      assert.is_true(r.self_ms <= r.total_ms + 1e-9)
    end
    assert.is_true(math.abs(share - 1) < 1e-6)
    assert.are.equal(5, by["op:mul"].calls)
    assert.are.equal(2, by["graph:sine"].calls)
    assert.are.equal(2, by["node:sin"].calls)
    -- the graph's self time excludes its node's
    assert.is_true(by["graph:sine"].self_ms <= by["graph:sine"].total_ms - by["node:sin"].total_ms + 1e-6)
    local ops = P.summary { print = false, category = "op" }
    for _, r in ipairs(ops) do
      assert.are.equal("op", r.category)
      assert.is_true(math.abs(r.share - by["op:" .. r.name].share) < 1e-12) -- over every row's self time, as unfiltered
    end
    -- sorted by self time
    for i = 2, #rows do assert.is_true(rows[i - 1].self_ms >= rows[i].self_ms) end
  end)

  it("records nothing while stopped, and a new session drops the old events", function()
    P.start()
    local _ = tide.ones { 2 } + 1
    P.stop()
    local n = tonumber(C.tide_profiler_event_count())
    assert.is_true(n >= 1)
    for _ = 1, 10 do _ = tide.ones { 2 } + 1 end
    assert.are.equal(n, tonumber(C.tide_profiler_event_count()))
    P.start()
    P.stop()
    assert.are.equal(0, tonumber(C.tide_profiler_event_count()))
  end)

  it("profiles the batches TensorBoard's profile_batch names", function()
    local dir = tmpdir()
    local x = tide.random.normal({ 40, 3 }, { seed = 1 })
    local y = tide.random.normal({ 40, 1 }, { seed = 2 })
    local m = tide.Sequential { tide.Input { shape = { 3 } }, tide.layers.Dense { 4 }, tide.layers.Dense { 1 } }
    m:compile { optimizer = "sgd", loss = "mse" }
    local tb = tide.callbacks.TensorBoard { log_dir = dir, profile_batch = { 2, 3 } }
    m:fit(x, y, { epochs = 2, batch_size = 10, verbose = 0, callbacks = { tb } })
    assert.is_false(P.active())
    assert.truthy(tb.profile_path:find(dir .. "/train/plugins/profile/", 1, true))
    local xs = events_of(P.read_trace(tb.profile_path))
    local steps = find_all(xs, function(e) return e.cat == "user" and e.name == "train_batch" end)
    assert.are.equal(2, #steps)
    local runs = find_all(xs, function(e) return e.cat == "graph" and e.name == "train_function" end)
    assert.are.equal(2, #runs)
    for i = 1, 2 do assert.is_true(inside(runs[i], steps[i])) end
    assert.is_true(#find_all(xs, function(e) return e.cat == "node" and e.name:find("matmul", 1, true) end) >= 2)
    -- a single batch, and a range past the end of fit (stopped at its end)
    tb = tide.callbacks.TensorBoard { log_dir = dir .. "/b", profile_batch = 100 }
    m:fit(x, y, { epochs = 1, batch_size = 10, verbose = 0, callbacks = { tb } })
    assert.is_nil(tb.profile_path)
    tb = tide.callbacks.TensorBoard { log_dir = dir .. "/c", profile_batch = { 4, 9 } }
    m:fit(x, y, { epochs = 1, batch_size = 10, verbose = 0, callbacks = { tb } })
    assert.is_false(P.active())
    assert.are.equal(1, #find_all(events_of(P.read_trace(tb.profile_path)),
      function(e) return e.name == "train_batch" end))
    h.errors("profile_batch must be 0, a batch number", tide.callbacks.TensorBoard, { profile_batch = { 3, 2 } })
    h.errors("profile_batch must be 0, a batch number", tide.callbacks.TensorBoard, { profile_batch = -1 })
  end)

  it("refuses misuse with clear errors", function()
    h.errors("logdir must be a string", P.start, 12)
    h.errors("no profiling session is running", P.stop)
    P.start()
    h.errors("already running", P.start)
    h.errors("stop the session first", P.summary)
    h.errors("stop the session before writing", P.write_trace, "/tmp/never.json")
    P.stop()
    h.errors("cannot write the trace", P.write_trace, "/nonexistent_dir_for_tide/t.json")
    h.errors("cannot open", P.read_trace, "/nonexistent_dir_for_tide/t.json")
    -- a file that is not JSON: the error names the file (and still says where the JSON broke)
    local garbage = tmpdir() .. "/garbage.json"
    local f = assert(io.open(garbage, "wb"))
    f:write(("\1x"):rep(500))
    f:close()
    local err = h.errors("'" .. garbage .. "' is not a Chrome trace", P.read_trace, garbage)
    assert.truthy(err:find("invalid JSON at byte 1 of 1000", 1, true), err)
    assert.truthy(err:find("tide.profiler.read_trace: ", 1, true), err)
    h.errors("name must be a string", P.trace, 1, function() end)
    h.errors("fn must be a function", P.trace, "x", 1)
    h.errors("options must be a table", P.summary, 3)
  end)
end)
