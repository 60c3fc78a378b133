-- tide.strings against TensorFlow (tests/fixtures/strings/cases.lua, from gen.py
-- beside it), eagerly and traced; errors, empty inputs, leaks, RaggedTensor.
local tide = require "tide"
local h = require "helpers"
local C = require("tide.binding").C
local CASES = dofile("tests/fixtures/strings/cases.lua")
local S = tide.strings

-- The registry op each function runs (its node in a traced graph).
local OP = {
  lower = "string_lower", upper = "string_upper", strip = "string_strip", length = "string_length",
  to_number = "string_to_number", as_string = "as_string", join = "string_join", format = "string_format", reduce_join = "reduce_join",
  substr = "substr", regex_replace = "regex_replace", split = "string_split",
  ngrams = "string_ngrams", to_hash_bucket_fast = "string_hash",
  unicode_decode = "unicode_decode", unicode_decode_with_offsets = "unicode_decode", unicode_split = "unicode_encode",
  unicode_split_with_offsets = "unicode_encode", unicode_encode = "unicode_encode", unicode_transcode = "unicode_encode",
  unicode_script = "unicode_script", bytes_split = "unicode_decode", regex_full_match = "regex_full_match",
  unsorted_segment_join = "unsorted_segment_join", to_hash_bucket_strong = "string_hash", to_hash_bucket = "string_hash",
}

-- A fixture tensor ({dtype, shape, values}) as a tide tensor.
local function tensor(t)
  local n = 1
  for _, d in ipairs(t.shape) do n = n * d end
  if n == 0 then return tide.tensor({}, t.dtype):reshape(t.shape) end
  return tide.tensor(t.values, t.dtype):reshape(t.shape)
end

