-- stdlib/tide/dtype.lua — dtype names and codes, and the dtype constants: tide.float32
-- and friends are DType objects equal to their names; every API accepts either.
local binding = require "tide.binding"
local ffi, C = binding.ffi, binding.C

local M = {}

M.names = {}   -- code -> name
M.codes = {}   -- name (and alias) -> code
for code = 0, tonumber(C.TIDE_NUM_DTYPES) - 1 do
  local name = ffi.string(C.tide_dtype_name(code))
  M.names[code] = name
  M.codes[name] = code
end
for alias, name in pairs { float = "float32", double = "float64", half = "float16", int = "int32",
                           long = "int64", boolean = "bool" } do
  M.codes[alias] = M.codes[name]
end

-- Pointer ctypes to read and write elements of each dtype (halves as bits).
M.ctypes = {
  [C.TIDE_FLOAT32] = ffi.typeof("float *"), [C.TIDE_FLOAT64] = ffi.typeof("double *"),
  [C.TIDE_FLOAT16] = ffi.typeof("uint16_t *"), [C.TIDE_BFLOAT16] = ffi.typeof("uint16_t *"),
  [C.TIDE_INT8] = ffi.typeof("int8_t *"), [C.TIDE_UINT8] = ffi.typeof("uint8_t *"),
  [C.TIDE_INT32] = ffi.typeof("int32_t *"), [C.TIDE_INT64] = ffi.typeof("int64_t *"),
  [C.TIDE_BOOL] = ffi.typeof("uint8_t *"),
}

M.size = {}
M.is_float, M.is_int = {}, {}
for code = 0, tonumber(C.TIDE_NUM_DTYPES) - 1 do
  M.size[code] = tonumber(C.tide_dtype_size(code))
  M.is_float[code] = C.tide_dtype_is_float(code)
  M.is_int[code] = C.tide_dtype_is_int(code)
end

-- Integer ranges, for checking Lua numbers converted to integer dtypes.
M.int_range = {
  [C.TIDE_INT8] = { -128, 127 }, [C.TIDE_UINT8] = { 0, 255 },
  [C.TIDE_INT32] = { -2147483648, 2147483647 },
  [C.TIDE_INT64] = { -2^63, 9223372036854774784 },  -- the largest double below 2^63
}

-- The code for a dtype name, or an error naming `what` (the op or argument).
function M.code(dtype, what)
  local code = M.codes[dtype]
  if code then return code end
  local names = {}
  for i = 0, #M.names do names[#names + 1] = M.names[i] end
  binding.error(string.format("%s: unknown dtype %s (expected one of %s)", what or "dtype",
    type(dtype) == "string" and ("'" .. dtype .. "'") or tostring(dtype), table.concat(names, ", ")))
end

-- Public constants: tide.float32 ... are DType objects (TF's tf.float32), not
-- the strings themselves, so that an API where a string is also a value can
-- tell them apart (CsvDataset's record_defaults: tide.int32 is a required
-- int32 column, "int32" a string default). Everywhere else one stands for its
-- name: it compares equal to it (tide.float32 == "float32", both ways: a
-- cdata's __eq runs against a string, where a table's would not), prints,
-- concatenates and formats as it, answers the string methods (dt:find("float"))
-- and #dt; dtype.codes and args.parse take it. Table keys are the one place
-- it is not its name: dtype.name(d) gives the string.
ffi.cdef "struct tide_lua_dtype { int32_t code; };"
local DType = {}
local dtype_ct
local function is_dtype(v) return type(v) == "cdata" and ffi.istype(dtype_ct, v) end
local function name_of(v)
  if type(v) == "string" then return v end
  if is_dtype(v) then return M.names[v.code] end
end
local FIELDS = {
  name = function(d) return M.names[d.code] end,
  is_floating = function(d) return M.is_float[d.code] end,
  is_integer = function(d) return M.is_int[d.code] end,
  is_bool = function(d) return d.code == C.TIDE_BOOL end,
  size = function(d) return M.size[d.code] end, -- bytes per element (0 for strings)
}
DType.__index = function(d, k)
  local f = FIELDS[k]
  if f then return f(d) end
  local sf = string[k]
  if sf then return function(self, ...) return sf(M.names[self.code], ...) end end
end
DType.__eq = function(a, b)
  local na, nb = name_of(a), name_of(b)
  return na ~= nil and na == nb
end
DType.__tostring = function(d) return M.names[d.code] end
DType.__concat = function(a, b) return tostring(a) .. tostring(b) end
DType.__len = function(d) return #M.names[d.code] end
dtype_ct = ffi.metatype("struct tide_lua_dtype", DType)

M.is_dtype = is_dtype
-- The name of a dtype given as a name or a DType (anything else: nil).
M.name = name_of

M.constants = {}
for code, name in pairs(M.names) do
  local d = dtype_ct(code)
  M.constants[name] = d
  M.codes[d] = code -- a constant looks its code up as its name does
end

return M
