-- stdlib/tide/format.lua — tostring for tensors in TensorFlow's style:
--   tide.Tensor([1 2 3], shape=(3,), dtype=int32)
-- with numpy's array text (aligned columns, `1.` for whole floats, scientific
-- notation for wide ranges, `...` past 1000 elements, rows wrapped at 75).
local binding = require "tide.binding"
local dtype = require "tide.dtype"
local ffi, C = binding.ffi, binding.C

local M = {}

local THRESHOLD, EDGE, WIDTH, PRECISION = 1000, 3, 75, 8
local F16, BF16, F32, BOOL = C.TIDE_FLOAT16, C.TIDE_BFLOAT16, C.TIDE_FLOAT32, C.TIDE_BOOL

-- Tensor values reach Lua only through C's tide_read_number: it gives every
-- NaN as the one canonical NaN (a float NaN's other bit patterns read
-- straight into Lua are forged LuaJIT values: strings, tables, nil) and a
-- bool byte as 0 or 1 (any nonzero byte is true).
local read_number = C.tide_read_number
local INT64, STRING = C.TIDE_INT64, C.TIDE_STRING
local i64p = ffi.typeof("const int64_t *")
local string_at = C.tide_string_at
local len_box = ffi.new("int64_t[1]")

-- Element i of a string buffer as a Lua string (any bytes).
local function string_element(data, i)
  local p = string_at(data, i, len_box)
  return ffi.string(p, len_box[0])
end

-- Element i (counted in elements from t.data) as a Lua number, or boolean
-- for bool. Callers use t after their last read (binding.keep_alive).
function M.element(t, i)
  local dt = t.dt
  if dt == STRING then return string_element(t.data, i) end
  local v = read_number(t.data, dt, i)
  if dt == BOOL then return v ~= 0 end
  return v
end

-- Element reader for a tensor's dtype: element index -> Lua value. The
-- closure holds only a raw pointer, which does not keep the tensor alive:
-- callers must use the tensor after their last read (binding.keep_alive). It must
-- not capture the tensor either: a compiled trace can pin a closure (and so
-- anything it captures) long after the call.
-- With `exact`, int64 elements come as decimal strings (Lua numbers round
-- past 2^53), for printing.
local function reader(t, exact)
  local dt, data = t.dt, t.data
  if dt == STRING then return function(i) return string_element(data, i) end end
  if exact and dt == INT64 then
    local p = ffi.cast(i64p, data)
    return function(i) return (tostring(p[i]):gsub("LL$", "")) end
  end
  if dt == BOOL then return function(i) return read_number(data, dt, i) ~= 0 end end
  return function(i) return read_number(data, dt, i) end
end
M.reader = reader

-- The shape as TF prints it: (), (3,), (2, 3), (None, 3).
function M.shape_text(dims)
  -- nil, or a tide.Shape of unknown rank: TF's "<unknown>"
  if dims == nil or rawget(dims, "unknown_rank") then return "<unknown>" end
  local parts = {}
  for i, d in ipairs(dims) do parts[i] = tostring(d) end -- tide.None prints as None
  if #parts == 1 then return "(" .. parts[1] .. ",)" end
  return "(" .. table.concat(parts, ", ") .. ")"
end

-- Round-trip check: does `s` read back as v at the tensor's precision?
local f32box = ffi.new("float[1]")
local function same_at(dt, v, s)
  local r = tonumber(s)
  if dt == F32 then
    f32box[0] = r
    return f32box[0] == v
  elseif dt == F16 then
    return C.tide_half_to_float(C.tide_float_to_half(r)) == v
  elseif dt == BF16 then
    return C.tide_bfloat16_to_float(C.tide_float_to_bfloat16(r)) == v
  end
  return r == v
end

-- Fewest fractional digits (<= PRECISION) that give v back, in fixed or sci form.
local function digits_needed(dt, v, conv)
  for d = 0, PRECISION do
    if same_at(dt, v, string.format("%." .. d .. conv, v)) then return d end
  end
  return PRECISION
end

-- "nan", "inf" or "-inf" for those values, else nil.
local function special(v)
  if v ~= v then return "nan" end
  if v == math.huge then return "inf" end
  if v == -math.huge then return "-inf" end
end