-- A case's arguments as tide values; tensors (in order) also go to `slots`.
local function arguments(case, slots)
  local out = {}
  for i = 1, case.args.n do
    local a = case.args[i]
    if type(a) == "table" and a.ints then -- a list of integers: Lua numbers where exact, else int64 cdata
      local list = {}
      for j, v in ipairs(a.ints) do list[j] = (v > -2 ^ 53 and v < 2 ^ 53) and tonumber(v) or v end
      out[i] = setmetatable(list, { __index = { ints = true } })
    elseif type(a) == "table" and (a.ragged or a.ragged_ints) then -- a RaggedTensor: values and row_splits to slots
      local r = a.ragged or a.ragged_ints
      local v, rs = tide.tensor(r.values, a.ragged and "string" or "int32"), tide.tensor(r.row_splits, "int64")
      slots[#slots + 1], slots[#slots + 2] = v, rs
      out[i] = tide.RaggedTensor.from_row_splits(v, rs)
    elseif type(a) == "table" and a.list then
      local list = {}
      for j, t in ipairs(a.list) do list[j] = tensor(t); slots[#slots + 1] = list[j] end
      out[i] = list
    elseif type(a) == "table" then
      out[i] = tensor(a)
      slots[#slots + 1] = out[i]
    else
      out[i] = a
    end
  end
  return out
end

-- The call of a case as fn(tensors...) (the tensors its arguments hold, in order).
local function call_of(case, args)
  return function(...)
    local given, k = { ... }, 0
    local real = {}
    for i = 1, case.args.n do
      local a = args[i]
      if tide.is_tensor(a) then k = k + 1; real[i] = given[k]
      elseif getmetatable(a) == tide.RaggedTensor then
        real[i] = tide.RaggedTensor.from_row_splits(given[k + 1], given[k + 2])
        k = k + 2
      elseif type(a) == "table" and not a.ints then
        real[i] = {}
        for j = 1, #a do k = k + 1; real[i][j] = given[k] end
      else real[i] = a end
    end
    if next(case.opts) == nil then return S[case.fn](unpack(real, 1, case.args.n)) end
    real[case.args.n + 1] = case.opts
    return S[case.fn](unpack(real, 1, case.args.n + 1))
  end
end

-- Assert tide's result r is TF's (case.want: a tensor; case.ragged: values and row_splits;
-- case.pair: two results, r and r2, each one of those).
local function check(what, case, r, r2)
  if case.pair then
    check(what .. " [1]", case.pair[1], r)
    check(what .. " [2]", case.pair[2], r2)
    return
  end
  if case.ragged then
    assert(getmetatable(r) == tide.RaggedTensor, what .. ": expected a RaggedTensor")
    assert.are.same(case.ragged.values, r.values:totable(), what)
    assert.are.same(case.ragged.row_splits, r.row_splits:totable(), what)
    return
  end
  local w = case.want
  assert.are.equal(w.dtype, r.dtype, what)
  assert.are.same(w.shape, r.shape:as_list(), what)
  local got = h.values(r)
  if w.dtype == "string" then
    assert.are.same(w.values, got, what)
  else
    local ok, err = pcall(h.close, got, w.values, w.dtype == "float32" and 1e-7 or 0)
    assert(ok, what .. ": " .. tostring(err))
  end
end

describe("tide.strings against TensorFlow", function()
  setup(function() tide.config.set_retracing_warning { enabled = false } end)
  teardown(function() tide.config.set_retracing_warning { enabled = true } end)

  for _, case in ipairs(CASES) do
    it(case.name, function()
      local slots = {}
      local fn = call_of(case, arguments(case, slots))
      if case.error then
        h.errors(case.error, fn, unpack(slots))
        h.errors(case.error, tide.trace(fn), unpack(slots))
        return
      end
      check(case.name .. " (eager)", case, fn(unpack(slots)))
      local traced = tide.trace(fn)
      check(case.name .. " (traced)", case, traced(unpack(slots)))
      check(case.name .. " (traced, second run)", case, traced(unpack(slots)))
      if case.fn:match("^unicode") or case.fn == "bytes_split" then -- the ops run in a pipeline's map too
        local args_ok = true
        for _, t in ipairs(slots) do args_ok = args_ok and t.ndim >= 0 end
        if args_ok and #slots == 1 and not case.pair and not case.ragged then
          local ds = tide.data.Dataset.from_tensors(slots[1]):map(fn)
          for y in ds:iter() do check(case.name .. " (data map)", case, y) end
        end
      end
      local text = traced:get_concrete_function(unpack(slots)):graph_text()
      local node = OP[case.fn]
      assert(text:find("= " .. node .. "(", 1, true), case.name .. ": no " .. node .. " node in the graph:\n" .. text)
    end)
  end
end)

-- Strings alive after a full collection (finalizers ran).
local function live()
  collectgarbage("collect")
  collectgarbage("collect")
  return tonumber(C.tide_string_live_count())
end

describe("tide.strings memory", function()
  setup(function() tide.config.set_retracing_warning { enabled = false } end)
  teardown(function() tide.config.set_retracing_warning { enabled = true } end)

  it("frees every string the ops make, on success and on error, eager and traced", function()
    local traced = {}
    local function all()
      for i, case in ipairs(CASES) do
        local slots = {}
        local fn = call_of(case, arguments(case, slots))
        traced[i] = traced[i] or tide.trace(fn)
        pcall(fn, unpack(slots))
        pcall(traced[i], unpack(slots))
      end
    end
    all() -- traces once; later rounds reuse the graphs
    local before = live()
    all()
    all()
    assert.are.equal(before, live())
    traced = {}
    assert.is_true(live() <= before)
  end)
end)

describe("tide.strings on empty inputs", function()
  local none = tide.tensor({}, "string")
  it("keep the empty shape", function()
    for _, name in ipairs { "lower", "upper", "strip" } do
      local r = S[name](none)
      assert.are.same({ 0 }, r.shape:as_list())
      assert.are.equal("string", r.dtype)
    end
    assert.are.equal("int32", S.length(none).dtype)
    assert.are.same({ 0 }, S.to_number(none, { out_type = "int64" }).shape:as_list())
    assert.are.same({ 0 }, S.as_string(tide.zeros({ 0 })).shape:as_list())
    assert.are.same({ 0 }, S.join({ none, "x" }).shape:as_list())
    assert.are.same({ 0 }, S.substr(none, 0, 1).shape:as_list())
    assert.are.same({ 0 }, S.regex_replace(none, "a", "b").shape:as_list())
    assert.are.same({ "" }, { S.reduce_join(none):item() })
    assert.are.same({ "", "" }, S.reduce_join(tide.tensor({}, "string"):reshape { 0, 2 }, { axis = 0 }):totable())
  end)
  it("split: an empty vector gives no rows, an empty string no pieces", function()
    local r = S.split(none)
    assert.are.equal(0, r:nrows())
    assert.are.same({ 0 }, r.row_splits:totable())
    assert.are.same({}, S.split(tide.tensor(" ")):totable())
    assert.are.same({ {}, { "a" } }, S.split(tide.tensor { "", "a" }):totable())
  end)
end)

describe("tide.strings errors", function()
  local x = tide.tensor { "a", "b" }
  it("format and tide.print write tensors alike (one formatter, core/tensor_text.c), eager and traced", function()
    local program = require "tide_program"
    local dir = program.make_tmpdir("formatprint")
    local script = dir .. "/p.lua"
    program.write_file(script, [[
      local tide = require "tide"
      local x = tide.reshape(tide.range(0, 8), { 2, 2, 2 }):cast("float32") / 3
      tide.print(x)
      tide.trace(function(a) tide.print("v", a) end)(tide.tensor({ 123456789, 0.1 }, "float32"))
      io.write(tide.strings.format("{}", x):item(), "\n")
    ]])
    local rc, out, err = program.sh(dir, program.quote(program.path) .. " " .. program.quote(script))
    program.remove_tmpdir(dir)
    assert.are.equal(0, rc, err)
    -- tf.print's text: a blank line between the matrices, float32 in the fewest digits that read back
    local m = "[[[0 0.333333343]\n  [0.666666687 1]]\n\n [[1.33333337 1.66666663]\n  [2 2.33333325]]]"
    assert.are.equal(m .. "\nv [123456792 0.1]\n" .. m .. "\n", out)
  end)

  it("name the op and the wrong input", function()
    h.errors("lower: the input is nil", S.lower, nil)
    h.errors("upper: the input must be a string tensor, got float32", S.upper, tide.ones { 2 })
    h.errors("length: unit must be \"BYTE\" or \"UTF8_CHAR\", got CHAR", S.length, x, { unit = "CHAR" })
    h.errors("lower: encoding utf-8 is not supported", S.lower, x, { encoding = "utf-8" })
    h.errors("out_type must be float32, float64, int32 or int64, got bool", S.to_number, x, { out_type = "bool" })
    h.errors("as_string: the input is already a string tensor", S.as_string, x)
    h.errors("as_string: the input is nil", S.as_string, nil)
    h.errors("join: inputs must be a Lua list of string tensors", S.join, x)
    h.errors("join: inputs is empty", S.join, {})
    h.errors("join: input 2 must be a string tensor, got int32", S.join, { x, tide.tensor { 1, 2 } })
    h.errors("join: separator must be a scalar string", S.join, { x }, { separator = x })
    h.errors("string_join: incompatible shapes [2] and [3]", S.join, { x, tide.tensor { "a", "b", "c" } })
    h.errors("reduce_join: axis 3 is out of range for a tensor of rank 1", S.reduce_join, x, { axis = 3 })
    assert.are.equal("plain {x}", S.format("plain {x}", {}):item()) -- no tensors: the template as it is
    h.errors("format: template must be a Lua string, got a tensor", S.format, x, { x })
    h.errors("format: placeholder must be a non-empty Lua string", S.format, "{}", { x }, { placeholder = "" })
    h.errors("format: summarize must be an integer, got 1.5", S.format, "{}", { x }, { summarize = 1.5 })
    h.errors("format: the template has 0 placeholders but 1 tensors were given (they must match)", S.format, "none", x)
    h.errors("substr: pos and len are required", S.substr, x, 1)
    h.errors("substr: len must not be negative, got -1", S.substr, x, 0, -1)
    h.errors("substr: pos must be int32 or int64, got float32", S.substr, x, 0.5, 1)
    h.errors("substr: unit must be", S.substr, x, 0, 1, { unit = "bytes" })
    h.errors("regex_replace: pattern must be a Lua string, got nil", S.regex_replace, x, nil, "b")
    h.errors("regex_replace: pattern must be a scalar string", S.regex_replace, x, x, "b")
    h.errors("regex_replace: invalid rewrite \"\\x\": a backslash must be followed by a digit or a backslash",
      S.regex_replace, x, "a", "\\x")
    h.errors("invalid rewrite \"x\\\": it ends in a lone backslash", S.regex_replace, x, "a", "x\\")
    h.errors("\\2 names a group the pattern does not have (it has 1)", S.regex_replace, x, "(a)", "\\2")
    h.errors("invalid pattern \"[a\" at offset 2", S.regex_replace, x, "[a", "")
    h.errors("split: the input must be a scalar or a vector, got rank 2", S.split, tide.tensor { { "a" } })
    h.errors("split: sep must be a Lua string, got number", S.split, x, 1)
    h.errors("split: maxsplit must be an integer, got two", S.split, x, " ", "two")
  end)
  it("stop a runaway regex with an error, not a hang", function()
    h.errors("regex_replace: matching element 0 failed", S.regex_replace, tide.tensor { string.rep("a", 40) .. "!" },
      "(a+)+$", "")
  end)
  -- PCRE2_MATCH_INVALID_UTF re-validates the rest of the subject on every pcre2_match
  -- call: replacing 80,000 matches took seconds (quadratic); one pass takes milliseconds.
  it("regex_replace is linear in the number of matches, in valid UTF-8 and in text with invalid bytes", function()
    local n = 80000
    for _, tail in ipairs { "", "\255", "\255" .. ("ab"):rep(10) } do
      local x = tide.tensor { ("ab"):rep(n) .. tail }
      local t0 = os.clock()
      local got = S.regex_replace(x, "b", "c"):item()
      local secs = os.clock() - t0
      assert.are.equal(("ac"):rep(n) .. tail:gsub("b", "c"), got)
      assert(secs < 1, string.format("80,000 matches took %.2f s (tail %q)", secs, tail))
    end
  end)
  it("regex_replace goes on after a match that ends inside a character (\\C matches one byte)", function()
    -- valid UTF-8 is matched without PCRE2's per-call check, which needs every start at a character
    local euro = "\226\130\172"
    assert.are.equal("<\226>\130\172<\226>\130\172",
      S.regex_replace(tide.tensor { euro .. euro }, "\\C", "<\\0>"):item())
    assert.are.equal("<a><\226>\130\172<b>", S.regex_replace(tide.tensor { "a" .. euro .. "b" }, "\\C", "<\\0>"):item())
    assert.are.equal("<\n>< b\226>\130\172", S.regex_replace(tide.tensor { "\n b" .. euro }, ".*\\C", "<\\0>"):item())
  end)
  it("name the element a traced call failed on", function()
    local f = tide.trace(function(t) return S.to_number(t) end)
    h.errors("could not convert string \"x\" (element 1) to float32", f, tide.tensor { "1", "x" })
  end)
end)

describe("tide.RaggedTensor", function()
  local r = S.split(tide.tensor { "a b", "", "c d e" })
  it("holds values and int64 row_splits", function()
    assert.are.equal(3, r:nrows())
    assert.are.same({ "a", "b", "c", "d", "e" }, r.values:totable())
    assert.are.equal("int64", r.row_splits.dtype)
    assert.are.same({ { "a", "b" }, {}, { "c", "d", "e" } }, r:totable())
    assert.matches("row_splits=", tostring(r))
  end)
  it("pads into a dense tensor", function()
    assert.are.same({ { "a", "b", "" }, { "", "", "" }, { "c", "d", "e" } }, r:to_tensor():totable())
    assert.are.same({ { "a", "b", "?" }, { "?", "?", "?" }, { "c", "d", "e" } }, r:to_tensor("?"):totable())
    local n = tide.RaggedTensor.from_row_splits(tide.tensor { 1, 2, 3 }, tide.tensor({ 0, 1, 3 }, "int64"))
    assert.are.same({ { 1, 0 }, { 2, 3 } }, n:to_tensor():totable())
    assert.are.same({ 2, 0 }, S.split(tide.tensor { "", " " }):to_tensor().shape:as_list())
  end)
  it("refuses bad parts", function()
    h.errors("from_row_splits: values must be a tensor", tide.RaggedTensor.from_row_splits, { 1 }, tide.tensor { 0 })
    h.errors("row_splits must be a 1-D int64 tensor", tide.RaggedTensor.from_row_splits, tide.tensor { 1 },
      tide.tensor { 0, 1 })
  end)
  it("refuses its eager-only methods inside a trace", function()
    local f = tide.trace(function(x) return tide.strings.split(x):to_tensor() end)
    h.errors("RaggedTensor:to_tensor: runs eagerly only", f, tide.tensor { "a" })
    local g = tide.trace(function(x) return tide.tensor(tide.strings.split(x):nrows()) end,
      { input_signature = { tide.TensorSpec({ tide.None }, "string") } })
    h.errors("RaggedTensor:nrows: the number of rows is unknown while tracing", g, tide.tensor { "a" })
    local k = tide.trace(function(x) return tide.tensor(tide.strings.split(x):nrows()) end)
    assert.are.equal(2, k(tide.tensor { "a", "b c" }):item())
  end)

  it("crosses traced functions as arguments and results", function()
    local f = tide.trace(function(t) return S.split(t, " ") end)
    local a = f(tide.tensor { "x y", "z" })
    assert.are.equal(tide.RaggedTensor, getmetatable(a))
    assert.are.same({ { "x", "y" }, { "z" } }, a:totable())
    local g = tide.trace(function(rt) return S.reduce_join(rt.values, { separator = "+" }), rt.row_splits end)
    local j, splits = g(a)
    assert.are.equal("x+y+z", j:item())
    assert.are.same({ 0, 2, 3 }, splits:totable())
    j = g(S.split(tide.tensor { "p q", "r" }, " ")) -- same trace types: the same graph with new tensors
    assert.are.equal("p+q+r", j:item())
    assert.are.equal(1, g:experimental_get_tracing_count())
  end)
end)

describe("tide.strings and gradients", function()
  it("are not differentiable: a tape sees no path through them", function()
    local x = tide.tensor({ 1.5, 2 }, "float64")
    local tape = tide.GradientTape()
    local y = tape:run(function()
      tape:watch(x)
      return tide.reduce_sum(S.to_number(S.as_string(x), { out_type = "float64" }) * x)
    end)
    local g = tape:gradient(y, x)
    h.close(g, { 1.5, 2 }) -- only the direct factor x: the string round trip is a constant
    for _, name in ipairs { "string_lower", "string_split", "regex_replace", "as_string", "substr" } do
      assert(bit.band(C.tide_op_flags(C.tide_op_lookup(name)), C.TIDE_OPF_NO_GRAD) ~= 0, name)
    end
  end)
end)
