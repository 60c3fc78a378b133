-- stdlib/tide/ops/lookup.lua — tide.lookup: hashed vocabularies as tensors (the registry ops lookup_table and
-- lookup_find under Keras's StringLookup, IntegerLookup and TextVectorization), and ragged_to_tensor.
local binding = require "tide.binding"
local dispatch = require "tide.dispatch"
local convert = require "tide.convert"
local args = require "tide.args"
local dtype = require "tide.dtype"
local C, Tensor = binding.C, binding.Tensor
local istype = binding.ffi.istype
local fmt = string.format

local M = {}

-- A vocabulary: a 1-D string or int64 tensor (Lua lists convert; integer lists become int64).
local function vocabulary(v, op)
  if v == nil then binding.error(op .. ": the vocabulary is nil; expected a 1-D string or int64 tensor") end
  local t
  if istype(Tensor, v) then t = v
  elseif type(v) == "table" and type(v[1]) == "number" then t = convert.tensor(v, "int64", op)
  else t = convert.tensor(convert.unvariable(v), nil, op) end
  if t.dt ~= C.TIDE_STRING and t.dt ~= C.TIDE_INT64 then
    binding.error(fmt("%s: the vocabulary must be string or int64, got %s", op, dtype.names[t.dt]))
  end
  return t
end

-- table(vocabulary): the int64 slots of a hash table over the vocabulary's tokens (open addressing, a power of two
-- at least twice its length; -1 marks an empty slot). Made once, then handed to find with the same vocabulary.
function M.table(vocab)
  return dispatch.run(C.TIDE_OP_LOOKUP_TABLE, dispatch.attrs(), { vocabulary(vocab, "lookup.table") })
end

-- find(keys, vocabulary, table, {first=0, num_oov=0}): each key's index in the vocabulary plus first; a key not
-- in it goes to OOV slot first - num_oov + floormod(key, num_oov) (strings: at most one slot), or -1 without one.
-- keys have the vocabulary's dtype (integer keys are cast to int64).
function M.find(keys, vocab, tbl, ...)
  local o = args.parse("lookup.find", { "first", "num_oov" }, ...)
  local v = vocabulary(vocab, "lookup.find")
  local k = convert.arg(keys, "lookup.find", 1)
  if v.dt == C.TIDE_INT64 and k.dt ~= C.TIDE_INT64 and k.dt ~= C.TIDE_STRING then
    local a = dispatch.attrs()
    a.dtype = C.TIDE_INT64
    k = dispatch.run(C.TIDE_OP_CAST, a, { k })
  end
  local a = dispatch.attrs()
  a.n = o.first == nil and 0 or args.int("lookup.find", "first", o.first)
  a.m = o.num_oov == nil and 0 or args.int("lookup.find", "num_oov", o.num_oov)
  if not istype(Tensor, tbl) then binding.error("lookup.find: table must be the tensor lookup.table gave") end
  return dispatch.run(C.TIDE_OP_LOOKUP_FIND, a, { k, v, tbl })
end

-- ragged_to_tensor(values, row_splits, default, width=0): the rows values[row_splits[i]:row_splits[i+1]] as a
-- dense [rows, width] tensor, short rows padded with default, longer ones cut (width 0: the longest row). Runs
-- traced and on pipeline threads (RaggedTensor:to_tensor calls it).
function M.ragged_to_tensor(values, row_splits, default, width)
  local v = convert.arg(values, "ragged_to_tensor", 1)
  local d = convert.tensor(default, dtype.names[v.dt], "ragged_to_tensor")
  local a = dispatch.attrs()
  a.n = width == nil and 0 or args.int("ragged_to_tensor", "width", width)
  return dispatch.run(C.TIDE_OP_RAGGED_TO_TENSOR, a, { v, convert.arg(row_splits, "ragged_to_tensor", 2), d })
end

return M
