-- stdlib/tide/utils/misc.lua — the small keras.utils functions: to_categorical, pad_sequences, set_random_seed,
-- (un)pack_x_y_sample_weight and get_file (tide never downloads: a cached file is found, else a clear error).
local binding = require "tide.binding"
local args = require "tide.args"
local convert = require "tide.convert"
local random = require "tide.random"
local file = require "tide.file"
local shape_ops = require "tide.ops.shape"
local keras_ops = require "tide.ops.keras"
local dtype_mod = require "tide.dtype"

local fmt = string.format
local M = {}

local function fail(op, ...) binding.error(op .. ": " .. fmt(...)) end

-- to_categorical(x, num_classes=nil) as keras.utils.to_categorical: class indices (a tensor or a Lua list) to
-- float32 one-hot rows; a trailing dim of 1 is dropped first; num_classes defaults to max(x) + 1.
function M.to_categorical(x, ...)
  local op = "to_categorical"
  local o = args.parse(op, { "num_classes" }, ...)
  local t = binding.istensor(x) and x or convert.tensor(x, nil, op)
  if t.dtype == "string" or t.dtype == "bool" then fail(op, "x must hold integer class indices, got %s", t.dtype) end
  if not (t.dtype:match("^int") or t.dtype == "uint8") then t = t:cast("int64") end -- as Keras's int64 cast
  local shape = t.shape
  if #shape > 1 and shape[#shape] == 1 then
    local s = {}
    for i = 1, #shape - 1 do s[i] = shape[i] end
    t = shape_ops.reshape(t, s)
  end
  local n = o.num_classes
  if n == nil or n == false then
    if t.nelem == 0 then fail(op, "num_classes must be given for an empty x") end
    n = t:cast("int64"):max():item() + 1
  end
  n = args.int(op, "num_classes", n)
  if n < 1 then fail(op, "num_classes must be positive, got %d", n) end
  if t.nelem > 0 then
    local lo, hi = t:cast("int64"):min():item(), t:cast("int64"):max():item()
    if lo < 0 or hi >= n then
      fail(op, "class indices must lie in [0, %d), got values from %d to %d", n, lo, hi)
    end
  end
  return keras_ops.one_hot(t, n)
end

