-- tests/spec/data/list_files_spec.lua — tide.io.matching_files and
-- Dataset.list_files against TF 2.21's rules (checked by hand with
-- tf.io.matching_files on the same tree: all patterns' matches sorted
-- together, duplicates kept, `*` matching a leading dot and folders, a
-- missing folder matching nothing), shuffling, the usual pipeline, errors.
local tide = require "tide"
local h = require "helpers"
local prog = require "tide_program"

local function strings(ds)
  local out = {}
  for x in ds:iter() do out[#out + 1] = x:item() end
  return out
end

describe("matching files", function()
  local dir
  setup(function()
    dir = prog.make_tmpdir("list_files")
    for _, f in ipairs { "b.txt", "a.txt", ".h.txt", "c.py" } do prog.write_file(dir .. "/" .. f, f) end
    assert(os.execute("mkdir " .. prog.quote(dir .. "/sub")) == 0)
    prog.write_file(dir .. "/sub/d.txt", "d")
    for i = 1, 20 do
      prog.write_file(string.format("%s/sub/part-%02d.tfrecord", dir, i), "")
    end
  end)
  teardown(function() os.execute("rm -rf " .. prog.quote(dir)) end)

  it("finds what glob patterns match, sorted together, as tf.io.matching_files", function()
    local d = dir .. "/"
    assert.are.same({ d .. ".h.txt", d .. "a.txt", d .. "b.txt" }, tide.io.matching_files(d .. "*.txt"):totable())
    assert.are.same({ d .. "a.txt", d .. "a.txt", d .. "b.txt", d .. "c.py", d .. "sub/d.txt" },
      tide.io.matching_files({ d .. "*.py", d .. "[ab].txt", d .. "*/*.txt", d .. "a.txt" }):totable())
    local all = tide.io.matching_files(d .. "*"):totable() -- folders too, never "." or ".."
    assert.are.same({ d .. ".h.txt", d .. "a.txt", d .. "b.txt", d .. "c.py", d .. "sub" }, all)
    assert.are.same({ d .. "a.txt", d .. "b.txt" }, tide.io.matching_files(tide.constant({ d .. "?.txt" }, "string")):totable())
    local none = tide.io.matching_files({ d .. "*.zz", "/nonexistent/folder/*.txt" })
    assert.are.same({ 0 }, none.shape:as_list())
    assert.are.equal("string", none.dtype)
  end)

  it("list_files: sorted without shuffle, a seeded shuffle of all names that changes each pass", function()
    local d = dir .. "/sub/"
    local sorted = {}
    for i = 1, 20 do sorted[i] = string.format("%spart-%02d.tfrecord", d, i) end
    local plain = tide.data.Dataset.list_files(d .. "part-*.tfrecord", { shuffle = false })
    assert.are.same(sorted, strings(plain))
    assert.are.equal(20, plain:cardinality())
    assert.are.equal("string", plain.element_spec.dtype)
    local ds = tide.data.Dataset.list_files(d .. "part-*.tfrecord", { seed = 7 })
    assert.are.equal(20, ds:cardinality())
    local first, second = strings(ds), strings(ds)
    local again = strings(tide.data.Dataset.list_files(d .. "part-*.tfrecord", { seed = 7 }))
    assert.are.same(first, again) -- the same seed, the same order
    assert.are_not.same(first, second) -- reshuffled each pass
    assert.are_not.same(sorted, first)
    table.sort(first)
    assert.are.same(sorted, first) -- a permutation of all the names
  end)

  it("list_files feeds interleave over the files it found", function()
    local d = dir .. "/rec/"
    assert(os.execute("mkdir " .. prog.quote(d)) == 0)
    for i = 1, 3 do
      local w = tide.io.TFRecordWriter(d .. i .. ".tfrecord")
      for j = 1, 2 do w:write(i .. ":" .. j) end
      w:close()
    end
    local ds = tide.data.Dataset.list_files(d .. "*.tfrecord", { shuffle = false })
      :interleave(function(f) return tide.data.TFRecordDataset(f) end, { cycle_length = 3 })
    assert.are.same({ "1:1", "2:1", "3:1", "1:2", "2:2", "3:2" }, strings(ds))
  end)

  it("refuses no match and bad arguments, naming them", function()
    h.errors("list_files: no files matched pattern: " .. dir .. "/*.zz, " .. dir .. "/q*",
      tide.data.Dataset.list_files, { dir .. "/*.zz", dir .. "/q*" })
    h.errors("matching_files: the pattern must be a string or a non-empty list of strings, got an empty list",
      tide.io.matching_files, {})
    h.errors("the pattern must be a string or a non-empty list of strings, got nil", tide.data.Dataset.list_files, nil)
    h.errors("matching_files: pattern[2] must be a string, got number", tide.io.matching_files, { "a", 3 })
    h.errors("a pattern tensor must be a 0-d or 1-d string tensor, got int32", tide.io.matching_files,
      tide.constant { 1, 2 })
    h.errors("list_files: unknown option 'shufle'", tide.data.Dataset.list_files, dir .. "/*", { shufle = false })
    h.errors("list_files: shuffle must be a boolean", tide.data.Dataset.list_files, dir .. "/*", { shuffle = 1 })
  end)
end)
