-- tests/spec/data/methods_spec.lua — Dataset.counter, random, rebatch, ignore_errors, as_numpy_iterator,
-- with_options/options (tide.data.Options), save/load, snapshot and fingerprint against real tf.data
-- (tests/fixtures/data/methods.lua, made by gen_methods.py with TF 2.21), under both engines, and their errors.
local tide = require "tide"
local engines = require "data_engines"
local tmp = require "tmp"
local D = tide.data.Dataset
local fixture = dofile("tests/fixtures/data/methods.lua")
local cases, card = fixture.cases, fixture.card

local function conv(v)
  if tide.is_tensor(v) then return v:totable() end
  if type(v) ~= "table" then return v end
  local t = {}
  for k, x in pairs(v) do t[k] = conv(x) end
  return t
end
local function values(ds)
  local out = {}
  for _, e in ipairs(ds:totable()) do out[#out + 1] = conv(e) end
  return out
end
local function close_to(want, got)
  if type(want) == "table" then
    assert.are.equal(#want, #got)
    for k, v in pairs(want) do close_to(v, got[k]) end
  else
    assert(math.abs(want - got) < 1e-6, tostring(got) .. " vs " .. tostring(want))
  end
end

-- the element {i, {f = i / 2, v = {i, i}}} that the save fixture wrote
local function saved_source()
  return D.zip { D.range(5), D.range(5):map(function(x)
    return { f = tide.cast(x, "float32") / 2, v = tide.stack { x, x } }
  end) }
end

describe("Dataset methods (tf.data's)", function()
  engines.each(function()
    it("counter counts without end, as TF", function()
      assert.are.same(cases.counter, values(D.counter():take(4)))
      assert.are.same(cases.counter_start_step, values(D.counter(3, 2):take(4)))
      assert.are.same(cases.counter_down, values(D.counter(10, -3):take(4)))
      assert.are.equal(cases.counter_int32_spec[1], D.counter { dtype = "int32" }.element_spec.dtype)
      assert.are.same({ 5, 6 }, values(D.counter { start = 5, dtype = "int32" }:take(2)))
      assert.are.equal(card.counter, D.counter():cardinality())
    end)

    it("random draws int64 scalars in [0, 2^32), the same for a seed on every pass", function()
      assert.are.equal(card.random, D.random(1):cardinality())
      local s = D.random(1).element_spec
      assert.are.equal(cases.random_spec[1], s.dtype)
      assert.are.same(cases.random_spec[2], s.shape)
      local a, b = values(D.random(7):take(50)), values(D.random { seed = 7 }:take(50))
      assert.are.same(a, b)
      local distinct = {}
      for _, v in ipairs(a) do
        assert(v >= 0 and v < 2 ^ 32, "out of range: " .. v)
        distinct[v] = true
      end
      local n = 0
      for _ in pairs(distinct) do n = n + 1 end
      assert(n >= 49, "the draws repeat: " .. n .. " distinct of 50")
      assert.are_not.same(a, values(D.random(8):take(50)))
    end)

    it("rebatch regroups batches' rows, as TF", function()
      assert.are.same(cases.rebatch_3, values(D.range(10):batch(4):rebatch(3)))
      assert.are.same(cases.rebatch_3_drop, values(D.range(10):batch(4):rebatch(3, { drop_remainder = true })))
      assert.are.same(cases.rebatch_list, values(D.range(10):batch(4):rebatch { 2, 3 }))
      assert.are.same(cases.rebatch_list_drop, values(D.range(10):batch(4):rebatch({ 2, 3 }, true)))
      assert.are.same(cases.rebatch_tuple, values(D.zip { D.range(6), D.range(0, 60, 10) }:batch(4):rebatch(2)))
    end)

    it("sparse_batch batches dense rows into SparseTensors, as TF", function()
      local rows = { 1, 2, 3, 0, 2 }
      local gen = D.from_generator(function()
        local i = 0
        return function()
          i = i + 1
          if rows[i] == nil then return nil end
          return tide.range(1, rows[i] + 1):cast("int32")
        end
      end, { output_signature = tide.TensorSpec({ tide.None }, "int32") })
      local function sparse_values(ds)
        local out = {}
        for sp in ds:iter() do
          out[#out + 1] = { sp.indices:totable(), sp.values:totable(), sp.dense_shape:totable() }
        end
        return out
      end
      local got = sparse_values(gen:sparse_batch(2, { 4 }))
      assert.are.same(cases.sparse_batch, got)
      local spec = gen:sparse_batch(2, { 4 }).element_spec
      assert.are.equal(cases.sparse_batch_spec[1], spec.dtype)
      assert.are.same({ tide.None, 4 }, spec.shape)
      assert.are.same(cases.sparse_batch_scalars, sparse_values(D.range(3):sparse_batch(2, {})))
    end)

    it("ragged_batch makes RaggedTensors of the varying components, as TF", function()
      local function rows_of(list, dt, width)
        return D.from_generator(function()
          local i = 0
          return function()
            i = i + 1
            if list[i] == nil then return nil end
            if width then return tide.fill({ list[i], width }, list[i]):cast(dt) end
            return tide.range(0, list[i]):cast(dt)
          end
        end, { output_signature = tide.TensorSpec(width and { tide.None, width } or { tide.None }, dt) })
      end
      local r = rows_of({ 1, 2, 3, 4 }, "int64"):ragged_batch(3)
      local got = {}
      for rt in r:iter() do got[#got + 1] = { rt.values:totable(), rt.row_splits:totable() } end
      assert.are.same(cases.ragged_batch, got)
      local sp = r.element_spec
      assert.are.equal(cases.ragged_batch_spec[1], sp.dtype)
      assert.are.equal("RaggedTensorSpec(shape=(None, None), dtype=int64, ragged_rank=1)", tostring(sp))
      assert.are.same(cases.ragged_batch_dense, values(D.range(5):ragged_batch(2)))
      local m = rows_of({ 1, 2, 3 }, "int32", 2):ragged_batch(2, true)
      got = {}
      for rt in m:iter() do got[#got + 1] = { rt.values:totable(), rt.row_splits:totable() } end
      assert.are.same(cases.ragged_batch_2d_drop, got)
      assert.are.same({ 2, tide.None, 2 }, m.element_spec.shape)
      -- a map gets tide.RaggedTensors and may return them
      local doubled = r:map(function(rt) return tide.RaggedTensor.from_row_splits(rt.values * 2, rt.row_splits) end)
      got = {}
      for rt in doubled:iter() do got[#got + 1] = rt.values:totable() end
      assert.are.same({ { 0, 0, 2, 0, 2, 4 }, { 0, 2, 4, 6 } }, got)
    end)

    it("rejection_resample moves the class distribution to the target, as TF's does", function()
      local classes = {}
      for i = 1, 100 do classes[i] = i <= 80 and 0 or 1 end
      local skew = D.from_tensor_slices(tide.tensor(classes, "int64")):repeat_(50)
      local function cls(x) return x:cast("int32") end
      for _, c in ipairs { { "rejection_counts", { initial_dist = { 0.8, 0.2 }, seed = 1 } },
        { "rejection_counts_estimated", { seed = 1 } } } do
        local rs = skew:rejection_resample(cls, { 0.5, 0.5 }, c[2])
        local counts = { 0, 0 }
        for k, x in rs:take(2000):iter() do
          assert.are.equal(k:item(), x:item())
          counts[k:item() + 1] = counts[k:item() + 1] + 1
        end
        -- TF's 2000 draws gave about 1000 of each; a binomial's 4 sigma is 90
        for i = 1, 2 do assert(math.abs(counts[i] - cases[c[1]][i]) < 120, c[1] .. ": " .. counts[1] .. "/" .. counts[2]) end
        local spec = rs.element_spec
        assert.are.same(cases.rejection_spec[1], { spec[1].dtype, spec[2].dtype })
        assert.are.equal(card.rejection, rs:cardinality())
      end
      -- a seed repeats its draws
      local a = values(skew:rejection_resample(cls, { 0.5, 0.5 }, { seed = 3 }):take(30))
      assert.are.same(a, values(skew:rejection_resample(cls, { 0.5, 0.5 }, { seed = 3 }):take(30)))
    end)

    it("ignore_errors drops the elements whose making failed, as TF", function()
      local bad = D.from_tensor_slices(tide.tensor({ 1, 2, 0, 4, 0, 8 }, "float32")):map(function(x)
        return tide.debugging.check_numerics(1 / x, "inf")
      end)
      assert.has_error(function() bad:totable() end)
      close_to(cases.ignore_errors, values(bad:ignore_errors()))
      assert.are.equal(card.ignore_errors, bad:ignore_errors():cardinality())
    end)

    it("as_numpy_iterator gives Lua values (tide has no numpy)", function()
      local ds = D.zip { D.range(3), D.range(3):map(function(x) return { a = x * 2, b = { x, x } } end) }
      local got = {}
      for i, d in ds:as_numpy_iterator() do
        assert.are.equal("number", type(i))
        got[#got + 1] = { i, d }
      end
      assert.are.same(cases.as_numpy_zip_dict, got)
    end)

    it("with_options merges options as TF and leaves the elements alone", function()
      local O = tide.data.Options
      local ds = D.range(3):with_options(O { deterministic = false }):map(function(x) return x + 1 end)
        :with_options(O { experimental_slack = true })
      local o = ds:options()
      assert.are.same(cases.options_merged, { o.deterministic == false and 1 or 0, o.experimental_slack and 1 or 0 })
      local outer = D.range(3):with_options { deterministic = false }:with_options { deterministic = true }
      assert.are.equal(cases.options_outer_wins, outer:options().deterministic and 1 or 0)
      assert.are.same(cases.options_values, values(ds))
      assert.is_nil(D.range(2):options().deterministic)
    end)

    it("save writes a folder that load reads back, as TF's (plain and GZIP)", function()
      local dir = tmp.dir()
      for _, comp in ipairs { "None", "GZIP" } do
        local path = dir .. "/saved_" .. comp
        saved_source():save(path, { compression = comp ~= "None" and comp or nil })
        local back = D.load(path)
        assert.are.equal(card["load_" .. comp], back:cardinality())
        local got = values(back)
        assert.are.equal(#cases["save_load_" .. comp], #got)
        for i, e in ipairs(cases["save_load_" .. comp]) do
          assert.are.equal(e[1], got[i][1])
          close_to(e[2].f, got[i][2].f)
          assert.are.same(e[2].v, got[i][2].v)
        end
        assert.are.equal(tostring(saved_source().element_spec[2].v), tostring(back.element_spec[2].v))
      end
      -- saving again replaces the folder (a second save of other elements)
      local path = dir .. "/again"
      D.range(3):save(path)
      D.range(2):save(path)
      assert.are.same({ 0, 1 }, values(D.load(path)))
    end)

    it("snapshot writes the first pass and replays it, keyed by the fingerprint", function()
      local dir = tmp.dir()
      local snap = D.range(4):map(function(x) return x * 3 end):snapshot(dir)
      assert.are.same(cases.snapshot_first, values(snap))
      assert.are.same(cases.snapshot_again, values(snap))
      -- a new pipeline object of the same description finds the same file: its source never runs
      local calls = 0
      local gen = D.from_generator(function()
        calls = calls + 1
        local i = -1
        return function() i = i + 1; if i < 3 then return tide.tensor(i, "int64") end end
      end, { output_signature = tide.TensorSpec({}, "int64") })
      assert.are.same({ 0, 1, 2 }, values(gen:snapshot(dir)))
      assert.are.same({ 0, 1, 2 }, values(gen:snapshot(dir)))
      assert.are.equal(1, calls)
    end)
  end)

  it("fingerprints name the pipeline: same description, same print; a changed stage, another", function()
    local function mk(n) return D.range(n):map(function(x) return x * 2 end):batch(2) end
    local a = mk(5)
    local fa = a:fingerprint()
    assert.are.equal(16, #fa)
    a:totable()
    assert.are.equal(fa, a:fingerprint())
    assert.are.equal(fa, mk(5):fingerprint())
    assert.are_not.equal(fa, mk(6):fingerprint())
    assert.are_not.equal(fa, D.range(5):map(function(x) return x * 3 end):batch(2):fingerprint())
    assert.are_not.equal(D.from_tensor_slices(tide.tensor { 1, 2 }):fingerprint(),
      D.from_tensor_slices(tide.tensor { 1, 3 }):fingerprint())
  end)

  it("honours Options.deterministic in the stages left at their default", function()
    local ds = D.range(4):map(function(x) return x end, { parallel = 2 })
    local kept = D.range(4):map(function(x) return x end, { parallel = 2, deterministic = true })
    local o = ds:with_options { deterministic = false }
    assert.is_false(o.deterministic)
    assert.is_true(ds.deterministic) -- the original is untouched
    assert.is_true(kept:with_options { deterministic = false }.deterministic)
    local sorted = values(o)
    table.sort(sorted)
    assert.are.same({ 0, 1, 2, 3 }, sorted)
  end)

  it("names what is wrong in its errors", function()
    local O = tide.data.Options
    local function vrows(shape)
      return D.from_generator(function() return function() end end,
        { output_signature = tide.TensorSpec(shape, "float32") })
    end
    local cases_ = {
      { function() D.counter(0.5) end, "counter: start must be a whole number" },
      { function() D.counter(0, 1, "float32") end, "counter: dtype must be int64 or int32, got float32" },
      { function() D.counter { begin = 1 } end, "counter: unknown option 'begin'" },
      { function() D.random(1, true) end, "random: rerandomize_each_iteration = true is not supported" },
      { function() D.random(-0.5) end, "random: seed must be a whole number" },
      { function() D.range(4):batch(2):rebatch(0) end, "rebatch: batch_size must be a whole number >= 1, got 0" },
      { function() D.range(4):batch(2):rebatch {} end, "rebatch: batch_size must be a number or a non-empty list" },
      { function() D.range(4):batch(2):rebatch({ 1, 0 }) end, "rebatch: batch_size[2] must be a whole number >= 1" },
      { function() D.range(4):rebatch(2) end, "unbatch: component 1 is a scalar" },
      { function() D.range(4):sparse_batch(0, {}) end, "sparse_batch: batch_size must be a whole number >= 1" },
      { function() D.range(4):sparse_batch(2, "a") end, "sparse_batch: row_shape must be a list of sizes" },
      { function() D.range(4):sparse_batch(2, { 3 }) end, "sparse_batch: the elements have rank 0 but row_shape has 1" },
      { function() D.zip { D.range(2), D.range(2) }:sparse_batch(2, {}) end,
        "sparse_batch: the elements must be single dense tensors" },
      { function() D.from_tensor_slices(tide.zeros { 2, 5 }):sparse_batch(2, { 4 }):totable() end,
        "sparse_batch: an element has shape (5,), larger than row_shape (4) in dim 0" },
      { function() D.range(4):ragged_batch(0) end, "ragged_batch: batch_size must be a whole number >= 1, got 0" },
      { function() D.range(4):ragged_batch(2, { row_splits_dtype = "int32" }) end,
        "ragged_batch: row_splits_dtype must be int64" },
      { function() vrows({ tide.None }):ragged_batch(2):batch(2) end, "batch: the elements hold RaggedTensors" },
      { function() vrows({ tide.None }):ragged_batch(2):unbatch() end, "unbatch: the elements hold RaggedTensors" },
      { function() vrows({ 2, tide.None }):ragged_batch(2) end,
        "ragged_batch: component 1 has shape (2, None); only the first dim may vary" },
      { function() vrows(nil):ragged_batch(2) end, "ragged_batch: component 1 has an unknown rank" },
      { function() D.range(4):rejection_resample(nil, { 1 }) end, "rejection_resample: expected a function, got nil" },
      { function() D.range(4):rejection_resample(print, {}) end, "rejection_resample: target_dist must be a non-empty list" },
      { function() D.range(4):rejection_resample(print, { 0.5, 0.6 }) end,
        "rejection_resample: target_dist must sum to 1, got 1.1" },
      { function() D.range(4):rejection_resample(print, { 0.5, 0.5 }, { initial_dist = { 1 } }) end,
        "rejection_resample: initial_dist has 1 classes but target_dist has 2" },
      { function() D.range(4):rejection_resample(print, { 1.5, -0.5 }) end,
        "rejection_resample: target_dist[2] must be a number >= 0, got -0.5" },
      { function() D.range(4):rejection_resample(function() return 5 end, { 0.5, 0.5 }):totable() end,
        "rejection_resample: class_func gave 5; classes are 0 .. 1 (target_dist's)" },
      { function() D.range(4):ignore_errors { log = true } end, "ignore_errors: unknown option 'log'" },
      { function() D.range(4):ignore_errors { log_warning = 1 } end, "ignore_errors: log_warning must be a boolean" },
      { function() O { threading = {} } end, "Options.threading is not supported" },
      { function() O { speed = 1 } end, "Options: no option 'speed'" },
      { function() O { deterministic = "yes" } end, "Options.deterministic must be a boolean, got string" },
      { function() O { experimental_optimization = { map_fusion = true, turbo = true } } end,
        "Options.experimental_optimization: no flag 'turbo'" },
      { function() return O().autotune end, "Options.autotune is not supported" },
      { function() D.range(2):with_options(5) end, "with_options: expected a tide.data.Options, got number" },
      { function() D.range(2):with_options() end, "with_options: expected a tide.data.Options" },
      { function() D.range(2):save(7) end, "save: path must be a folder name (a string)" },
      { function() D.range(2):save(tmp.dir() .. "/x", { compression = "LZ4" }) end,
        "save: compression must be nil, \"\", \"GZIP\" or \"ZLIB\", got LZ4" },
      { function() D.range(2):repeat_():save(tmp.dir() .. "/x") end, "save: the dataset is infinite" },
      { function() D.range(2):save(tmp.dir() .. "/x", { shard_func = print }) end,
        "save: shard_func and checkpoint_args are not supported" },
      { function() D.load(tmp.dir()) end, "is not a folder written by save (no dataset_spec.json)" },
      { function() D.load(5) end, "load: path must be a string" },
      { function() D.range(2):snapshot("") end, "snapshot: path must be a folder name (a string)" },
      { function() D.range(2):snapshot(tmp.dir(), { compression = "GZIP" }) end,
        "snapshot: compression GZIP is not supported" },
      { function() D.range(2):snapshot(tmp.dir(), { shard_func = print }) end,
        "snapshot: reader_func and shard_func are not supported" },
    }
    for i, c in ipairs(cases_) do
      local ok, err = pcall(c[1])
      assert(not ok, "case " .. i .. " (" .. c[2] .. ") did not fail")
      assert(tostring(err):find(c[2], 1, true), "case " .. i .. ": " .. tostring(err) .. "\nwanted: " .. c[2])
    end
    -- a failed save leaves the folder that was there
    local dir = tmp.dir() .. "/keep"
    D.range(3):save(dir)
    local bad = D.range(3):map(function(x) return tide.debugging.check_numerics(1 / tide.cast(x, "float32"), "inf") end)
    assert.has_error(function() bad:save(dir) end)
    assert.are.same({ 0, 1, 2 }, values(D.load(dir)))
    -- a folder of another kind is not replaced
    local other = tmp.dir()
    local f = io.open(other .. "/notes.txt", "w")
    f:write("x")
    f:close()
    assert.has_error(function() D.range(2):save(other) end, "save: '" .. other .. "' exists and is not a folder " ..
      "written by save")
  end)
end)
