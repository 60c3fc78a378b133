-- tests/spec/summary/summary_spec.lua — tide.summary: event files (name,
-- first record, framing), the default writer and step, record_if, buffering
-- and the flusher thread, the four summaries read back, and their errors.
local tide = require "tide"
local h = require "helpers"
local prog = require "tide_program"
local tmp = require "tmp"
local reader = require "event_reader"
local S = tide.summary

local tmpdir, remove_tmpdirs = tmp.dirs("summary")

local function size(path)
  local s = prog.read_file(path)
  return s and #s or -1
end

-- Wait until cond() holds (the flusher thread works on its own time).
-- (A read while the writer's thread is mid-record sees a truncated last
-- record, an error: that is "not yet" too.)
local function eventually(cond, seconds)
  local stop = os.time() + (seconds or 20)
  while os.time() <= stop do
    local ok, done = pcall(cond)
    if ok and done then return true end
    os.execute("sleep 0.02")
  end
  return cond()
end

-- The summaries (not the file_version record) of a file, as {tag, step, value}.
local function summaries(path)
  local out = {}
  for _, e in ipairs(reader.read(path)) do
    for _, v in ipairs(e.values) do out[#out + 1] = { tag = v.tag, step = e.step, v = v, event = e } end
  end
  return out
end

local function scalar_of(v) return reader.as_float(v.tensor.content) end

describe("tide.summary", function()
  teardown(remove_tmpdirs)
  after_each(function() S.experimental.set_step(nil) end)

  it("names the file as TF2 and starts it with file_version brain.Event:2", function()
    local dir = tmpdir() .. "/a/b"
    local w = S.create_file_writer(dir)
    local name = w.path:match("[^/]+$")
    local secs, host, pid, n = name:match("^events%.out%.tfevents%.(%d+)%.(.+)%.(%d+)%.(%d+)%.v2$")
    assert.truthy(secs, name)
    assert.are.equal(10, #secs)
    assert.truthy(math.abs(tonumber(secs) - os.time()) < 100)
    assert.truthy(#host > 0)
    assert.truthy(tonumber(pid) > 0 and tonumber(n) >= 0)
    -- the first record is on disk at once, so TensorBoard sees the run
    local evs = reader.read(w.path)
    assert.are.equal(1, #evs)
    assert.are.equal("brain.Event:2", evs[1].file_version)
    assert.are.equal(tonumber(secs), evs[1].wall_time)
    w:close()
    local w2 = S.create_file_writer(dir, { filename_suffix = ".mine" })
    assert.truthy(w2.path:match("%.mine$"))
    assert.are_not.equal(w.path, w2.path)
    w2:close()
  end)

  it("writes scalars with tags, steps, float32 values and the scalars plugin", function()
    local w = S.create_file_writer(tmpdir())
    local before = os.time()
    w:as_default(function()
      assert.is_true(S.scalar("loss", 0.5, { step = 0 }))
      assert.is_true(S.scalar("loss", tide.tensor(0.25, "float64"), { step = 1, description = "d" }))
      assert.is_true(S.scalar("acc", tide.tensor(3), 2)) -- a bare step, as TF's positional one
      assert.is_true(S.scalar("flag", true, { step = 3 }))
      assert.is_true(S.scalar("v", tide.Variable(1.5), { step = tide.Variable(2 ^ 40) }))
    end)
    w:close()
    local got = summaries(w.path)
    assert.are.equal(5, #got)
    local expect = { { "loss", 0, 0.5 }, { "loss", 1, 0.25 }, { "acc", 2, 3 }, { "flag", 3, 1 }, { "v", 2 ^ 40, 1.5 } }
    for i, e in ipairs(expect) do
      assert.are.equal(e[1], got[i].tag)
      assert.are.equal(e[2], got[i].step)
      assert.are.equal(e[3], scalar_of(got[i].v))
      assert.are.equal("scalars", got[i].v.plugin_name)
      assert.are.equal(1, got[i].v.tensor.dtype) -- DT_FLOAT
      assert.are.same({}, got[i].v.tensor.shape)
      assert.truthy(got[i].event.wall_time >= before - 1 and got[i].event.wall_time <= os.time() + 1)
    end
    assert.are.equal("d", got[2].v.description)
    -- float32 rounding, as TF's cast
    local w2 = S.create_file_writer(tmpdir())
    w2:as_default(function() S.scalar("third", 1 / 3, { step = 0 }) end)
    w2:close()
    local f = require("ffi").new("float[1]", 1 / 3)
    assert.are.equal(f[0], scalar_of(summaries(w2.path)[1].v))
  end)

  it("takes the step from experimental.set_step and as_default's step, and errors without one", function()
    local w = S.create_file_writer(tmpdir())
    local it_var = tide.Variable(tide.tensor(5, "int64"))
    w:as_default(function()
      h.errors("no step set", S.scalar, "x", 1)
      S.experimental.set_step(it_var)
      S.scalar("x", 1)
      it_var:assign_add(tide.tensor(1, "int64"))
      S.scalar("x", 2)
      assert.are.equal(it_var, S.experimental.get_step())
    end)
    w:as_default(function() S.scalar("y", 3) end, { step = 42 })
    assert.are.equal(it_var, S.experimental.get_step()) -- restored after as_default
    w:close()
    local got = summaries(w.path)
    assert.are.same({ 5, 6, 42 }, { got[1].step, got[2].step, got[3].step })
    h.errors("must be an integer", function()
      w = S.create_file_writer(tmpdir())
      w:as_default(function() S.scalar("x", 1, { step = 1.5 }) end)
    end)
  end)

  it("writes nothing and returns false with no default writer or when record_if is false", function()
    assert.is_nil(S.get_default_writer())
    assert.is_false(S.scalar("x", 1, { step = 0 }))
    assert.is_false(S.should_record_summaries())
    local w = S.create_file_writer(tmpdir())
    local n = 0
    w:as_default(function()
      assert.is_true(S.should_record_summaries())
      S.record_if(false, function() assert.is_false(S.scalar("no", 1, { step = 0 })) end)
      S.record_if(function() n = n + 1; return n % 2 == 0 end, function()
        for s = 1, 4 do S.scalar("odd", s, { step = s }) end
      end)
      assert.is_true(S.scalar("yes", 1, { step = 9 }))
    end)
    w:close()
    local got = summaries(w.path)
    assert.are.same({ "odd", "odd", "yes" }, { got[1].tag, got[2].tag, got[3].tag })
    assert.are.same({ 2, 4, 9 }, { got[1].step, got[2].step, got[3].step })
  end)

  it("as_default restores the previous writer and flushes, also when the function raises", function()
    local outer, inner = S.create_file_writer(tmpdir()), S.create_file_writer(tmpdir())
    outer:set_as_default()
    h.errors("boom", function()
      inner:as_default(function()
        assert.are.equal(inner, S.get_default_writer())
        S.scalar("in", 1, { step = 1 })
        error("boom")
      end)
    end)
    assert.are.equal(outer, S.get_default_writer())
    -- flushed on the way out, before close
    assert.are.equal(1, #summaries(inner.path))
    assert.are.same({ 7, "x" }, { inner:as_default(function() return 7, "x" end) })
    S.scalar("out", 2, { step = 2 })
    outer:close()
    inner:close()
    assert.are.equal("out", summaries(outer.path)[1].tag)
    h.errors("is closed", S.scalar, "late", 1, { step = 3 })
    outer:close() -- twice is fine
    inner:set_as_default()
    h.errors("is closed", S.histogram, "late", { 1 }, { step = 3 })
  end)

  it("buffers: events wait for max_queue, flush_millis, flush or close", function()
    local w = S.create_file_writer(tmpdir(), { max_queue = 1000, flush_millis = 600000 })
    local first = size(w.path)
    w:as_default(function() end) -- (as_default flushes: nothing queued)
    w:set_as_default()
    for s = 1, 3 do S.scalar("q", s, { step = s }) end
    os.execute("sleep 0.1")
    assert.are.equal(first, size(w.path))
    w:flush()
    assert.are.equal(3, #summaries(w.path))
    w:close()
    -- more than max_queue waiting: the thread writes them
    local q = S.create_file_writer(tmpdir(), { max_queue = 2, flush_millis = 600000 })
    q:set_as_default()
    for s = 1, 3 do S.scalar("q", s, { step = s }) end
    assert.is_true(eventually(function() return #summaries(q.path) == 3 end))
    q:close()
    -- flush_millis passed: the thread writes them
    local t = S.create_file_writer(tmpdir(), { max_queue = 1000, flush_millis = 50 })
    t:set_as_default()
    S.scalar("t", 1, { step = 1 })
    assert.is_true(eventually(function() return #summaries(t.path) == 1 end))
    t:close()
    local tc = S.create_file_writer(tmpdir(), { max_queue = 1000, flush_millis = 600000 })
    tc:set_as_default()
    S.scalar("c", 1, { step = 1 })
    tc:close()
    assert.are.equal(1, #summaries(tc.path))
  end)

  it("flushes what is queued when the process exits without close", function()
    local dir = tmpdir()
    local script = dir .. "/w.lua"
    prog.write_file(script, [[
local tide = require "tide"
local w = tide.summary.create_file_writer(arg[1] .. "/logs", {max_queue = 1000, flush_millis = 600000})
w:set_as_default()
for s = 0, 9 do tide.summary.scalar("s", s, {step = s}) end
os.exit(0)
]])
    local rc, _, err = prog.sh(dir, prog.quote(prog.path) .. " " .. prog.quote(script) .. " " .. prog.quote(dir))
    assert.are.equal(0, rc, err)
    local files = reader.files(dir .. "/logs")
    assert.are.equal(1, #files)
    assert.are.equal(10, #summaries(files[1]))
  end)

  it("histograms: TF2's bucketing in a [k, 3] float64 tensor", function()
    local w = S.create_file_writer(tmpdir())
    w:as_default(function()
      S.histogram("h", tide.tensor { 1, 2, 3, 4, 10 }, { step = 1, buckets = 4 })
      S.histogram("same", { 2, 2, 2 }, { step = 2, buckets = 3 })
      S.histogram("empty", tide.zeros({ 0 }), { step = 3, buckets = 2 })
      S.histogram("none", { 1, 2 }, { step = 4, buckets = -3 }) -- negative counts as 0, as TF
      S.histogram("default", tide.random.normal({ 10, 10 }, { seed = 1 }), { step = 5 })
      S.histogram("nan", tide.tensor({ 0 / 0, 1, 3 }, "float32"), { step = 6, buckets = 2 })
    end)
    w:close()
    local got = summaries(w.path)
    local function rows(i) return reader.doubles(got[i].v.tensor.content) end
    assert.are.equal("histograms", got[1].v.plugin_name)
    assert.are.equal(2, got[1].v.tensor.dtype) -- DT_DOUBLE
    assert.are.same({ 4, 3 }, got[1].v.tensor.shape)
    assert.are.same({ 1, 3.25, 3, 3.25, 5.5, 1, 5.5, 7.75, 0, 7.75, 10, 1 }, rows(1))
    assert.are.same({ 2, 2, 0, 2, 2, 0, 2, 2, 3 }, rows(2))
    assert.are.same({ 0, 0, 0, 0, 0, 0 }, rows(3))
    assert.are.same({ 0, 3 }, got[4].v.tensor.shape)
    assert.are.same({ 30, 3 }, got[5].v.tensor.shape)
    local total = 0
    local r5 = rows(5)
    for b = 0, 29 do total = total + r5[3 * b + 3] end
    assert.are.equal(100, total)
    assert.are.same({ 1, 2, 1, 2, 3, 1 }, rows(6))
    h.errors("buckets must be an integer", function()
      w = S.create_file_writer(tmpdir())
      w:as_default(function() S.histogram("x", { 1 }, { step = 0, buckets = 2.5 }) end)
    end)
  end)

  it("matches TF2's buckets on awkward data (C helper)", function()
    local ffi = require "ffi"
    local C = require("tide.binding").C
    local n = 1000
    local v = ffi.new("double[?]", n)
    for i = 0, n - 1 do v[i] = ((i * 37) % 101) / 7 - 3 end
    local out = ffi.new("double[?]", 90)
    assert.are.equal(0, C.tide_summary_histogram_buckets(v, n, 30, out))
    local lo, hi = -3, 100 / 7 - 3
    local width = (hi - lo) / 30
    local counts = {}
    for b = 0, 29 do counts[b] = 0 end
    for i = 0, n - 1 do
      local b = math.min(math.floor((v[i] - lo) / width), 29)
      counts[b] = counts[b] + 1
    end
    for b = 0, 29 do
      assert.are.equal(b == 0 and lo or lo + width * b, out[3 * b])
      assert.are.equal(b == 29 and hi or lo + width * (b + 1), out[3 * b + 1])
      assert.are.equal(counts[b], out[3 * b + 2])
    end
  end)

  it("text: a string or a nested table of strings, plugin text", function()
    local w = S.create_file_writer(tmpdir())
    w:as_default(function()
      S.text("note", "hello *md*", { step = 1 })
      S.text("grid", { { "a", "b" }, { "c", "d\0e" } }, { step = 2 })
      S.text("empty", {}, { step = 3 })
    end)
    w:close()
    local got = summaries(w.path)
    assert.are.equal("text", got[1].v.plugin_name)
    assert.are.equal(7, got[1].v.tensor.dtype) -- DT_STRING
    assert.are.same({}, got[1].v.tensor.shape)
    assert.are.same({ "hello *md*" }, got[1].v.tensor.strings)
    assert.are.same({ 2, 2 }, got[2].v.tensor.shape)
    assert.are.same({ "a", "b", "c", "d\0e" }, got[2].v.tensor.strings)
    assert.are.same({ 0 }, got[3].v.tensor.shape)
    w = S.create_file_writer(tmpdir())
    w:set_as_default()
    h.errors("ragged", S.text, "r", { { "a" }, { "b", "c" } }, { step = 0 })
    h.errors("ragged", S.text, "r", { "a", { "b" } }, { step = 0 })
    h.errors("nested table of strings", S.text, "r", { 1, 2 }, { step = 0 })
    w:close()
  end)

  it("images: [width, height, PNGs] strings, max_outputs, float scaling as TF", function()
    local w = S.create_file_writer(tmpdir())
    local px = {}
    for i = 0, 2 * 3 * 4 * 3 - 1 do px[#px + 1] = (i % 7) / 6 end
    local imgs = tide.tensor(px, "float32"):reshape { 2, 3, 4, 3 }
    w:as_default(function()
      S.image("rgb", imgs, { step = 1 })
      S.image("one", imgs, { step = 2, max_outputs = 1 })
      S.image("none", imgs, { step = 3, max_outputs = 0 })
      S.image("u8", tide.fill({ 1, 2, 2, 1 }, 200):cast("uint8"), { step = 4 })
    end)
    w:close()
    local got = summaries(w.path)
    local t = got[1].v.tensor
    assert.are.equal("images", got[1].v.plugin_name)
    assert.are.same({ 4 }, t.shape)
    assert.are.equal("4", t.strings[1])
    assert.are.equal("3", t.strings[2])
    assert.are.equal("\137PNG\r\n\26\n", t.strings[3]:sub(1, 8))
    assert.are.same({ 3 }, got[2].v.tensor.shape)
    assert.are.same({ 2 }, got[3].v.tensor.shape)
    assert.are.same({ "2", "2" }, { got[4].v.tensor.strings[1], got[4].v.tensor.strings[2] })
    -- IHDR: width, height, bit depth 8, color type 2 (RGB) / 0 (gray)
    local ihdr = t.strings[3]:sub(17, 26)
    assert.are.equal("\0\0\0\4\0\0\0\3\8\2", ihdr)
    assert.are.equal("\8\0", got[4].v.tensor.strings[3]:sub(25, 26))
    w = S.create_file_writer(tmpdir())
    w:set_as_default()
    h.errors("rank 4", S.image, "x", tide.zeros { 2, 2, 3 }, { step = 0 })
    h.errors("1 to 4 channels", S.image, "x", tide.zeros { 1, 2, 2, 5 }, { step = 0 })
    h.errors("uint8 or float", S.image, "x", tide.zeros({ 1, 2, 2, 1 }, "int32"), { step = 0 })
    h.errors("max_outputs", S.image, "x", tide.zeros { 1, 2, 2, 1 }, { step = 0, max_outputs = -1 })
    h.errors("empty image", S.image, "x", tide.zeros { 1, 0, 2, 1 }, { step = 0 })
    w:close()
  end)

  it("gives clear errors for bad arguments", function()
    h.errors("logdir must be a folder name", S.create_file_writer, "")
    h.errors("logdir must be a folder name", S.create_file_writer, nil)
    h.errors("unknown option 'flush'", S.create_file_writer, "/tmp/x", { flush = 1 })
    h.errors("max_queue must be an integer", S.create_file_writer, "/tmp/x", { max_queue = -1 })
    h.errors("flush_millis must be an integer", S.create_file_writer, "/tmp/x", { flush_millis = 0 })
    local dir = tmpdir()
    prog.write_file(dir .. "/file", "x")
    h.errors("cannot create the folder", S.create_file_writer, dir .. "/file/logs")
    local w = S.create_file_writer(tmpdir())
    w:set_as_default()
    h.errors("name must be a non-empty string", S.scalar, "", 1, { step = 0 })
    h.errors("unknown option 'stepp'", S.scalar, "x", 1, { stepp = 0 })
    h.errors("must be a scalar", S.scalar, "x", tide.tensor { 1, 2 }, { step = 0 })
    h.errors("must be a number or a scalar tensor", S.scalar, "x", "1", { step = 0 })
    h.errors("description must be a string", S.scalar, "x", 1, { step = 0, description = 3 })
    h.errors("data is nil", S.histogram, "x", nil, { step = 0 })
    h.errors("as_default: pass the function", w.as_default, w)
    h.errors("record_if: condition", S.record_if, 1, function() end)
    w:close()
  end)

  it("refuses text and image summaries inside tide.trace with a message that says what to do", function()
    local w = S.create_file_writer(tmpdir())
    w:set_as_default()
    local f = tide.trace(function(x)
      S.text("in_trace", "words", { step = 0 })
      return x * 2
    end)
    h.errors("summary.text 'in_trace': text summaries cannot be written from inside a traced function yet " ..
      "(scalar and histogram can)", f, tide.tensor(1.5))
    w:close()
  end)

  it("frames records with masked CRC-32C: a flipped byte is an error naming the offset", function()
    local w = S.create_file_writer(tmpdir())
    w:as_default(function() S.scalar("x", 1, { step = 0 }) end)
    w:close()
    local bytes = prog.read_file(w.path)
    assert.are.equal(2, #reader.records(w.path))
    local first_len = bytes:byte(1) -- the first record is short: one length byte
    local at = 12 + first_len + 4 + 12 + 3 -- inside the second record's data
    local bad = bytes:sub(1, at - 1) .. string.char((bytes:byte(at) + 1) % 256) .. bytes:sub(at + 1)
    local path = w.path .. ".bad"
    prog.write_file(path, bad)
    h.errors("offset", reader.records, path)
  end)

  it("closes and flushes a writer the collector takes", function()
    local dir = tmpdir()
    do
      local w = S.create_file_writer(dir, { max_queue = 100, flush_millis = 600000 })
      w:as_default(function() end)
      w:set_as_default()
      S.scalar("gc", 1, { step = 0 })
      -- forget it: a new default replaces it
      S.create_file_writer(tmpdir()):set_as_default()
    end
    collectgarbage()
    collectgarbage()
    local files = reader.files(dir)
    assert.are.equal(1, #summaries(files[1]))
    S.get_default_writer():close()
  end)
end)
