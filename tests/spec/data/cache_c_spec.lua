-- tests/spec/data/cache_c_spec.lua — the cache stage in C (kernels/data/cache.c):
-- memory and file caches replay their first full pass, keep nothing from a
-- partial or failed one (warning once), every dtype and strings round-trip,
-- two passes at once behave as TF 2.21's, and the file's lock and temporaries.
local lcg_step = require "lcg"
local tide = require "tide"
local binding = require "tide.binding"
local h = require "helpers"
local prog = require "tide_program"
local c_engine = require "tide.data.c_engine"
local D = tide.data.Dataset
local C = binding.C

local function listing(dir)
  local p = io.popen("ls -A " .. prog.quote(dir))
  local out = {}
  for line in p:lines() do out[#out + 1] = line end
  p:close()
  table.sort(out)
  return out
end

local function items(ds)
  local t = {}
  for x in ds:iter() do t[#t + 1] = x:item() end
  return t
end

local stderr_of = h.stderr_of

-- A pid no process has now (a shell that has exited).
local function dead_pid(dir)
  local _, out = prog.sh(dir, "sh -c 'echo $$'")
  return assert(tonumber(out:match("%d+")))
end

-- Start a pass over ds, take k elements and drop it, then collect it: in a
-- frame of its own (no stack slot of the caller keeps the iterator), and
-- with the JIT's traces flushed (a trace may hold the iterator's closure as a
-- constant, keeping it alive until the trace goes).
local function drop_midway(ds, k)
  (function()
    local it = ds:iter()
    for _ = 1, k do it() end
  end)()
  jit.flush()
  collectgarbage(); collectgarbage()
end

-- A C dataset whose passes differ: a reshuffling shuffle of 0..n-1.
local function reshuffled(n) return D.range(n):shuffle(n, { seed = 7 }) end

describe("cache in C", function()
  local dir
  before_each(function() dir = prog.make_tmpdir("cache_c") end)
  after_each(function() prog.remove_tmpdir(dir) end)

  it("keeps nothing from a partial pass, warns once naming take(k).cache(), then keeps the first full pass", function()
    local mem = reshuffled(20):cache()
    local file = reshuffled(20):cache(dir .. "/p.cache")
    assert.is_true(c_engine.supports(mem))
    assert.is_true(c_engine.supports(file))
    local msg = stderr_of(function()
      assert.are.equal(3, #mem:take(3):totable())
      assert.are.equal(2, #file:take(2):totable())
      drop_midway(file, 1)
    end)
    assert.is_truthy(msg:find("take(k):cache()", 1, true), msg)
    local _, n = msg:gsub("stopped before its end", "")
    assert.are.equal(1, n) -- once
    assert.are.same({}, listing(dir)) -- neither a cache nor a temporary file nor a lock
    local input = reshuffled(20)
    assert.are_not.same(items(input), items(input)) -- the input itself reshuffles each pass
    for _, ds in ipairs { mem, file } do
      local first = items(ds)
      assert.are.equal(20, #first)
      assert.are.same(first, items(ds)) -- replayed, not reshuffled
    end
    assert.are.same({ "p.cache" }, listing(dir))
    -- the partial count the engine keeps for hosts
    assert.is_true(tonumber(C.tide_data_cache_partial_passes()) >= 3)
  end)

  it("replays the first full pass: later passes and repeat_ epochs are identical", function()
    for _, ds in ipairs { reshuffled(30):cache(), reshuffled(30):cache(dir .. "/r.cache") } do
      local first = items(ds)
      local again = items(ds:repeat_(3))
      assert.are.equal(90, #again)
      for i = 1, 90 do assert.are.equal(first[(i - 1) % 30 + 1], again[i]) end
      local sorted = { unpack(first) }
      table.sort(sorted)
      for i = 1, 30 do assert.are.equal(i - 1, sorted[i]) end
    end
    -- a new pipeline over the file reads it, whatever its input (the file decides, as TF)
    assert.are.same(items(reshuffled(30):cache(dir .. "/r.cache")), items(D.range(5):cache(dir .. "/r.cache")))
    assert.are.equal(30, #items(D.range(5):cache(dir .. "/r.cache")))
  end)

  it("round-trips every dtype, strings and strided elements, in memory and in a file", function()
    local names = { "float32", "float64", "float16", "bfloat16", "int8", "uint8", "int32", "int64", "bool" }
    local comps = {}
    for i, dt in ipairs(names) do
      local v = {}
      for r = 1, 3 do v[r] = { (r * 7 + i) % 5, r + i % 3 + (dt == "float32" and 0.5 or 0) } end
      comps[i] = dt == "bool" and tide.tensor({ { true, false }, { false, false }, { true, true } }) or tide.tensor(v, dt)
    end
    local long = string.rep("xy\0z", 5000)
    comps[#comps + 1] = tide.tensor { { "a", "" }, { "caf\xc3\xa9", long }, { "\0", "last" } }
    names[#names + 1] = "string"
    local want = D.from_tensor_slices(comps):totable()
    local function same(got)
      assert.are.equal(3, #got)
      for r = 1, 3 do
        for k, dt in ipairs(names) do
          assert.are.equal(dt, got[r][k].dtype)
          assert.are.same(want[r][k].shape, got[r][k].shape)
          assert.are.same(want[r][k]:totable(), got[r][k]:totable())
        end
      end
    end
    for _, path in ipairs { false, dir .. "/all.cache" } do
      local ds = D.from_tensor_slices(comps):cache(path or nil)
      assert.is_true(c_engine.supports(ds))
      same(ds:totable())
      same(ds:totable())
    end
    same(D.from_tensor_slices(comps):cache(dir .. "/all.cache"):totable()) -- a new pipeline reads the file
    -- strided elements (a transposed view from a traced map) are written in row-major order
    local x = tide.range(0, 24, 1, "int32"):reshape { 4, 2, 3 }
    local tds = D.from_tensor_slices(x):map(function(e) return e:transpose() end)
    local wantt = {}
    for e in tds:iter() do wantt[#wantt + 1] = e:totable() end
    for _, path in ipairs { false, dir .. "/t.cache" } do
      local ds = tds:cache(path or nil)
      for _ = 1, 2 do
        local got = {}
        for e in ds:iter() do got[#got + 1] = e:totable() end
        assert.are.same(wantt, got)
      end
    end
  end)

  it("two passes at once: a second writer of one file is TF's AlreadyExists error; memory passes both run", function()
    local path = dir .. "/c.cache"
    local ds = D.range(6):cache(path)
    local a = ds:iter()
    assert.are.equal(0, a():item())
    local b = ds:iter()
    local err = h.errors("another pass is writing the cache file " .. path, function() b() end)
    assert.is_truthy(err:find(path .. ".lock", 1, true), err)
    assert.is_truthy(err:find("held by this process", 1, true), err)
    local rest = {}
    for x in a do rest[#rest + 1] = x:item() end
    assert.are.same({ 1, 2, 3, 4, 5 }, rest)
    b = nil
    collectgarbage()
    assert.are.same({ "c.cache" }, listing(dir)) -- the lock went with the writer
    assert.are.same({ 0, 1, 2, 3, 4, 5 }, items(ds))
    -- memory: both passes run the input and keep all of it; the first to end fills the cache
    local mem = reshuffled(8):cache()
    local ia, ib = mem:iter { prefetch = false }, mem:iter { prefetch = false }
    local ga, gb = {}, {}
    for _ = 1, 8 do
      ga[#ga + 1] = ia():item()
      gb[#gb + 1] = ib():item()
    end
    assert.is_nil(ib()) -- b ends first
    assert.is_nil(ia())
    assert.are_not.same(ga, gb) -- two passes of the reshuffling input
    assert.are.same(gb, items(mem))
  end)

  it("the Lua engine's file cache (above a generator) takes the same lock; its memory cache keeps the first to end", function()
    local function gen_ds()
      return D.from_generator(function()
        local i = -1
        return function() i = i + 1; if i < 4 then return tide.tensor(i, "int32") end end
      end, { output_signature = tide.TensorSpec({}, "int32") })
    end
    local path = dir .. "/g.cache"
    local ds = gen_ds():cache(path)
    assert.is_false(c_engine.supports(ds))
    local a = ds:iter()
    assert.are.equal(0, a():item())
    h.errors("another pass is writing the cache file " .. path, function() local b = ds:iter(); b() end)
    local rest = {}
    for x in a do rest[#rest + 1] = x:item() end
    assert.are.same({ 1, 2, 3 }, rest)
    assert.are.same({ "g.cache" }, listing(dir))
    assert.are.same({ 0, 1, 2, 3 }, items(ds))
    -- memory: two passes at once; the first to end fills the cache
    local n = 0
    local mem = D.from_generator(function()
      n = n + 1
      local base, i = n * 10, -1
      return function() i = i + 1; if i < 3 then return tide.tensor(base + i, "int32") end end
    end, { output_signature = tide.TensorSpec({}, "int32") }):cache()
    local ia, ib = mem:iter(), mem:iter()
    local ga, gb = {}, {}
    for _ = 1, 3 do ga[#ga + 1] = ia():item(); gb[#gb + 1] = ib():item() end
    assert.is_nil(ib())
    assert.is_nil(ia())
    assert.are.same(gb, items(mem))
    assert.are_not.same(ga, gb)
  end)

  it("a pass dropped by a break but not yet collected does not block the next pass, in C and in Lua", function()
    local gen = D.from_generator(function()
      local i = -1
      return function() i = i + 1; if i < 5 then return tide.tensor(i, "int64") end end
    end, { output_signature = tide.TensorSpec({}, "int64") })
    for _, ds in ipairs { D.range(5):cache(dir .. "/c.cache"), gen:cache(dir .. "/l.cache") } do
      stderr_of(function()
        for _ in ds:iter() do break end -- dropped; its lock stays until it is collected
        assert.are.same({ 0, 1, 2, 3, 4 }, items(ds))
      end)
    end
    assert.are.same({ "c.cache", "l.cache" }, listing(dir))
  end)

  it("keeps nothing when the input fails midway, and the failure names the input's error", function()
    local rec = dir .. "/bad.tfrecord"
    local w = tide.io.TFRecordWriter(rec)
    for i = 1, 3 do w:write("record " .. i) end
    w:close()
    local bytes = prog.read_file(rec)
    prog.write_file(rec, bytes:sub(1, #bytes - 3)) -- the last record is cut short
    local ds = tide.data.TFRecordDataset(rec):cache(dir .. "/f.cache")
    assert.is_true(c_engine.supports(ds))
    h.errors("truncated record at byte offset", function() ds:totable() end)
    assert.are.same({ "bad.tfrecord" }, listing(dir))
  end)

  it("refuses a truncated file in a C pass, naming the file and the offset", function()
    local path = dir .. "/c.cache"
    D.range(4):cache(path):totable()
    local good = prog.read_file(path)
    prog.write_file(path, good:sub(1, #good - 40))
    local got = {}
    local err = h.errors(path, function() for x in D.range(4):cache(path):iter() do got[#got + 1] = x:item() end end)
    assert.is_truthy(err:find("byte offset", 1, true), err)
  end)

  it("reads garbage element records as errors naming the offset, never a crash", function()
    local u32 = function(v) return string.char(v % 256, math.floor(v / 256) % 256, 0, 0) end
    local i64 = function(v) return string.char(v % 256, math.floor(v / 256) % 256, 0, 0, 0, 0, 0, v < 0 and 255 or 0) end
    local seed = 12345
    local function rnd(k) seed = lcg_step(seed); return seed % k end
    local errors = 0
    for trial = 1, 300 do
      local parts = {}
      for _ = 1, 2 do -- an int32 component then a string component, each with a random (often wrong) shape
        local rank = rnd(4)
        parts[#parts + 1] = u32(rank == 3 and 40 or rank)
        for _ = 1, math.min(rank, 2) do parts[#parts + 1] = i64(rnd(5) - (rnd(9) == 0 and 3 or 0)) end
      end
      for _ = 1, rnd(40) do parts[#parts + 1] = string.char(rnd(7) == 0 and 255 or rnd(6)) end
      local path = dir .. "/g" .. trial .. ".cache"
      local w = tide.io.TFRecordWriter(path)
      w:write("tide.data.cache 1\n2\nint32\nstring\n")
      w:write(table.concat(parts))
      w:write("tide.data.cache end 1")
      w:close()
      local ok, err = pcall(function()
        return D.from_tensor_slices { tide.tensor({ 1 }, "int32"), tide.tensor { "a" } }:cache(path):totable()
      end)
      if not ok then
        errors = errors + 1
        assert.is_truthy(tostring(err):find("element record at byte offset 49", 1, true), err)
      end
      os.remove(path)
    end
    assert.is_true(errors > 200, errors)
  end)

  it("takes over a lock a dead process left, removes its temporaries, and refuses a live holder's", function()
    local path = dir .. "/c.cache"
    local pid = dead_pid(dir)
    prog.write_file(path .. ".lock", "pid " .. pid .. "\n")
    prog.write_file(dir .. "/.c.cache.tmp-" .. pid .. "-1-ab12", "half a cache")
    os.remove(dir .. "/stdin.txt"); os.remove(dir .. "/stdout.txt"); os.remove(dir .. "/stderr.txt")
    assert.are.same({ 0, 1, 2 }, items(D.range(3):cache(path)))
    assert.are.same({ "c.cache" }, listing(dir))
    -- a lock whose process is alive (init) is respected
    local other = dir .. "/o.cache"
    prog.write_file(other .. ".lock", "pid 1\n")
    h.errors("held by process 1", function() D.range(3):cache(other):totable() end)
    assert.is_nil(prog.read_file(other))
  end)

  it("has its input's cardinality and checks its arguments in C", function()
    assert.are.equal(5, D.range(5):cache():cardinality())
    assert.are.equal(5, tonumber(C.tide_dataset_cardinality(c_engine.handle(D.range(5):cache(dir .. "/x.cache")))))
    local codes = binding.ffi.new("int32_t[1]", 99)
    assert.is_true(C.tide_dataset_cache(c_engine.handle(D.range(2)), nil, 1, codes) == nil)
    h.errors("unknown dtype code 99", function() binding.raise() end)
    codes[0] = 7
    assert.is_true(C.tide_dataset_cache(c_engine.handle(D.range(2)), nil, 2, codes) == nil)
    h.errors("2 dtypes given for elements of 1 components", function() binding.raise() end)
  end)

  it("stops its input's threads when a writing pass is dropped, leaking nothing", function()
    local ds = D.range(2000):map(function(v) return v * 2 end, { parallel = 2 }):cache(dir .. "/t.cache")
    collectgarbage(); collectgarbage() -- earlier tests' passes go first
    local before = tonumber(C.tide_data_live_threads())
    for _ = 1, 3 do
      drop_midway(ds, 2)
      collectgarbage(); collectgarbage()
    end
    assert.are.equal(before, tonumber(C.tide_data_live_threads()))
    assert.are.same({}, listing(dir))
  end)
end)