-- Strings for float values, numpy's 'maxprec' mode.
local function float_strings(dt, values)
  local finite = {}
  for _, v in ipairs(values) do
    if not special(v) then finite[#finite + 1] = math.abs(v) end
  end
  local maxv, minv = 0, math.huge
  for _, a in ipairs(finite) do
    if a > maxv then maxv = a end
    if a ~= 0 and a < minv then minv = a end
  end
  local sci = #finite > 0 and (maxv >= 1e8 or (minv < 1e-4) or (minv ~= math.huge and maxv / minv > 1e3))
  local out = {}
  if sci then
    local prec = 0
    for _, v in ipairs(values) do
      if not special(v) then prec = math.max(prec, digits_needed(dt, v, "e")) end
    end
    for i, v in ipairs(values) do
      local s = special(v)
      if not s then
        s = string.format("%." .. prec .. "e", v)
        local mant, ex = s:match("^(.-)e(.*)$")
        if prec == 0 then mant = mant .. "." end
        local sign, digits = ex:match("^([+-])0*(%d+)$")
        if #digits < 2 then digits = "0" .. digits end
        s = mant .. "e" .. sign .. digits
      end
      out[i] = s
    end
  else
    local frac = {}
    local maxfrac = 0
    for i, v in ipairs(values) do
      if not special(v) then
        frac[i] = digits_needed(dt, v, "f")
        if frac[i] > maxfrac then maxfrac = frac[i] end
      end
    end
    for i, v in ipairs(values) do
      local s = special(v)
      if not s then
        s = string.format("%." .. frac[i] .. "f", v)
        if frac[i] == 0 then s = s .. "." end
        s = s .. string.rep(" ", maxfrac - frac[i]) -- align the decimal points
      end
      out[i] = s
    end
  end
  return out
end

-- Python's repr of bytes, as numpy and TF print string elements: b'abc',
-- b"it's", with \\, \n, \r, \t and \xNN for other bytes outside 32..126.
local byte_escapes = { ["\\"] = "\\\\", ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t" }
function M.bytes_repr(v)
  local quote = (v:find("'", 1, true) and not v:find('"', 1, true)) and '"' or "'"
  local body = v:gsub("[%z\1-\31\\\127-\255'\"]", function(c)
    if c == "'" or c == '"' then return c == quote and "\\" .. c or c end
    return byte_escapes[c] or string.format("\\x%02x", c:byte())
  end)
  return "b" .. quote .. body .. quote
end

-- Every printed element's string, padded to one width (strings are not: numpy's way).
local function element_strings(t, values)
  local dt = t.dt
  if dt == STRING then
    local strs = {}
    for i, v in ipairs(values) do strs[i] = M.bytes_repr(v) end
    return strs
  end
  local strs
  if dtype.is_float[dt] then
    strs = float_strings(dt, values)
  else
    strs = {}
    for i, v in ipairs(values) do
      if dt == BOOL then strs[i] = v and "True" or "False"
      elseif type(v) == "string" then strs[i] = v -- exact int64
      else strs[i] = string.format("%d", v) end
    end
  end
  local w = 0
  for _, s in ipairs(strs) do if #s > w then w = #s end end
  for i, s in ipairs(strs) do strs[i] = string.rep(" ", w - #s) .. s end
  return strs
end

-- The positions shown along a dim of size n (all, or the edges around a gap).
local function shown(n, summarize)
  local idx = {}
  if summarize and n > 2 * EDGE then
    for i = 0, EDGE - 1 do idx[#idx + 1] = i end
    idx[#idx + 1] = false -- the "..." marker
    for i = n - EDGE, n - 1 do idx[#idx + 1] = i end
  else
    for i = 0, n - 1 do idx[#idx + 1] = i end
  end
  return idx
end

-- numpy's array text for t (without TF's wrapper).
function M.array_text(t)
  local nd = t.ndim
  local dims, strides = {}, {}
  for i = 0, nd - 1 do dims[i + 1], strides[i + 1] = tonumber(t.dims[i]), tonumber(t.strides[i]) end
  local read = reader(t, true)
  if nd == 0 then
    local text = element_strings(t, { read(0) })[1]:match("^%s*(.-)%s*$")
    binding.keep_alive(t)
    return text
  end
  local summarize = tonumber(t.nelem) > THRESHOLD
  -- Gather the shown values in order, then format them together.
  local values = {}
  local function gather(d, off)
    for _, i in ipairs(shown(dims[d], summarize)) do
      if i then
        if d == nd then values[#values + 1] = read(off + i * strides[d])
        else gather(d + 1, off + i * strides[d]) end
      end
    end
  end
  gather(1, 0)
  binding.keep_alive(t)
  local strs = element_strings(t, values)
  local k = 0
  local function render(d, indent)
    local parts = {}
    if d == nd then
      -- One row: wrap at the line width like numpy.
      local line, lines = "[", {}
      local first = true
      for _, i in ipairs(shown(dims[d], summarize)) do
        local word
        if i then k = k + 1; word = strs[k] else word = "..." end
        local sep = first and "" or " "
        if not first and #indent + #line + #sep + #word + 1 > WIDTH then
          lines[#lines + 1] = line
          line = " " .. word
        else
          line = line .. sep .. word
        end
        first = false
      end
      lines[#lines + 1] = line .. "]"
      return table.concat(lines, "\n" .. indent .. " ")
    end
    local seps = string.rep("\n", nd - d) .. indent .. " "
    for _, i in ipairs(shown(dims[d], summarize)) do
      if i then parts[#parts + 1] = render(d + 1, indent .. " ")
      else parts[#parts + 1] = "..." end
    end
    return "[" .. table.concat(parts, seps) .. "]"
  end
  return render(1, "")
end

-- tostring(x): TF's wrapper around numpy's text, e.g. tide.Tensor([1 2], shape=(2,), dtype=int32).
function M.tostring(t)
  if bit.band(t.flags, C.TIDE_TENSOR_SYMBOLIC) ~= 0 then
    -- TF: Tensor("add:0", shape=(None, 3), dtype=float32) for graph tensors.
    local dims = nil -- an unknown rank: shape=<unknown>
    if t.ndim >= 0 then
      dims = {}
      for i = 0, t.ndim - 1 do
        local d = tonumber(t.dims[i])
        dims[i + 1] = d < 0 and "None" or d
      end
    end
    return string.format("tide.Tensor(\"%%%d:%d\", shape=%s, dtype=%s, symbolic)", t.inline_data.sym.node,
      t.inline_data.sym.index, M.shape_text(dims), dtype.names[t.dt])
  end
  if t.data == nil and t.nelem > 0 then return "tide.Tensor(<released>)" end
  local dims = {}
  for i = 0, t.ndim - 1 do dims[i + 1] = tonumber(t.dims[i]) end
  local text = M.array_text(t)
  if text:find("\n", 1, true) then text = "\n" .. text end
  return string.format("tide.Tensor(%s, shape=%s, dtype=%s)", text, M.shape_text(dims), dtype.names[t.dt])
end

return M
