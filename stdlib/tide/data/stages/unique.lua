-- stdlib/tide/data/stages/unique.lua — ds:unique(): each distinct element
-- once, in the order first seen, as TF 2.21's (Lua engine only).
local binding = require "tide.binding"
local structure = require "tide.data.structure"
local stage = require "tide.data.stage"

local ffi, C = binding.ffi, binding.C
local UNKNOWN = stage.UNKNOWN

local UNIQUE_DTYPES = { int32 = true, int64 = true, string = true }

-- ds:unique(): each distinct element once, in the order first seen. As TF:
-- one component of int32, int64 or string (any shape; equal means the same
-- shape and values).
local function unique(self)
  if #self.specs ~= 1 or self.template.kind ~= "tensor" then
    binding.error(string.format("unique: the elements must be single tensors; these have %d components " ..
      "(TF's UniqueDataset supports a single component only)", #self.specs))
  end
  local s = self.specs[1]
  if structure.is_dataset_spec(s) or not UNIQUE_DTYPES[s.dtype] then
    binding.error(string.format("unique: elements of %s are not supported; only int32, int64 and string, as TF's",
      structure.is_dataset_spec(s) and "datasets" or s.dtype))
  end
  local ds = stage.derive(self, "unique")
  ds.card = UNKNOWN -- TF 2.21: unknown, even over an infinite input
  return ds
end

local len_out = ffi.new("int64_t[1]")

-- A string that is the same for two tensors exactly when their shapes and values are.
local function key_of(x)
  x = x:contiguous()
  local parts = { table.concat(x.shape, "x"), "|" }
  if x.dt == C.TIDE_STRING then
    for i = 0, tonumber(x.nelem) - 1 do
      local p = C.tide_string_at(x.data, i, len_out)
      local n = tonumber(len_out[0])
      parts[#parts + 1] = n .. ":" .. (n > 0 and ffi.string(p, n) or "") -- length-prefixed: no two lists collide
    end
  else
    parts[#parts + 1] = ffi.string(x.data, tonumber(x.nelem) * tonumber(C.tide_dtype_size(x.dt)))
  end
  binding.keep_alive(x) -- x.data was read above
  return table.concat(parts)
end

local s = {}

function s.lua(ds, open)
  local nextf, close = open(ds.input)
  local seen = {}
  return function()
    while true do
      local flat = nextf()
      if flat == nil then return nil end
      local k = key_of(flat[1])
      if not seen[k] then
        seen[k] = true
        return flat
      end
    end
  end, close
end

return { methods = { unique = unique }, stages = { unique = s } }
