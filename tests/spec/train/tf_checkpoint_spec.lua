-- tests/spec/train/tf_checkpoint_spec.lua — TensorFlow's checkpoints read by
-- tide.train.load_checkpoint and list_variables: every checkpoint that real TF
-- wrote in tests/fixtures/ckpt (gen.py) gives TF's keys, shapes, dtypes and exact
-- bytes; corrupt copies and dtypes tide lacks give clear errors.
local tide = require "tide"
local h = require "helpers"
local ffi = require "ffi"
local train = tide.train

-- make interop points this at checkpoints the TF at hand just wrote (tests/interop/tf_checkpoint_check.sh)
local FIX = (os.getenv("TIDE_CKPT_FIXTURES") or "tests/fixtures/ckpt") .. "/"
local expected = dofile(FIX .. "expected.lua")

local function hex(s)
  return (s:gsub(".", function(c) return string.format("%02x", c:byte()) end))
end

-- The tensor's bytes as TF's numpy gives them (contiguous, little-endian).
local function bytes_of(t)
  local n = tonumber(t.nelem) * ffi.sizeof(({ float32 = "float", float64 = "double", float16 = "uint16_t",
    bfloat16 = "uint16_t", int8 = "int8_t", uint8 = "uint8_t", int32 = "int32_t", int64 = "int64_t",
    bool = "uint8_t" })[t.dtype])
  return n == 0 and "" or hex(ffi.string(t.data, n))
end

local TIDE_DTYPES = { float32 = true, float64 = true, float16 = true, bfloat16 = true, int8 = true, uint8 = true,
  int32 = true, int64 = true, bool = true, string = true }

