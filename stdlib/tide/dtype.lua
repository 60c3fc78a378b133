-- stdlib/tide/dtype.lua — dtype names and codes: tide.float32 and friends are
-- the strings "float32" ...; every API accepts those names (and common aliases).
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

-- Public constants: tide.float32 == "float32", ...
M.constants = {}
for code, name in pairs(M.names) do M.constants[name] = name end

return M
