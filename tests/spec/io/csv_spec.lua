-- tests/spec/io/csv_spec.lua — CSV: tide.data.experimental.CsvDataset against
-- the rows TF 2.21's CsvDataset read from the same file (quotes, doubled
-- quotes, a line break inside quotes, CRLF, missing values, na_value),
-- make_csv_dataset, and TF's errors for bad files and missing values.
local tide = require "tide"
local tmp = require "tmp"

local FIX = dofile("tests/fixtures/data/records_expected.lua").csv
local QUOTED = "tests/fixtures/data/quoted.csv"
local CsvDataset = tide.data.experimental.CsvDataset

local function error_of(fn, ...)
  local ok, err = pcall(fn, ...)
  assert(not ok, "expected an error")
  return tostring(err)
end

-- Every element of ds as a list of Lua values.
local function rows(ds)
  local out = {}
  for a, b, c, d in ds:iter() do
    local row = {}
    for i, t in ipairs { a, b, c, d } do row[i] = t:item() end
    out[#out + 1] = row
  end
  return out
end

describe("CsvDataset", function()
  it("reads quoted fields, doubled quotes, line breaks in quotes, CRLF and missing values as TF does", function()
    local ds = CsvDataset(QUOTED, { tide.tensor({ 0 }, "int32"), "?", 0, "none" }, { header = true, na_value = "NA" })
    assert.are.same(FIX.rows, rows(ds))
    assert.are.same(FIX.rows, rows(ds)) -- a dataset iterates again from the start
    local spec = ds.element_spec
    assert.are.equal("int32", spec[1].dtype)
    assert.are.equal("string", spec[2].dtype)
    assert.are.equal("float32", spec[3].dtype)
  end)

  it("select_cols picks columns; {dtype=, default=} gives other dtypes", function()
    local ds = CsvDataset(QUOTED, { { dtype = "float64", default = 0 }, "x" },
      { header = true, select_cols = { 2, 3 }, na_value = "NA" })
    assert.are.same(FIX.select_rows, rows(ds))
    assert.are.equal("float64", ds.element_spec[1].dtype)
  end)

  it("a missing value without a default is an error naming the record, line and field", function()
    assert.matches("Field 1 is required but missing in record", FIX.required_error)
    local ds = CsvDataset(QUOTED, { { dtype = "int32" }, { dtype = "string" }, { dtype = "float32" },
      { dtype = "string" } }, { header = true })
    local got = {}
    local err = error_of(function()
      for a, b, c, d in ds:iter() do got[#got + 1] = { a:item(), b:item(), c:item(), d:item() } end
    end)
    assert.are.same(FIX.required_rows, got)
    assert.matches("CsvDataset: file 'tests/fixtures/data/quoted.csv', record 2 %(line 3%): Field 1 is required but " ..
      "missing in record", err)
    -- the dtype constants, as TF's [tf.int32, tf.string, ...] (what the fixture ran): required columns
    local ds3 = CsvDataset(QUOTED, { tide.int32, tide.string, tide.float32, tide.string }, { header = true })
    local got3 = {}
    local err3 = error_of(function()
      for a, b, c, d in ds3:iter() do got3[#got3 + 1] = { a:item(), b:item(), c:item(), d:item() } end
    end)
    assert.are.same(FIX.required_rows, got3)
    assert.are.equal("int32", ds3.element_spec[1].dtype)
    assert.are.equal("float32", ds3.element_spec[3].dtype)
    assert.matches("record 2 %(line 3%): Field 1 is required but missing in record", err3)
    -- the text "int32" is a string default, not a dtype
    local ds4 = CsvDataset(QUOTED, { tide.tensor({ 0 }, "int32"), "int32", 0, "none" }, { header = true, na_value = "NA" })
    assert.are.equal("string", ds4.element_spec[2].dtype)
    local seen = {}
    for _, b in ds4:iter() do seen[#seen + 1] = b:item() end
    assert.are.same({ "Smith, John", "int32", "multi\nline", "int32" }, seen) -- (the fixture's "?" rows)
    assert.matches("record_defaults%[1%] is the dtype bool; CSV columns are int32", error_of(CsvDataset, QUOTED, { tide.bool }))
    -- a required column given as an empty tensor, as in TF
    local ds2 = CsvDataset(QUOTED, { tide.zeros({ 0 }, "int32"), "", 0, "" }, { header = true, na_value = "NA" })
    assert.are.equal(4, #rows(ds2))
  end)

  it("batches, with string columns", function()
    local ds = CsvDataset(QUOTED, { 0, "?", 0, "none" }, { header = true, na_value = "NA" }):batch(3)
    local n = 0
    for id, name, _, note in ds:iter() do
      n = n + 1
      if n == 1 then
        assert.are.same({ 1, 2, 3 }, id:totable())
        assert.are.same({ "Smith, John", "?", "multi\nline" }, name:totable())
        assert.are.same({ 'He said "hi"', "plain", "none" }, note:totable())
      end
    end
    assert.are.equal(2, n)
  end)

  it("reads several files in order, with field_delim and no quoting when asked", function()
    local a = tmp.file("1\tx\n2\t\"y\"\n")
    local b = tmp.file("3\tz")
    local ds = CsvDataset({ a, b }, { 0, "" }, { field_delim = "\t", use_quote_delim = false })
    local got = {}
    for n, s in ds:iter() do got[#got + 1] = n:item() .. s:item() end
    assert.are.same({ "1x", '2"y"', "3z" }, got)
    os.remove(a)
    os.remove(b)
  end)

  it("bad records are errors naming the file and record, never crashes", function()
    local cases = {
      { '1,a"b\n', "Unquoted fields cannot have quotes inside" },
      { '1,"ab\n', "Reached end of file without closing quoted field" },
      { '1,"a"b\n', "Quote inside a quoted field" },
      { "1\n", "Expect 2 fields but have 1 in record" },
      { "1,a,b\n", "Expect 2 fields but have more: 3 in record" },
      { "x,a\n", "Field 0 in record is not a valid float: x" },
      { "\n", "Expect 2 fields but have 1" },
    }
    for _, case in ipairs(cases) do
      local path = tmp.file(case[1])
      local err = error_of(function() for _ in CsvDataset(path, { 0, "" }):iter() do end end)
      assert.matches(case[2], err, 1, true)
      assert.matches(path, err, 1, true)
      os.remove(path)
    end
    local path = tmp.file("99999999999,a\n")
    assert.matches("not a valid int32: 99999999999",
      error_of(function() for _ in CsvDataset(path, { tide.tensor({ 0 }, "int32"), "" }):iter() do end end), 1, true)
    os.remove(path)
    math.randomseed(9)
    local chars = { "a", "1", ",", '"', "\n", "\r", " ", "\0", "\255" }
    for _ = 1, 80 do
      local t = {}
      for i = 1, math.random(0, 40) do t[i] = chars[math.random(#chars)] end
      path = tmp.file(table.concat(t))
      local ok, err = pcall(function() for _ in CsvDataset(path, { "", "" }):iter() do end end)
      if not ok then assert.matches(path, tostring(err), 1, true) end
      os.remove(path)
    end
  end)

  it("refuses bad arguments with clear errors", function()
    assert.matches("record_defaults must be a non%-empty list", error_of(CsvDataset, QUOTED, {}))
    assert.matches("record_defaults%[1%] must be a tensor, a number, a string", error_of(CsvDataset, QUOTED, { true }))
    assert.matches("record_defaults%[1%] is bool", error_of(CsvDataset, QUOTED, { tide.tensor { true } }))
    assert.matches("select_cols must list 1 columns", error_of(CsvDataset, QUOTED, { 0 }, { select_cols = { 1, 2 } }))
    assert.matches("select_cols must be increasing", error_of(CsvDataset, QUOTED, { 0, 0 }, { select_cols = { 2, 1 } }))
    assert.matches("unknown option 'delim'", error_of(CsvDataset, QUOTED, { 0 }, { delim = ";" }))
    assert.matches("field_delim must be one character", error_of(CsvDataset, QUOTED, { 0 }, { field_delim = ";;" }))
    assert.matches("files must be a path", error_of(CsvDataset, {}, { 0 }))
    assert.matches("not supported yet", error_of(CsvDataset, QUOTED, { 0 }, { compression_type = "GZIP" }))
    assert.matches("'/nonexistent%.csv' cannot be opened",
      error_of(function() for _ in CsvDataset("/nonexistent.csv", { 0 }):iter() do end end))
  end)
end)

describe("make_csv_dataset", function()
  it("names columns from the header, infers their types and splits off the label", function()
    local path = tmp.file("a,b,label,c\n1,2.5,0,x\n2,3,1,y\n3,4,0,z\n")
    local ds = tide.data.experimental.make_csv_dataset(path, 2, { label_name = "label", num_epochs = 1, shuffle = false })
    local batches = {}
    for features, label in ds:iter() do batches[#batches + 1] = { features, label } end
    assert.are.equal(2, #batches)
    local f, y = batches[1][1], batches[1][2]
    assert.are.equal("int32", f.a.dtype)
    assert.are.equal("float32", f.b.dtype)
    assert.are.equal("string", f.c.dtype)
    assert.are.same({ 1, 2 }, f.a:totable())
    assert.are.same({ 2.5, 3 }, f.b:totable())
    assert.are.same({ "x", "y" }, f.c:totable())
    assert.are.same({ 0, 1 }, y:totable())
    assert.is_nil(f.label)
    assert.are.same({ 3 }, batches[2][1].a:totable())
    os.remove(path)
  end)

  it("fills a missing value of an inferred column with 0 or \"\" as TF does", function()
    local ds = tide.data.experimental.make_csv_dataset(QUOTED, 4, { num_epochs = 1, shuffle = false, na_value = "NA" })
    local f = ds:take(1):get_single_element()
    for name, want in pairs(FIX.inferred) do
      assert.are.equal(want.dtype, f[name].dtype, name)
      assert.are.same(want.values, f[name]:totable(), name)
    end
  end)

  it("repeats for num_epochs and shuffles with a seed, the same order each time", function()
    local path = tmp.file("v\n1\n2\n3\n4\n5\n")
    local function order(seed)
      local out = {}
      local ds = tide.data.experimental.make_csv_dataset(path, 5, { num_epochs = 2, shuffle_seed = seed })
      for f in ds:iter() do for _, v in ipairs(f.v:totable()) do out[#out + 1] = v end end
      return out
    end
    local a = order(3)
    assert.are.equal(10, #a)
    assert.are.same(a, order(3))
    local sum = 0
    for _, v in ipairs(a) do sum = sum + v end
    assert.are.equal(30, sum)
    os.remove(path)
  end)

  it("takes column_defaults, select_columns and na_value", function()
    local ds = tide.data.experimental.make_csv_dataset(QUOTED, 4, { num_epochs = 1, shuffle = false, na_value = "NA",
      select_columns = { "id", "note" }, column_defaults = { 0, "?", 0, "none" }, label_name = "id" })
    local f, y = ds:take(1):get_single_element()
    assert.are.same({ 'He said "hi"', "plain", "none", "last" }, f.note:totable())
    assert.are.same({ 1, 2, 3, 4 }, y:totable())
    assert.is_nil(f.name)
  end)

  it("refuses bad arguments with clear errors", function()
    local mk = tide.data.experimental.make_csv_dataset
    assert.matches("batch_size must be a whole number", error_of(mk, QUOTED, 0))
    assert.matches("label_name 'nope' is not among the columns %(id, name, score, note%)",
      error_of(mk, QUOTED, 2, { label_name = "nope" }))
    assert.matches("no column 'zz'", error_of(mk, QUOTED, 2, { select_columns = { "zz" } }))
    assert.matches("column_names are needed", error_of(mk, QUOTED, 2, { header = false }))
    local empty = tmp.file("")
    assert.matches("is empty: no header", error_of(mk, empty, 2))
    os.remove(empty)
  end)
end)