local function flat_strings(t)
  local out = {}
  local function walk(v)
    if type(v) == "table" then for _, x in ipairs(v) do walk(x) end else out[#out + 1] = v end
  end
  walk(t:totable())
  return out
end

describe("tide.train.load_checkpoint of TF's checkpoints", function()
  local names = {}
  for name in pairs(expected) do names[#names + 1] = name end
  table.sort(names)

  for _, name in ipairs(names) do
    local want = expected[name]
    it("reads " .. name .. " (" .. want.prefix .. ") as TF does", function()
      local r = train.load_checkpoint(FIX .. want.prefix)
      assert.are.equal("tf", r.format)
      local keys, pairs_, shapes, dtypes = {}, {}, {}, {}
      for i, t in ipairs(want.tensors) do
        keys[i] = t.key
        pairs_[i] = { t.key, t.shape }
        shapes[t.key] = t.shape
        dtypes[t.key] = t.dtype
      end
      assert.are.same(keys, r:keys())
      assert.are.same(shapes, r:get_variable_to_shape_map())
      assert.are.same(dtypes, r:get_variable_to_dtype_map())
      assert.are.same(pairs_, train.list_variables(FIX .. want.prefix))
      for _, t in ipairs(want.tensors) do
        assert.is_true(r:has_tensor(t.key))
        if TIDE_DTYPES[t.dtype] then
          local v = r:get_tensor(t.key)
          assert.are.equal(t.dtype, v.dtype, t.key)
          assert.are.same(t.shape, v.shape:as_list(), t.key)
          if t.strings then
            assert.are.same(t.strings, t.shape[1] == nil and { v:item() } or flat_strings(v), t.key)
          else
            assert.are.equal(t.bytes, bytes_of(v), t.key)
          end
        else
          h.errors("tensor '" .. t.key .. "' has dtype " .. t.dtype .. ", which tide has no dtype for",
            r.get_tensor, r, t.key)
        end
      end
      r:close()
    end)
  end

  it("lists the object graph, and values keep TF's dtypes exactly", function()
    local r = train.load_checkpoint(FIX .. "module/ckpt-1")
    assert.are.equal("_CHECKPOINTABLE_OBJECT_GRAPH", r:keys()[1])
    assert.are.equal("string", r:get_tensor("_CHECKPOINTABLE_OBJECT_GRAPH").dtype)
    local i64 = r:get_tensor("mod/i64/.ATTRIBUTES/VARIABLE_VALUE")
    local p = ffi.cast("const int64_t *", i64.data)
    assert.is_true(p[0] == 4611686018427387905LL and p[1] == -9223372036854775807LL - 1 and p[2] == 42)
    local s = r:get_tensor("mod/i64_scalar/.ATTRIBUTES/VARIABLE_VALUE")
    assert.is_true(ffi.cast("const int64_t *", s.data)[0] == -9007199254740993LL)
    h.close(r:get_tensor("mod/f32/.ATTRIBUTES/VARIABLE_VALUE"), { { 1.5, -2.25, 3 }, { 0, 0, 1e-30 } })
    assert.are.same({ 3.141592653589793, -1e300, 5e-324 }, r:get_tensor("mod/f64/.ATTRIBUTES/VARIABLE_VALUE"):totable())
    assert.are.same({ true, false, true, true }, r:get_tensor("mod/flags/.ATTRIBUTES/VARIABLE_VALUE"):totable())
    assert.are.same({ "hello", "", "a\0b\255", string.rep("x", 200) },
      r:get_tensor("mod/words/.ATTRIBUTES/VARIABLE_VALUE"):totable())
    assert.are.same({ 1, -2.5, 3.140625 }, r:get_tensor("mod/bf16/.ATTRIBUTES/VARIABLE_VALUE"):totable())
    assert.are.equal(3, r:get_tensor("step/.ATTRIBUTES/VARIABLE_VALUE"):item())
    assert.are.same({ 0, 3 }, r:get_tensor("mod/empty/.ATTRIBUTES/VARIABLE_VALUE").shape:as_list())
    h.errors("holds no value named 'nope'", r.get_tensor, r, "nope")
    assert.is_false(r:has_tensor("nope"))
    assert.is_false(r:has_tensor(""))  -- the header is no value
    r:close()
    h.errors("is closed", r.get_tensor, r, "step/.ATTRIBUTES/VARIABLE_VALUE")
  end)

  it("reads a folder's latest checkpoint (TF's `checkpoint` index) and takes the .index path", function()
    assert.are.equal(FIX .. "module/ckpt-1", train.latest_checkpoint(FIX .. "module"))
    local r = train.load_checkpoint(FIX .. "module")
    assert.are.equal(FIX .. "module/ckpt-1", r.path)
    assert.are.equal(23, #train.list_variables(FIX .. "module"))
    assert.are.same(r:keys(), train.load_checkpoint(FIX .. "module/ckpt-1.index"):keys())
  end)

  it("puts tensors saved in slices together, and reads every shard", function()
    local r = train.load_checkpoint(FIX .. "sliced/ckpt")
    assert.are.same({ "cols", "part", "plain" }, r:keys())  -- the slices' own keys are not listed
    assert.are.same({ 5, 3 }, r:get_tensor("part").shape:as_list())
    local s = train.load_checkpoint(FIX .. "sharded/ckpt")
    assert.are.same({ "shard", "ed" }, s:get_tensor("mod/c/.ATTRIBUTES/VARIABLE_VALUE"):totable())
  end)

  it("names the file and the fault of a corrupt checkpoint", function()
    local c = FIX .. "corrupt/"
    h.errors("'" .. c .. "truncated.index' is corrupt: it does not end with the table magic",
      train.load_checkpoint, c .. "truncated")
    h.errors("'" .. c .. "bad_magic.index' is corrupt: it does not end with the table magic",
      train.list_variables, c .. "bad_magic")
    h.errors("'" .. c .. "index_crc.index' is corrupt: the data block 0 at byte 0 fails its checksum",
      train.load_checkpoint, c .. "index_crc")
    local r = train.load_checkpoint(c .. "data_crc")
    h.errors("'" .. c .. "data_crc.data-00000-of-00001' is corrupt: the bytes of tensor " ..
      "'mod/f32/.ATTRIBUTES/VARIABLE_VALUE' fail their checksum", r.get_tensor, r, "mod/f32/.ATTRIBUTES/VARIABLE_VALUE")
    h.close(r:get_tensor("mod/sub/w/.ATTRIBUTES/VARIABLE_VALUE"), { { 0.25, 0.5 } }, 0)  -- the others read
    local n = train.load_checkpoint(c .. "no_data")
    h.errors("cannot open the data file '" .. c .. "no_data.data-00000-of-00001'", n.get_tensor, n,
      "step/.ATTRIBUTES/VARIABLE_VALUE")
    h.errors("no checkpoint at '" .. c .. "nothing'", train.load_checkpoint, c .. "nothing")
  end)

  it("says that tide.train.Checkpoint does not restore TF's checkpoints", function()
    local ck = train.Checkpoint { step = tide.Variable(0, { dtype = "int64" }) }
    h.errors("is TensorFlow's checkpoint ('" .. FIX .. "module/ckpt-1.index'); tide.train.Checkpoint restores " ..
      "tide's own", ck.restore, ck, FIX .. "module/ckpt-1")
  end)
end)
