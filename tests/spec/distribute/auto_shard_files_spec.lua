-- tests/spec/distribute/auto_shard_files_spec.lua — fit's auto-shard by FILE
-- for CSV sources (CsvDataset, make_csv_dataset), as for TFRecord and text
-- lines: worker k of N reads files k, k + N, ... and batches B/N of them.
local tide = require "tide"
local h = require "helpers"
local prog = require "tide_program"
local dist = require "tide.distribute"
local D = tide.data.Dataset

-- What auto_shard reads of a strategy: its world and this worker's place in it.
local function worker(k, n) return { name = "TestStrategy", num_replicas_in_sync = n, worker_index = k } end

describe("auto_shard by FILE", function()
  local dir, names
  setup(function()
    dir = prog.make_tmpdir("auto_shard_csv")
    names = {}
    for f = 1, 4 do -- file f holds ids f*10 .. f*10+2 (with a header row)
      names[f] = string.format("%s/part-%d.csv", dir, f)
      local rows = { "id,w" }
      for i = 0, 2 do rows[#rows + 1] = string.format("%d,%d.5", f * 10 + i, i) end
      prog.write_file(names[f], table.concat(rows, "\n") .. "\n")
    end
  end)
  teardown(function() prog.remove_tmpdir(dir) end)

  local function ids(ds)
    local out = {}
    for _, e in ipairs(ds:totable()) do
      local batch = e[1] or e
      out[#out + 1] = table.concat(tide.cast(batch, "int64"):totable(), ",")
    end
    return table.concat(out, " ")
  end

  it("gives each worker every N-th CSV file and its part of the global batch", function()
    local ds = tide.data.experimental.CsvDataset(names, { tide.tensor(0, "int32"), tide.tensor(0, "float32") },
      { header = true }):batch(4):prefetch(2)
    local w0, p0 = dist.auto_shard(worker(0, 2), ds)
    local w1, p1 = dist.auto_shard(worker(1, 2), ds)
    assert.are.same({ "FILE", "FILE" }, { p0, p1 })
    assert.are.equal("prefetch", w0.kind)
    -- worker 0: files 1 and 3; worker 1: files 2 and 4; batches of 2
    assert.are.equal("10,11 12,30 31,32", ids(w0))
    assert.are.equal("20,21 22,40 41,42", ids(w1))
    -- the columns and their dtypes carry over to each worker's source
    assert.are.same({ 0.5, 1.5 }, w0:take(1):totable()[1][2]:totable())
    assert.are.equal("float32", w1.element_spec[2].dtype)
  end)

  it("fewer files than workers, or a batch that does not split, as for other files", function()
    local one = tide.data.experimental.CsvDataset(names[1], { tide.tensor(0, "int32") }, { header = true,
      select_cols = { 0 } }):batch(2)
    local _, policy = dist.auto_shard(worker(0, 2), one)
    assert.are.equal("DATA", policy)
    local four = tide.data.experimental.CsvDataset(names, { tide.tensor(0, "int32") }, { header = true,
      select_cols = { 0 } }):batch(3)
    h.errors("the global batch size 3 does not split evenly over 2 workers", function()
      dist.auto_shard(worker(1, 2), four, "fit")
    end)
  end)

  it("make_csv_dataset's pipeline (repeat, shuffle, batch) shards by file too", function()
    local ds = tide.data.experimental.make_csv_dataset(names, 4, { num_epochs = 1, shuffle = false })
    local w1, policy = dist.auto_shard(worker(1, 2), ds)
    assert.are.equal("FILE", policy)
    local got = {}
    for _, e in ipairs(w1:totable()) do
      for _, v in ipairs(e.id:totable()) do got[#got + 1] = v end
      assert.is_true(#e.id:totable() <= 2)
    end
    assert.are.same({ 20, 21, 22, 40, 41, 42 }, got)
  end)
end)
