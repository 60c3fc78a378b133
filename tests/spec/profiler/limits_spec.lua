-- tests/spec/profiler/limits_spec.lua — the profiler's limits and finer events:
-- the cap on kept events (dropped ones counted in the trace's otherData and
-- in summary), the kernel pool's per-thread chunk events, and graph building
-- (trace, graph passes, plans) as "compile" events; each read back from the written JSON.
local tide = require "tide"
local tmp = require "tmp"

local P = tide.profiler

local ev = require "trace_events"
local events_of, find_all, inside = ev.events_of, ev.find_all, ev.inside

-- print's output while fn runs, as one string
local function printed(fn)
  local lines, real = {}, _G.print
  _G.print = function(...)
    local parts = {}
    for i = 1, select("#", ...) do parts[i] = tostring(select(i, ...)) end
    lines[#lines + 1] = table.concat(parts, "\t")
  end
  local ok, err = pcall(fn)
  _G.print = real
  assert(ok, err)
  return table.concat(lines, "\n")
end

describe("tide.profiler limits", function()
  local tmpdir, remove_tmpdirs = tmp.dirs("profiler_limits")
  teardown(remove_tmpdirs)
  after_each(function() if P.active() then P.stop() end end)

  describe("the cap on events", function()
    it("keeps max_events and counts the rest, in the trace's otherData and in summary", function()
      local a = tide.ones { 4 }
      P.start(nil, { max_events = 10 })
      for _ = 1, 50 do local _ = a + a end
      P.stop()
      assert.are.equal(10, P.event_count())
      assert.are.equal(40, P.dropped_events())
      local trace = P.read_trace(P.write_trace(tmpdir() .. "/capped.json"))
      local xs = events_of(trace)
      assert.are.equal(10, #xs)
      assert.are.same({ max_events = 10, recorded_events = 10, dropped_events = 40 }, trace.otherData)
      local rows
      local out = printed(function() rows = P.summary() end)
      assert.are.equal(40, rows.dropped_events)
      assert.are.equal(10, rows[1].calls)
      assert.truthy(out:find("40 events dropped", 1, true), out)
      assert.truthy(out:find("max_events", 1, true), out)
    end)

    it("starts each session with its own cap and count; the default holds without options", function()
      local a = tide.ones { 4 }
      P.start(nil, { max_events = 3 })
      for _ = 1, 5 do local _ = a + a end
      P.stop()
      assert.are.equal(2, P.dropped_events())
      P.start()
      for _ = 1, 5 do local _ = a + a end
      P.stop()
      assert.are.equal(0, P.dropped_events())
      assert.are.equal(5, P.event_count())
      local trace = P.read_trace(P.write_trace(tmpdir() .. "/default.json.gz"))
      assert.are.equal(P.DEFAULT_MAX_EVENTS, trace.otherData.max_events)
      assert.are.equal(1000000, P.DEFAULT_MAX_EVENTS)
      assert.are.equal(0, trace.otherData.dropped_events)
      local rows
      local out = printed(function() rows = P.summary() end)
      assert.are.equal(0, rows.dropped_events)
      assert.is_nil(out:find("dropped", 1, true))
    end)

    it("rejects bad options, naming them", function()
      for _, case in ipairs {
        { { max_events = 0 }, "max_events must be a positive integer, got 0" },
        { { max_events = -5 }, "max_events must be a positive integer" },
        { { max_events = 1.5 }, "max_events must be a positive integer, got 1.5" },
        { { max_events = "many" }, "max_events must be a positive integer, got many" },
        { { max_event = 5 }, "unknown option 'max_event'" },
        { "max", "options must be a table" },
      } do
        local ok, err = pcall(P.start, nil, case[1])
        assert.is_false(ok)
        assert.truthy(tostring(err):find(case[2], 1, true), tostring(err))
        assert.is_false(P.active())
      end
    end)
  end)

  describe("the kernel pool's chunks", function()
    local threads
    before_each(function() threads = tide.config.get_num_threads and tide.config.get_num_threads() end)
    after_each(function() if threads then tide.config.set_num_threads(threads) end end)

    it("records each thread's chunks of an eager op as worker events named by the op", function()
      tide.config.set_num_threads(2)
      local n = 1048576 -- 16 grains of cheap elementwise work: split over the pool
      local a, b = tide.ones { n }, tide.ones { n }
      -- A loaded machine may leave the pool's thread asleep through a whole
      -- session: up to 5 sessions of 20 ops for one chunk run on it.
      local other_thread, range, xs, names, adds, workers = 0, nil, nil, nil, nil, nil
      for _ = 1, 5 do
        P.start()
        for _ = 1, 20 do local _ = a + b end
        local small = tide.ones { 8 } + tide.ones { 8 } -- inline: no worker event
        P.stop()
        assert.is_not_nil(small)
        xs, names = events_of(P.read_trace(P.write_trace(tmpdir() .. "/pool.json")))
        adds = find_all(xs, function(e) return e.cat == "op" and e.name == "add" end)
        assert.are.equal(21, #adds)
        workers = find_all(xs, function(e) return e.cat == "worker" end)
        assert.is_true(#workers >= 20)
        for i = 1, 20 do
          local op = adds[i]
          -- the op's chunks: on the caller inside the op, elsewhere overlapping it; together the
          -- whole range the kernel split (in its own units: the same for every call)
          local mine = find_all(workers, function(w)
            return w.ts >= op.ts - 0.001 and w.ts <= op.ts + op.dur + 0.002
          end)
          local items, tids = 0, {}
          for _, w in ipairs(mine) do
            assert.are.equal("add", w.name)
            local chunks, count = w.args.chunks:match("^(%d+) chunks?, (%d+) items$")
            assert.truthy(chunks, w.args.chunks)
            assert.is_true(tonumber(chunks) >= 1)
            items = items + tonumber(count)
            assert.is_nil(tids[w.tid], "one event per thread per op")
            tids[w.tid] = true
            if w.tid == op.tid then assert.is_true(inside(w, op)) else
              other_thread = other_thread + 1
              assert.is_string(names[w.tid])
            end
          end
          range = range or items
          assert.are.equal(range, items)
        end
        assert.are.equal(0, #find_all(workers, function(w) return inside(w, adds[21]) end))
        if other_thread > 0 then break end
      end
      assert.is_true(range >= 2)
      assert.is_true(other_thread >= 1, "no chunk ran on a pool thread in 100 ops of 1M elements")
      -- the summary: worker rows, left out of the shares' total
      local rows = P.summary { print = false, category = "worker" }
      assert.are.equal("add", rows[1].name)
      assert.is_true(rows[1].calls >= 20)
      local all, share = P.summary { print = false }, 0
      for _, r in ipairs(all) do if r.category ~= "worker" then share = share + r.share end end
      assert.is_true(math.abs(share - 1) < 1e-9, share)
      -- a row's share is the same with a category kept or not (it was 0 for every worker row)
      local function row_of(list, cat, name)
        return find_all(list, function(r) return r.category == cat and r.name == name end)[1]
      end
      assert.is_true(rows[1].share > 0)
      assert.is_true(math.abs(rows[1].share - row_of(all, "worker", "add").share) < 1e-12)
      -- a worker event takes no self time from the op it runs inside
      local add_row = find_all(all, function(r) return r.category == "op" and r.name == "add" end)[1]
      assert.is_true(math.abs(add_row.self_ms - add_row.total_ms) < 1e-9)
    end)

    it("names a traced graph node's chunks by the node", function()
      tide.config.set_num_threads(2)
      local big = tide.trace(function(v) return tide.reduce_sum(v, 0) end, { name = "colsum" })
      local v = tide.ones { 1024, 1024 }
      big(v) -- traced and planned before the session
      P.start()
      for _ = 1, 5 do big(v) end
      P.stop()
      local xs = events_of(P.read_trace(P.write_trace(tmpdir() .. "/graph_pool.json")))
      local nodes = find_all(xs, function(e) return e.cat == "node" end)
      local workers = find_all(xs, function(e) return e.cat == "worker" end)
      assert.is_true(#workers >= 5)
      for _, w in ipairs(workers) do
        local node = find_all(nodes, function(nd) return w.ts >= nd.ts - 0.001 and w.ts <= nd.ts + nd.dur + 0.002 end)[1]
        assert.is_not_nil(node, "a worker event outside every node")
        assert.are.equal(node.name, w.name)
      end
    end)
  end)

  describe("graph building", function()
    it("records tracing, the graph passes and each new plan as compile events naming the function", function()
      local f = tide.trace(function(x) return tide.exp(x) * 2 + x end, { name = "built_here" })
      P.start()
      f(tide.ones { 2, 3 })
      f(tide.ones { 2, 3 }) -- the same trace and plan: nothing new
      P.stop()
      local xs = events_of(P.read_trace(P.write_trace(tmpdir() .. "/compile.json")))
      local compile = find_all(xs, function(e) return e.cat == "compile" end)
      local by_name = {}
      for _, e in ipairs(compile) do
        assert.are.equal("built_here", e.args.graph)
        assert.is_nil(by_name[e.name], "one " .. e.name .. " event")
        by_name[e.name] = e
      end
      assert.is_not_nil(by_name.trace)
      assert.is_not_nil(by_name.graph_passes)
      assert.is_not_nil(by_name.plan)
      assert.are.equal(3, #compile)
      -- tracing ends before the passes run; the plan comes at the first run, inside it
      assert.is_true(by_name.trace.ts + by_name.trace.dur <= by_name.graph_passes.ts + 0.002)
      local runs = find_all(xs, function(e) return e.cat == "graph" and e.name == "built_here" end)
      assert.are.equal(2, #runs)
      assert.is_true(by_name.plan.ts >= by_name.graph_passes.ts)
      local rows = P.summary { print = false, category = "compile" }
      assert.are.equal(3, #rows)
    end)

    it("records a plan for each new input shape", function()
      local f = tide.trace(function(x) return x * 3 end, { name = "per_shape", reduce_retracing = true })
      f(tide.ones { 2 })
      P.start()
      f(tide.ones { 5 })
      f(tide.ones { 7 })
      f(tide.ones { 7 })
      P.stop()
      local xs = events_of(P.read_trace(P.write_trace(tmpdir() .. "/plans.json")))
      local plans = find_all(xs, function(e) return e.cat == "compile" and e.name == "plan" end)
      assert.is_true(#plans >= 2, "a plan for 5 and one for 7")
      assert.is_true(#plans <= 3)
    end)
  end)
end)
