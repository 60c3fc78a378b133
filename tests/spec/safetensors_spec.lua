-- tests/spec/safetensors_spec.lua — tide.safetensors: round trips of every dtype,
-- files written by Python's safetensors (tests/fixtures/safetensors/gen.py), the
-- exact bytes tide writes, atomic replacement, and hostile files (clear errors).
local tide = require "tide"
local h = require "helpers"
local tmp = require "tmp"
local st = tide.safetensors

local FIX = "tests/fixtures/safetensors/"

local function read_bytes(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

local function write_bytes(path, s)
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
end

local function u64le(n)
  local b = {}
  for i = 1, 8 do
    b[i] = string.char(n % 256)
    n = math.floor(n / 256)
  end
  return table.concat(b)
end

-- A file with this header text and data bytes.
local function file_with(header, data)
  local path = tmp.name(".safetensors")
  write_bytes(path, u64le(#header) .. header .. (data or ""))
  return path
end

local function keys_of(t)
  local out = {}
  for k in pairs(t) do out[#out + 1] = k end
  table.sort(out)
  return out
end

describe("tide.safetensors", function()
  it("reads every dtype, empty tensors, scalars and metadata written by Python's safetensors", function()
    local t = st.load_file(FIX .. "python_all.safetensors")
    assert.are.same({ "bool", "empty_f32", "empty_i64", "f16", "f32", "f32_special", "f64", "i32", "i64", "i8",
      "rank4", "scalar_f32", "scalar_i32", "u8" }, keys_of(t))
    local function check(name, dt, shape, values, tol)
      local x = t[name]
      assert.are.equal(dt, x.dtype, name)
      assert.are.same(shape, x.shape:as_list(), name)
      if values then h.close(x, values, tol or 0) end
    end
    check("f32", "float32", { 2, 3 }, { { 1.5, -2.25, 3.0 }, { 0.0, -0.0, 1e-30 } }, 1e-7) -- 1e-30 rounded
    check("f32_special", "float32", { 4 }, { math.huge, -math.huge, 0 / 0, 3.4028234663852886e38 })
    check("f64", "float64", { 3 }, { math.pi, -1e300, 5e-324 })
    check("f16", "float16", { 4 }, { 1.0, -2.5, 65504.0, 6.103515625e-05 })
    check("i8", "int8", { 3 }, { -128, 127, 0 })
    check("u8", "uint8", { 3 }, { 0, 255, 7 })
    check("i32", "int32", { 2, 2 }, { { -2147483648, 2147483647 }, { 1, -1 } })
    check("i64", "int64", { 3 }, { 9007199254740992, -4611686018427387904, 42 })
    check("bool", "bool", { 4 }, { true, false, true, true })
    check("empty_f32", "float32", { 0 })
    check("empty_i64", "int64", { 2, 0, 3 })
    check("scalar_f32", "float32", {}, { 2.5 })
    check("scalar_i32", "int32", {}, { -7 })
    local r = {}
    for i = 0, 23 do r[i + 1] = i end
    check("rank4", "float32", { 2, 3, 2, 2 }, tide.tensor(r, "float32"):reshape { 2, 3, 2, 2 }:totable())
    assert.are.same({ format = "np", note = "made by gen.py", unicode = "\195\169 \226\156\147" },
      st.load_metadata(FIX .. "python_all.safetensors"))
    local b = st.load_file(FIX .. "python_bf16.safetensors").bf16
    assert.are.equal("bfloat16", b.dtype)
    h.close(b, { 1.0, -2.5, 3.140625, 256.0 }, 0)
    assert.are.same({}, st.load_file(FIX .. "python_empty.safetensors"))
    assert.are.same({}, st.load_metadata(FIX .. "python_empty.safetensors"))
  end)

  it("a dtype tide has not (U16) is a clear error", function()
    h.errors("tensor 'u16' has dtype U16, which tide has no dtype for",
      function() st.load_file(FIX .. "python_u16.safetensors") end)
  end)

  it("round-trips every dtype, scalars, empty and strided tensors, Variables, and metadata", function()
    local path = tmp.name(".safetensors")
    local m = tide.tensor({ { 1, 2, 3 }, { 4, 5, 6 } }, "float32")
    local values = {
      f32 = m, f64 = tide.tensor({ 1e300, -0.5 }, "float64"), f16 = tide.tensor({ 0.5, -3 }, "float16"),
      bf16 = tide.tensor({ 2, -0.25 }, "bfloat16"), i8 = tide.tensor({ -128, 127 }, "int8"),
      u8 = tide.tensor({ 0, 255 }, "uint8"), i32 = tide.tensor({ -5, 7 }, "int32"),
      i64 = tide.tensor({ 2 ^ 53, -3 }, "int64"), bool = tide.tensor { true, false },
      scalar = tide.tensor(3.5, "float64"), empty = tide.zeros({ 0, 4 }, { dtype = "int32" }),
      transposed = m:transpose(), var = tide.Variable(tide.tensor({ 9, 8 }, "float32")),
    }
    st.save_file(values, path, { metadata = { step = 10, who = "spec" } })
    local back = st.load_file(path)
    assert.are.same(keys_of(values), keys_of(back))
    for k, v in pairs(values) do
      local want = type(v) == "userdata" and v:read_value() or v -- a Variable: its value
      assert.are.equal(want.dtype, back[k].dtype, k)
      assert.are.same(want.shape:as_list(), back[k].shape:as_list(), k)
      h.close(back[k], want:totable(), 0)
    end
    assert.are.same({ step = "10", who = "spec" }, st.load_metadata(path))
    -- safe_open reads one tensor at a time
    local f = st.safe_open(path)
    assert.are.same(keys_of(values), f:keys())
    local dt, shape = f:info("transposed")
    assert.are.equal("float32", dt)
    assert.are.same({ 3, 2 }, shape)
    h.close(f:get_tensor("transposed"), { { 1, 4 }, { 2, 5 }, { 3, 6 } }, 0)
    h.errors("holds no tensor named 'nope'", function() f:get_tensor("nope") end)
    f:close()
    h.errors("is closed", function() f:keys() end)
    os.remove(path)
  end)

  it("writes the exact layout Python writes: header padded to 8, larger dtypes first, then by name", function()
    local path = tmp.name(".safetensors")
    st.save_file({ b = tide.tensor({ 1, 2 }, "int8"), a = tide.tensor({ 1.5 }, "float64"),
      c = tide.tensor({ 3 }, "float32") }, path)
    local bytes = read_bytes(path)
    local n = 0
    for i = 8, 1, -1 do n = n * 256 + bytes:byte(i) end
    assert.are.equal(0, (8 + n) % 8)
    local header = bytes:sub(9, 8 + n)
    assert.truthy(header:match("^{.*} *$"))
    assert.truthy(header:find('"a":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}', 1, true))
    assert.truthy(header:find('"c":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}', 1, true))
    assert.truthy(header:find('"b":{"dtype":"I8","shape":[2],"data_offsets":[12,14]}', 1, true))
    assert.are.equal(8 + n + 14, #bytes)
    assert.falsy(header:find("__metadata__", 1, true)) -- none given, none written
    os.remove(path)
  end)

  it("replaces a file atomically and leaves no temporary file, also when the write fails", function()
    local dir = tmp.name("-dir")
    os.execute("mkdir -p " .. dir)
    local path = dir .. "/w.safetensors"
    st.save_file({ x = tide.tensor { 1, 2 } }, path)
    st.save_file({ x = tide.tensor { 3, 4 } }, path)
    h.close(st.load_file(path).x, { 3, 4 }, 0)
    -- a failure: the path is a folder
    os.execute("mkdir -p " .. dir .. "/sub.safetensors")
    h.errors("cannot write '" .. dir .. "/sub.safetensors'",
      function() st.save_file({ x = tide.tensor { 1 } }, dir .. "/sub.safetensors") end)
    -- a failure before writing (a symbolic tensor): the old file stays
    local f = tide.trace(function(x)
      st.save_file({ x = x }, path)
      return x
    end)
    h.errors("is symbolic", function() f(tide.tensor { 5 }) end)
    h.close(st.load_file(path).x, { 3, 4 }, 0)
    local p = io.popen("ls -A " .. dir)
    local listing = p:read("*a")
    p:close()
    assert.are.equal("sub.safetensors\nw.safetensors\n", listing)
    tmp.remove(dir)
  end)

  it("refuses bad arguments with errors naming them", function()
    local path = tmp.name(".safetensors")
    h.errors("expects a table of tensors by name, got a tensor", function() st.save_file(tide.tensor { 1 }, path) end)
    h.errors("the path must be a non-empty string", function() st.save_file({}, nil) end)
    h.errors("tensor names must be strings", function() st.save_file({ tide.tensor { 1 } }, path) end)
    h.errors("'x' is number; only tensors and Variables can be saved", function() st.save_file({ x = 1 }, path) end)
    h.errors("'__metadata__' is reserved", function() st.save_file({ __metadata__ = tide.tensor { 1 } }, path) end)
    h.errors("metadata 'k' is table; values must be strings",
      function() st.save_file({}, path, { metadata = { k = {} } }) end)
    h.errors("unknown option 'meta'", function() st.save_file({}, path, { meta = {} }) end)
    h.errors("cannot open '" .. path .. "'", function() st.load_file(path) end)
    assert.is_nil(io.open(path, "rb"))
  end)

  describe("hostile files: a clear error naming the file and the fault, nothing allocated", function()
    local ok_header = '{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}'
    local cases = {
      { "too short", "\1\0\0", "the header length alone takes 8" },
      { "header length past the end", u64le(1000) .. "{}", "header length (1000 bytes) passes the end of the file" },
      { "header length absurd", u64le(2 ^ 62) .. "{}", "passes the end of the file" },
      { "not JSON", nil, "the header is not valid JSON", '{"x":', "" },
      { "not an object", nil, "the header does not start with '{'", '[1, 2]', "" },
      { "garbage after JSON", nil, "bytes after its JSON object that are not spaces", '{} x', "" },
      { "unknown dtype", nil, "tensor 'x' has an unknown dtype 'F33'",
        '{"x":{"dtype":"F33","shape":[2],"data_offsets":[0,8]}}', ("\0"):rep(8) },
      { "no dtype", nil, "tensor 'x' has no dtype string", '{"x":{"shape":[2],"data_offsets":[0,8]}}',
        ("\0"):rep(8) },
      { "offsets out of range", nil, "data_offsets [0, 16] pass the end of the data (8 bytes)",
        '{"x":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}', ("\0"):rep(8) },
      { "offsets backwards", nil, "end before they begin",
        '{"x":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}}', ("\0"):rep(8) },
      { "offsets overlapping", nil, "overlaps tensor",
        '{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"y":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}',
        ("\0"):rep(8) },
      { "a gap", nil, "bytes 0-4 of the data belong to no tensor",
        '{"x":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}', ("\0"):rep(8) },
      { "data left over", nil, "the tensors cover 8 bytes of data, but the file holds 12", ok_header,
        ("\0"):rep(12) },
      { "shape against bytes", nil, "has shape [3] and dtype F32 (12 bytes), but its data_offsets [0, 8] hold 8",
        '{"x":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}', ("\0"):rep(8) },
      { "absurd shape", nil, "has an absurd shape",
        '{"x":{"dtype":"F32","shape":[4294967296,4294967296,4294967296],"data_offsets":[0,8]}}', ("\0"):rep(8) },
      { "negative dim", nil, "shape entry 0 is not a non-negative integer",
        '{"x":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}}', ("\0"):rep(8) },
      { "fractional dim", nil, "shape entry 1 is not a non-negative integer",
        '{"x":{"dtype":"F32","shape":[1,1.5],"data_offsets":[0,8]}}', ("\0"):rep(8) },
      { "rank 9", nil, "has rank 9; tide tensors have at most 8 dims",
        '{"x":{"dtype":"F32","shape":[1,1,1,1,1,1,1,1,2],"data_offsets":[0,8]}}', ("\0"):rep(8) },
      { "duplicate names", nil, "the tensor name 'x' appears twice",
        '{"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"x":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}',
        ("\0"):rep(8) },
      { "bad offsets", nil, "data_offsets must be two non-negative integers",
        '{"x":{"dtype":"F32","shape":[2],"data_offsets":[0]}}', ("\0"):rep(8) },
      { "metadata not strings", nil, "__metadata__ entry 'k' is not a string", '{"__metadata__":{"k":1}}', "" },
      { "tensor not an object", nil, "tensor 'x' is not described by a JSON object", '{"x":[1]}', "" },
      { "nested too deep", nil, "nests deeper than a safetensors header does",
        '{"x":{"dtype":"F32","shape":[[2]],"data_offsets":[0,8]}}', ("\0"):rep(8) },
      { "too many values (cJSON memory)", nil, "holds more than 4194304 JSON values",
        '{"x":[' .. ("0,"):rep(4194304) .. '0]}', "" },
      -- Python's safetensors reads the header as a Rust str (std::str::from_utf8): strict UTF-8,
      -- no overlong forms, no surrogates, nothing past U+10FFFF.
      { "header not UTF-8 (a stray byte)", nil, "the header is not valid UTF-8 (at byte 3 of",
        '{"x\255":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}', ("\0"):rep(8) },
      { "header not UTF-8 (overlong)", nil, "the header is not valid UTF-8 (at byte 2 of",
        '{"\192\175":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}', ("\0"):rep(8) },
      { "header not UTF-8 (a surrogate)", nil, "the header is not valid UTF-8 (at byte 2 of",
        '{"\237\160\128":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}', ("\0"):rep(8) },
      { "header not UTF-8 (past U+10FFFF)", nil, "the header is not valid UTF-8 (at byte 2 of",
        '{"\244\144\128\128":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}', ("\0"):rep(8) },
      { "header not UTF-8 (cut short)", nil, "the header is not valid UTF-8 (at byte 2 of",
        '{"\226\130":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}', ("\0"):rep(8) },
      { "header not UTF-8 (in metadata)", nil, "the header is not valid UTF-8 (at byte 22 of",
        '{"__metadata__":{"k":"\128"}}', "" },
    }
    for _, c in ipairs(cases) do
      it(c[1], function()
        local path
        if c[2] then
          path = tmp.name(".safetensors")
          write_bytes(path, c[2])
        else
          path = file_with(c[4], c[5])
        end
        local err = h.errors(c[3], function() st.load_file(path) end)
        assert.truthy(err:find("'" .. path .. "' is corrupt", 1, true), err)
        h.errors(c[3], function() st.load_metadata(path) end)
        os.remove(path)
      end)
    end

    it("a folder, or a file that shrinks after it was opened", function()
      h.errors("is not a regular file", function() st.load_file("/tmp") end)
      local path = tmp.name(".safetensors")
      st.save_file({ x = tide.zeros { 1000 } }, path)
      local f = st.safe_open(path)
      write_bytes(path, read_bytes(path):sub(1, 100))
      h.errors("the file ended early", function() f:get_tensor("x") end)
      f:close()
      os.remove(path)
    end)
  end)

  it("names and metadata in UTF-8 of every length are accepted", function()
    local name = "x\195\169\226\130\172\240\159\152\128" -- x, é, €, an emoji: 1 to 4 bytes each
    local path = file_with('{"__metadata__":{"k\195\169":"\226\130\172"},"' .. name ..
      '":{"dtype":"I32","shape":[1],"data_offsets":[0,4]}}', "\7\0\0\0")
    h.close(st.load_file(path)[name], { 7 }, 0)
    assert.equal("\226\130\172", st.load_metadata(path)["k\195\169"])
    os.remove(path)
  end)

  it("header padding with spaces and whitespace inside the JSON are accepted", function()
    local path = file_with('{ "x" : {"dtype":"I32", "shape":[1], "data_offsets":[0,4]} }   ', "\7\0\0\0")
    h.close(st.load_file(path).x, { 7 }, 0)
    os.remove(path)
  end)
end)