-- pad_sequences(sequences, {maxlen=, dtype="int32", padding="pre", truncating="pre", value=0}) as
-- keras.utils.pad_sequences: a list of number lists to a [n, maxlen] tensor, each cut ("pre": its first items
-- dropped) and padded with `value` ("pre": before it) to maxlen (default: the longest).
function M.pad_sequences(sequences, ...)
  local op = "pad_sequences"
  local o = args.parse(op, { "maxlen", "dtype", "padding", "truncating", "value" }, ...)
  if binding.istensor(sequences) then sequences = sequences:totable() end
  if type(sequences) ~= "table" then fail(op, "sequences must be a list of lists of numbers, got %s", type(sequences)) end
  local padding, truncating = o.padding or "pre", o.truncating or "pre"
  if padding ~= "pre" and padding ~= "post" then fail(op, "padding must be \"pre\" or \"post\", got %s", tostring(padding)) end
  if truncating ~= "pre" and truncating ~= "post" then
    fail(op, "truncating must be \"pre\" or \"post\", got %s", tostring(truncating))
  end
  local maxlen = o.maxlen
  local seqs = {}
  for i, s in ipairs(sequences) do
    if binding.istensor(s) then s = s:totable() end
    if type(s) ~= "table" then fail(op, "sequences[%d] must be a list of numbers, got %s", i, type(s)) end
    for j, v in ipairs(s) do
      if type(v) ~= "number" then
        fail(op, "sequences[%d][%d] must be a number, got %s (tide pads sequences of numbers)", i, j, type(v))
      end
    end
    seqs[i] = s
  end
  if maxlen == nil then
    maxlen = 0
    for _, s in ipairs(seqs) do maxlen = math.max(maxlen, #s) end
  end
  maxlen = args.int(op, "maxlen", maxlen)
  if maxlen < 0 then fail(op, "maxlen must be >= 0, got %d", maxlen) end
  local value = o.value == nil and 0 or args.number(op, "value", o.value)
  local rows = {}
  for i, s in ipairs(seqs) do
    local n = #s
    local keep = math.min(n, maxlen)
    local first = truncating == "pre" and n - keep + 1 or 1
    local row = {}
    local at = padding == "pre" and maxlen - keep or 0
    for k = 1, maxlen do row[k] = value end
    for k = 0, keep - 1 do row[at + k + 1] = s[first + k] end
    rows[i] = row
  end
  local dt = o.dtype or "int32"
  local t = convert.tensor(#rows > 0 and maxlen > 0 and rows or {}, dt, op)
  return (#rows == 0 or maxlen == 0) and shape_ops.reshape(t, { #rows, maxlen }) or t
end

-- set_random_seed(seed) as keras.utils.set_random_seed: tide's global seed (tide.random.set_seed) and Lua's
-- math.random, the two generators a tide program draws from.
function M.set_random_seed(seed)
  if type(seed) ~= "number" or seed ~= math.floor(seed) then
    fail("set_random_seed", "seed must be an integer, got %s", tostring(seed))
  end
  random.set_seed(seed)
  math.randomseed(seed)
end

-- pack_x_y_sample_weight(x, y, sample_weight) as Keras's: x alone ({x} when x is a list), {x, y} or
-- {x, y, sample_weight}; unpack_x_y_sample_weight(data) gives x, y, sample_weight back (nil where absent).
function M.pack_x_y_sample_weight(x, y, sample_weight)
  if y == nil then
    if type(x) == "table" and not binding.istensor(x) and getmetatable(x) == nil then return { x } end
    return x
  end
  if sample_weight == nil then return { x, y } end
  return { x, y, sample_weight }
end

function M.unpack_x_y_sample_weight(data)
  if type(data) ~= "table" or binding.istensor(data) or getmetatable(data) ~= nil then return data, nil, nil end
  local n = #data
  if n == 1 then return data[1], nil, nil end
  if n == 2 then return data[1], data[2], nil end
  if n == 3 then return data[1], data[2], data[3] end
  fail("unpack_x_y_sample_weight", "data must be a list of 1, 2 or 3 items (x, y, sample_weight), got %d", n)
end

-- Keras's cache folder: $KERAS_HOME, else ~/.keras (Keras falls back to /tmp/.keras when that is not writable).
local function keras_home()
  local home = os.getenv("KERAS_HOME")
  if home and home ~= "" then return home end
  return (os.getenv("HOME") or "/tmp") .. "/.keras"
end

-- get_file(fname, origin, {cache_dir=, cache_subdir="datasets", ...}) as keras.utils.get_file, without the
-- network: the path of cache_dir/cache_subdir/fname when that file is already there (as Keras finds a cached
-- download), otherwise an error naming where to put the file from origin.
function M.get_file(fname, origin, opts)
  local op = "get_file"
  if type(origin) == "table" and opts == nil then origin, opts = nil, origin end
  opts = opts or {}
  local o = args.parse(op, { keywords = { "origin", "untar", "md5_hash", "file_hash", "cache_subdir", "hash_algorithm",
    "extract", "archive_format", "cache_dir", "force_download" } }, opts)
  origin = origin or o.origin
  if fname == nil and type(origin) == "string" then fname = origin:match("([^/?#]+)[^/]*$") end
  if type(fname) ~= "string" or fname == "" then fail(op, "fname must be a file name, got %s", tostring(fname)) end
  local dir = o.cache_dir or keras_home()
  local sub = o.cache_subdir or "datasets"
  local path = fname:sub(1, 1) == "/" and fname or (sub:sub(1, 1) == "/" and sub or dir .. "/" .. sub) .. "/" .. fname
  if o.force_download then fail(op, "force_download: tide does not download files") end
  if o.extract or o.untar then
    local folder = path:gsub("%.tar%.gz$", ""):gsub("%.tgz$", ""):gsub("%.zip$", ""):gsub("%.tar$", "")
    if file.is_dir(folder) then return folder end
    fail(op, "tide does not download or extract archives: extract %s into %s", origin or fname, folder)
  end
  if file.exists(path) then return path end
  fail(op, "tide does not download files: %s is not in the cache; put the file%s at %s", fname,
    origin and (" from " .. origin) or "", path)
end

-- Keras 3's dtype names (keras.src.backend.common.dtypes.ALLOWED_DTYPES): standardize_dtype answers with one of
-- these, tide's own dtypes among them (a name tide's ops lack still names a Keras dtype).
local KERAS_DTYPES = { bfloat16 = true, bool = true, complex128 = true, complex64 = true, float16 = true,
  float32 = true, float64 = true, float8_e4m3fn = true, float8_e5m2 = true, int16 = true, int32 = true,
  int64 = true, int8 = true, string = true, uint16 = true, uint32 = true, uint64 = true, uint8 = true }
-- The one name Keras's PYTHON_DTYPES_MAP maps as a string (Python's type objects have no Lua counterpart).
local PYTHON_NAMES = { int = "int64" }

-- standardize_dtype(dtype) as keras.utils.standardize_dtype: nil gives floatx ("float32"); a DType (tide.float32),
-- a dtype name, or a tensor's dtype give the Keras name; "int" gives "int64" as in Keras; anything else is an error.
function M.standardize_dtype(dtype)
  local op = "standardize_dtype"
  if dtype == nil then return "float32" end
  local name = dtype_mod.name(dtype)
  if name == nil then fail(op, "invalid dtype: %s (expected a dtype name or tide.<dtype>)", tostring(dtype)) end
  name = PYTHON_NAMES[name] or name
  if not KERAS_DTYPES[name] then fail(op, "invalid dtype: %s", name) end
  return name
end

return M
