-- stdlib/tide/ops/strings.lua — tide.strings (TF's tf.strings): registry ops on
-- string tensors (split, regex_replace, lower, upper, strip, length, to_number,
-- as_string, join, format, reduce_join, substr, the to_hash_bucket hashes, ngrams;
-- the Unicode ones in strings_unicode.lua), and tide.RaggedTensor, the value
-- split gives for a vector. None is differentiable (NO_GRAD rows).
local binding = require "tide.binding"
local dispatch = require "tide.dispatch"
local convert = require "tide.convert"
local dtype = require "tide.dtype"
local args = require "tide.args"
local tensor = require "tide.tensor"
local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor
local istype = ffi.istype
local fmt = string.format

local M = {}
local STRING = C.TIDE_STRING

-- The string tensor argument `what` of `op` (Lua strings and lists convert).
local function strings(v, op, what)
  if v == nil then binding.error(fmt("%s: %s is nil; expected a string tensor", op, what or "the input")) end
  local t = istype(Tensor, v) and v or convert.tensor(convert.unvariable(v), nil, op)
  if t.dt ~= STRING then
    binding.error(fmt("%s: %s must be a string tensor, got %s", op, what or "the input", dtype.names[t.dt]))
  end
  return t
end

-- A 0-d string tensor from a Lua string (separators, patterns), or a scalar string tensor as given.
local function scalar_string(v, op, what)
  if type(v) ~= "string" and not istype(Tensor, v) then
    binding.error(fmt("%s: %s must be a Lua string, got %s", op, what, type(v)))
  end
  local t = strings(v, op, what)
  if t.ndim ~= 0 then binding.error(fmt("%s: %s must be a scalar string", op, what)) end
  return t
end

---------------------------------------------------------------------------
-- RaggedTensor: rows of different lengths, as TF's (values + row_splits)
---------------------------------------------------------------------------

-- __tracing_composite: tide.trace carries one across a traced function's
-- arguments and results as its two tensors (TF's CompositeTensor).
local Ragged = { __tracing_composite = true }
Ragged.__index = Ragged
M.RaggedTensor = Ragged

-- tide.RaggedTensor.from_row_splits(values, row_splits): row i is values[row_splits[i]:row_splits[i+1]].
function Ragged.from_row_splits(values, row_splits)
  if not istype(Tensor, values) then binding.error("RaggedTensor.from_row_splits: values must be a tensor") end
  if not istype(Tensor, row_splits) or row_splits.dt ~= C.TIDE_INT64 or row_splits.ndim ~= 1 then
    binding.error("RaggedTensor.from_row_splits: row_splits must be a 1-D int64 tensor")
  end
  return setmetatable({ values = values, row_splits = row_splits }, Ragged)
end

-- The number of rows (a Lua number: inside tide.trace it must be known).
function Ragged:nrows()
  local n = tonumber(self.row_splits.dims[0])
  if n < 0 then
    binding.error("RaggedTensor:nrows: the number of rows is unknown while tracing (the input's dims are None)")
  end
  return n - 1
end

-- An error for the eager-only methods inside tide.trace.
local function eager_only(self, what)
  if tensor.is_symbolic(self.values) or tensor.is_symbolic(self.row_splits) then
    binding.error("RaggedTensor:" .. what .. ": runs eagerly only, not inside tide.trace (return the RaggedTensor " ..
      "from the traced function and call it on the result)")
  end
end

-- Nested Lua lists of the rows' values.
function Ragged:totable()
  eager_only(self, "totable")
  local vals, splits, out = self.values:totable(), self.row_splits:totable(), {}
  for r = 1, #splits - 1 do
    local row = {}
    for i = splits[r] + 1, splits[r + 1] do row[#row + 1] = vals[i] end
    out[r] = row
  end
  return out
end

-- A dense [nrows, longest] tensor, short rows padded with default_value ("" or 0).
function Ragged:to_tensor(default_value)
  eager_only(self, "to_tensor")
  local rows = self:totable()
  local width = 0
  for _, r in ipairs(rows) do width = math.max(width, #r) end
  local fill = default_value
  if fill == nil then fill = self.values.dt == STRING and "" or 0 end
  for _, r in ipairs(rows) do for i = #r + 1, width do r[i] = fill end end
  if width == 0 then return convert.empty(self.values.dt, { #rows, 0 }, "to_tensor") end
  return convert.tensor(rows, dtype.names[self.values.dt], "to_tensor")
end

function Ragged:__tostring()
  return "tide.RaggedTensor(" .. tostring(self.values) .. ", row_splits=" .. tostring(self.row_splits) .. ")"
end

---------------------------------------------------------------------------
-- The ops
---------------------------------------------------------------------------

-- split(input, sep=nil, maxsplit=-1): a scalar gives a 1-D tensor of its
-- pieces; a vector gives a RaggedTensor (one row per element). sep nil or
-- "" splits on whitespace runs (TF's rule).
function M.split(input, ...)
  local o = args.parse("split", { "sep", "maxsplit" }, ...)
  local x = strings(input, "split")
  if x.ndim < 0 then -- a scalar gives a tensor, a vector a RaggedTensor: the rank must be known
    binding.error("split: the rank of the input must be known (a traced input of unknown rank: give its TensorSpec a shape)")
  end
  if x.ndim > 1 then
    binding.error(fmt("split: the input must be a scalar or a vector, got rank %d (reshape it first)", x.ndim))
  end
  local a = dispatch.attrs()
  local maxsplit = o.maxsplit == nil and -1 or args.int("split", "maxsplit", o.maxsplit)
  a.n = maxsplit < 0 and 0 or maxsplit + 1
  local values, splits = dispatch.run(C.TIDE_OP_STRING_SPLIT, a, { x, scalar_string(o.sep or "", "split", "sep") }, 2)
  if x.ndim == 0 then return values end
  return Ragged.from_row_splits(values, splits)
end

-- A one-input op of the family.
local function map(name, op, set)
  return function(input, ...)
    local o = set and args.parse(name, set.keys, ...) or {}
    local x = strings(input, name)
    local a = dispatch.attrs()
    if set then set.fill(a, o) end
    return dispatch.run(op, a, { x })
  end
end

-- lower/upper(input, {encoding=""}): ASCII letters only, as TF's default;
-- TF's encoding="utf-8" (Unicode case mapping) is not supported.
local function ascii_only(name)
  return { keys = { "encoding" }, fill = function(_, o)
    if o.encoding ~= nil and o.encoding ~= "" then
      binding.error(fmt("%s: encoding %s is not supported (only ASCII letters change case: leave encoding unset)",
        name, tostring(o.encoding)))
    end
  end }
end
M.lower = map("lower", C.TIDE_OP_STRING_LOWER, ascii_only("lower"))
M.upper = map("upper", C.TIDE_OP_STRING_UPPER, ascii_only("upper"))
M.strip = map("strip", C.TIDE_OP_STRING_STRIP)

-- A unit option as the ops' attribute n: 0 bytes, 1 UTF-8 characters.
local function unit_code(op, unit)
  unit = unit or "BYTE"
  if unit ~= "BYTE" and unit ~= "UTF8_CHAR" then
    binding.error(fmt("%s: unit must be \"BYTE\" or \"UTF8_CHAR\", got %s", op, tostring(unit)))
  end
  return unit == "UTF8_CHAR" and 1 or 0
end

-- length(input, {unit="BYTE" | "UTF8_CHAR"}): int32 lengths (UTF8_CHAR counts
-- the bytes that start a character, so invalid UTF-8 counts too, as TF).
M.length = map("length", C.TIDE_OP_STRING_LENGTH, { keys = { "unit" }, fill = function(a, o)
  a.n = unit_code("length", o.unit)
end })

-- to_number(input, {out_type="float32"}): each whole string parsed; a bad one is an error naming it.
M.to_number = map("to_number", C.TIDE_OP_STRING_TO_NUMBER, { keys = { "out_type" }, fill = function(a, o)
  a.dtype = dtype.code(o.out_type or "float32", "to_number")
end })

-- as_string(x): numbers and bools as strings, as TF's defaults (floats %f).
function M.as_string(x)
  if x == nil then binding.error("as_string: the input is nil; expected a tensor") end
  x = convert.arg(x, "as_string", 1)
  return dispatch.run(C.TIDE_OP_AS_STRING, dispatch.attrs(), { x })
end

-- join(inputs, {separator=""}): elementwise concatenation of a list of
-- string tensors (broadcast), TF's tf.strings.join.
function M.join(inputs, ...)
  local o = args.parse("join", { "separator" }, ...)
  if type(inputs) ~= "table" or istype(Tensor, inputs) then
    binding.error("join: inputs must be a Lua list of string tensors")
  end
  local n = convert.list_length(inputs, "join", "inputs")
  if n == 0 then binding.error("join: inputs is empty") end
  local list = { scalar_string(o.separator or "", "join", "separator") }
  for i = 1, n do list[i + 1] = strings(inputs[i], "join", "input " .. i) end
  return dispatch.run(C.TIDE_OP_STRING_JOIN, dispatch.attrs(), list)
end

-- format(template, inputs, {placeholder="{}", summarize=3}) as tf.strings.format: a 0-d string, the template with
-- each placeholder replaced by the next tensor as tf.print shows it (summarize values at each end of a dim; -1 all).
-- inputs: a tensor or a Lua list of them (Lua numbers, booleans and strings convert).
function M.format(template, inputs, ...)
  local op = "format"
  local o = args.parse(op, { "placeholder", "summarize", "name" }, ...)
  if type(template) ~= "string" then
    binding.error(fmt("%s: template must be a Lua string, got %s", op, istype(Tensor, template) and "a tensor" or
      type(template)))
  end
  local ph = o.placeholder == nil and "{}" or o.placeholder
  if type(ph) ~= "string" or ph == "" then binding.error(op .. ": placeholder must be a non-empty Lua string") end
  local summarize = o.summarize == nil and 3 or o.summarize
  if type(summarize) ~= "number" or summarize ~= math.floor(summarize) then
    binding.error(fmt("%s: summarize must be an integer, got %s", op, tostring(summarize)))
  end
  local list = {}
  if inputs == nil then list = {}
  elseif type(inputs) == "table" and not istype(Tensor, inputs) and not convert.is_variable(inputs) then
    for i = 1, convert.list_length(inputs, op, "inputs") do list[i] = convert.arg(inputs[i], op) end
  else list[1] = convert.arg(inputs, op) end
  local pieces, at = {}, 1
  while true do
    local i = template:find(ph, at, true)
    if not i then break end
    pieces[#pieces + 1] = template:sub(at, i - 1)
    at = i + #ph
  end
  pieces[#pieces + 1] = template:sub(at)
  if #pieces - 1 ~= #list then
    binding.error(fmt("%s: the template has %d placeholders but %d tensors were given (they must match)", op,
      #pieces - 1, #list))
  end
  local a = dispatch.attrs()
  a.n = summarize < 0 and -1 or summarize
  local ins = { convert.tensor(pieces, "string", op) }
  for i, t in ipairs(list) do ins[i + 1] = t end
  return dispatch.run(C.TIDE_OP_STRING_FORMAT, a, ins)
end

-- reduce_join(input, {axis=nil, keepdims=false, separator=""}): join along axes (all when nil).
function M.reduce_join(input, ...)
  local o = args.parse("reduce_join", { "axis", "keepdims", "separator" }, ...)
  local x = strings(input, "reduce_join")
  local a = dispatch.attrs()
  if o.axis ~= nil then dispatch.set_ints(a, args.int_list("reduce_join", "axis", o.axis), "reduce_join") end
  if o.keepdims then a.flags = C.TIDE_ATTR_KEEPDIMS end
  return dispatch.run(C.TIDE_OP_REDUCE_JOIN, a, { x, scalar_string(o.separator or "", "reduce_join", "separator") })
end

-- substr(input, pos, len, {unit="BYTE" | "UTF8_CHAR"}): units [pos, pos + len)
-- of each string (pos < 0 counts from the end; len is clipped); pos and len broadcast.
function M.substr(input, pos, len, ...)
  local o = args.parse("substr", { "unit" }, ...)
  local x = strings(input, "substr")
  if pos == nil or len == nil then binding.error("substr: pos and len are required") end
  local p = convert.arg(pos, "substr", 2)
  local l = convert.coerce(len, p, "substr", 3)
  local a = dispatch.attrs()
  a.n = unit_code("substr", o.unit)
  return dispatch.run(C.TIDE_OP_SUBSTR, a, { x, p, l })
end

-- The hash kinds of the string_hash op (its attribute m).
local FAST, STRONG, LEGACY = 0, 1, 2

-- One to_hash_bucket function: num_buckets checked (a positive integer), the key's two words in ints[0..1].
local function hash_bucket(name, kind, input, num_buckets, key)
  local x = strings(input, name)
  if num_buckets == nil then binding.error(name .. ": num_buckets is required") end
  local n = args.int(name, "num_buckets", num_buckets)
  if n < 1 then binding.error(fmt("%s: num_buckets must be at least 1, got %d", name, n)) end
  local a = dispatch.attrs()
  a.n, a.m = n, kind
  if kind == STRONG then
    if type(key) ~= "table" or #key ~= 2 then
      binding.error(name .. ": key must be a list of two integers (the SipHash key), got " .. tostring(key))
    end
    for i = 1, 2 do -- an int64 cdata keeps all 64 bits; a Lua number up to 2^63
      local k = key[i]
      if type(k) == "cdata" and (ffi.istype("int64_t", k) or ffi.istype("uint64_t", k)) then a.ints[i - 1] = k
      else a.ints[i - 1] = args.int(name, "key[" .. i .. "]", k) end
    end
    a.nints = 2
  end
  return dispatch.run(C.TIDE_OP_STRING_HASH, a, { x })
end

-- to_hash_bucket_fast(input, num_buckets): TF's Fingerprint64 (farmhash) of
-- each string modulo num_buckets, int64.
function M.to_hash_bucket_fast(input, num_buckets) return hash_bucket("to_hash_bucket_fast", FAST, input, num_buckets) end

-- to_hash_bucket_strong(input, num_buckets, key): SipHash-2-4 keyed by key
-- (two integers) modulo num_buckets, int64.
function M.to_hash_bucket_strong(input, num_buckets, key)
  return hash_bucket("to_hash_bucket_strong", STRONG, input, num_buckets, key)
end

-- to_hash_bucket(input, num_buckets): TF's legacy Hash64, kept for old
-- checkpoints (TF recommends to_hash_bucket_fast).
function M.to_hash_bucket(input, num_buckets) return hash_bucket("to_hash_bucket", LEGACY, input, num_buckets) end

-- cross_hashed_dense(inputs, num_buckets, hash_key, op): TF's SparseCrossHashed
-- on dense inputs, as a dense int64 [batch, k_1 * ... * k_n] tensor (every
-- combination of one feature per input, the last input's turning fastest).
-- Each input [batch, k] string or integer (cast to int64, as TF); num_buckets
-- 0 means none; hash_key defaults to TF's 0xDECAFCAFFE. What tide.sparse.cross_hashed
-- and HashedCrossing build on; `op` names the caller in errors.
local DEFAULT_HASH_KEY = 0xDECAFCAFFE
function M.cross_hashed_dense(inputs, num_buckets, hash_key, op)
  op = op or "cross_hashed"
  if type(inputs) ~= "table" or istype(Tensor, inputs) then
    binding.error(op .. ": inputs must be a Lua list of tensors")
  end
  local n = convert.list_length(inputs, op, "inputs")
  if n == 0 then binding.error(op .. ": inputs is empty") end
  local list = {}
  for i = 1, n do
    local t = inputs[i]
    if t == nil then binding.error(fmt("%s: input %d is nil", op, i)) end
    t = istype(Tensor, t) and t or convert.tensor(convert.unvariable(t), nil, op)
    if t.dt ~= STRING and t.dt ~= C.TIDE_INT64 then
      if not dtype.is_int[t.dt] then
        binding.error(fmt("%s: input %d must be a string or integer tensor, got %s", op, i, dtype.names[t.dt]))
      end
      t = t:cast("int64")
    end
    list[i] = t
  end
  local a = dispatch.attrs()
  a.n = num_buckets == nil and 0 or args.int(op, "num_buckets", num_buckets)
  if a.n < 0 then binding.error(fmt("%s: num_buckets must be 0 (no buckets) or more, got %d", op, a.n)) end
  if hash_key == nil then a.ints[0] = DEFAULT_HASH_KEY
  elseif type(hash_key) == "cdata" then a.ints[0] = hash_key
  else a.ints[0] = args.int(op, "hash_key", hash_key) end
  a.nints = 1
  return dispatch.run(C.TIDE_OP_CROSS_HASHED, a, list)
end

-- ngrams(data, ngram_width, {separator=" ", pad_values=nil, padding_width=nil,
-- preserve_short_sequences=false}): the n-grams along data's last axis, as
-- TF's tf.strings.ngrams. A dense tensor gives a dense tensor (last axis the
-- n-gram count), a RaggedTensor a RaggedTensor. ngram_width an integer or a
-- list (each width in turn); pad_values a string or {left, right}, padding_width
-- (default width - 1) pads of it at each end.
function M.ngrams(data, ngram_width, ...)
  local o = args.parse("ngrams", { "separator", "pad_values", "padding_width", "preserve_short_sequences" }, ...)
  local ragged = getmetatable(data) == Ragged
  local x = ragged and strings(data.values, "ngrams", "data") or strings(data, "ngrams", "data")
  if ngram_width == nil then binding.error("ngrams: ngram_width is required") end
  local widths = type(ngram_width) == "table" and args.int_list("ngrams", "ngram_width", ngram_width)
    or { args.int("ngrams", "ngram_width", ngram_width) }
  if #widths == 0 then binding.error("ngrams: ngram_width is an empty list") end
  for _, w in ipairs(widths) do
    if w < 1 then binding.error(fmt("ngrams: every ngram_width must be at least 1, got %d", w)) end
  end
  local pv, left, right = o.pad_values, "", ""
  if type(pv) == "string" then left, right = pv, pv
  elseif type(pv) == "table" and type(pv[1]) == "string" and type(pv[2]) == "string" and pv[3] == nil then
    left, right = pv[1], pv[2]
  elseif pv ~= nil then
    binding.error("ngrams: pad_values must be a string, a pair of strings {left, right}, or nil; got " .. tostring(pv))
  end
  local width = -1
  if o.padding_width ~= nil then
    width = args.int("ngrams", "padding_width", o.padding_width)
    if width < 1 then binding.error(fmt("ngrams: padding_width must be at least 1, got %d", width)) end
    if pv == nil then binding.error("ngrams: pad_values must be given when padding_width is set") end
  end
  if pv == nil then width = 0 end
  local a = dispatch.attrs()
  dispatch.set_ints(a, widths, "ngrams")
  a.n, a.m = width, o.preserve_short_sequences and 1 or 0
  local sep = o.separator == nil and " " or o.separator
  local list = { x, scalar_string(sep, "ngrams", "separator"), scalar_string(left, "ngrams", "pad_values"),
    scalar_string(right, "ngrams", "pad_values") }
  if ragged then list[5] = data.row_splits end
  local values, splits = dispatch.run(C.TIDE_OP_STRING_NGRAMS, a, list, 2)
  if ragged then return Ragged.from_row_splits(values, splits) end
  return values
end

-- regex_replace(input, pattern, rewrite, {replace_global=true}): PCRE2 with
-- TF's rewrite syntax (\1 a group, \0 the match, \\ a backslash).
function M.regex_replace(input, pattern, rewrite, ...)
  local o = args.parse("regex_replace", { "replace_global" }, ...)
  local x = strings(input, "regex_replace")
  local a = dispatch.attrs()
  a.n = o.replace_global == false and 0 or 1
  return dispatch.run(C.TIDE_OP_REGEX_REPLACE, a, { x, scalar_string(pattern, "regex_replace", "pattern"),
    scalar_string(rewrite, "regex_replace", "rewrite") })
end

-- The Unicode and matching functions (ops/strings_unicode.lua).
require("tide.ops.strings_unicode").install(M, { strings = strings, scalar_string = scalar_string, Ragged = Ragged })

return M
