-- stdlib/tide/data/csv.lua — tide.data.experimental.CsvDataset and
-- make_csv_dataset, as TF's: CSV files (kernels/io/csv.c) read by a C source.
local binding = require "tide.binding"
local convert = require "tide.convert"
local dtype = require "tide.dtype"
local spec = require "tide.tracing.spec"
local dataset = require "tide.data.dataset"
local interleave_fn = require "tide.data.interleave_fn"

local ffi, C = binding.ffi, binding.C
local M = {}

local TYPES = { int32 = true, int64 = true, float32 = true, float64 = true, string = true }

local function check_opts(what, opts, allowed)
  if opts == nil then return {} end
  if type(opts) ~= "table" then binding.error(what .. ": options must be a table, got " .. type(opts)) end
  for k in pairs(opts) do
    if not allowed[k] then
      local names = {}
      for n in pairs(allowed) do names[#names + 1] = n end
      table.sort(names)
      binding.error(string.format("%s: unknown option '%s' (options: %s)", what, tostring(k), table.concat(names, ", ")))
    end
  end
  return opts
end

local function file_list(what, files)
  if type(files) == "string" then return { files } end
  if type(files) ~= "table" or binding.istensor(files) or #files == 0 then
    binding.error(what .. ": files must be a path or a non-empty list of paths, got " ..
      (type(files) == "table" and "an empty list" or type(files)))
  end
  for i, f in ipairs(files) do
    if type(f) ~= "string" then binding.error(string.format("%s: files[%d] must be a path, got %s", what, i, type(f))) end
  end
  return files
end

-- One record_defaults entry as (dtype name, default tensor or nil): a dtype
-- constant (tide.int32, as TF's tf.int32: a required column of that dtype), a
-- scalar tensor (a 0-element one: required), a Lua number (float32, as TF
-- makes 0.0), a Lua string (the text "int32" is a string default, not a
-- dtype), or {dtype=, default=} (no default: required).
local function column_default(what, i, d)
  if dtype.is_dtype(d) then
    local dt = dtype.name(d)
    if not TYPES[dt] then
      binding.error(string.format("%s: record_defaults[%d] is the dtype %s; CSV columns are int32, int64, float32, " ..
        "float64 or string", what, i, dt))
    end
    return dt, nil
  elseif binding.istensor(d) then
    local dt = d.dtype
    if not TYPES[dt] then
      binding.error(string.format("%s: record_defaults[%d] is %s; CSV columns are int32, int64, float32, float64 or string",
        what, i, dt))
    end
    if tonumber(d.nelem) == 0 then return dt, nil end
    if tonumber(d.nelem) ~= 1 then
      binding.error(string.format("%s: record_defaults[%d] must hold one value (or none: required), got %d", what, i,
        tonumber(d.nelem)))
    end
    return dt, d:reshape({})
  elseif type(d) == "number" then
    return "float32", convert.tensor(d, "float32", what)
  elseif type(d) == "string" then
    return "string", convert.tensor(d, "string", what)
  elseif type(d) == "table" and d.dtype ~= nil then
    local dt = dtype.codes[d.dtype] and dtype.names[dtype.codes[d.dtype]] or d.dtype
    if not TYPES[dt] then
      binding.error(string.format("%s: record_defaults[%d].dtype must be int32, int64, float32, float64 or string, got %s",
        what, i, tostring(d.dtype)))
    end
    if d.default == nil then return dt, nil end
    return dt, convert.tensor(d.default, dt, what):reshape({})
  end
  binding.error(string.format("%s: record_defaults[%d] must be a tensor, a number, a string, a dtype or {dtype=, default=}, got %s",
    what, i, type(d)))
end

local function delim_of(what, opts)
  local d = opts.field_delim == nil and "," or opts.field_delim
  if type(d) ~= "string" or #d ~= 1 then binding.error(what .. ": field_delim must be one character") end
  return d
end

-- The C dataset of the columns: dts[c] and defs[c] per component, cols[c]
-- its CSV column (nil: every column in order), then a Dataset of template.
local function csv_source(what, files, dts, defs, cols, opts, template)
  local n = #dts
  local specs = {}
  for c = 1, n do specs[c] = spec.TensorSpec({}, dts[c]) end
  local delim = delim_of(what, opts)
  local na = opts.na_value
  if na ~= nil and type(na) ~= "string" then binding.error(what .. ": na_value must be a string") end
  local use_quote = opts.use_quote_delim ~= false
  local header = opts.header == true
  local traced = interleave_fn.is_symbolic(files)
  local function make()
    local list = traced and {} or files
    local cfiles = ffi.new("const char *[?]", math.max(#list, 1))
    for i, f in ipairs(list) do cfiles[i - 1] = f end
    local cdts = ffi.new("int32_t[?]", n)
    local cdefs = ffi.new("const tide_tensor *[?]", n)
    local ccols = cols and ffi.new("int64_t[?]", n) or nil
    for c = 1, n do
      cdts[c - 1] = dtype.codes[dts[c]]
      cdefs[c - 1] = defs[c]
      if cols then ccols[c - 1] = cols[c] end
    end
    return C.tide_dataset_csv(#list, cfiles, n, ccols, cdts, cdefs, na, delim:byte(), use_quote, header)
  end
  if traced then -- inside interleave's function: a template leaf reading the element's files
    return require("tide.data.files").traced_files(what, files, make, template, specs)
  end
  -- check the arguments now, not at the first pass
  local probe = make()
  if probe == nil then binding.raise() end
  C.tide_dataset_free(probe)
  -- files and with_files: tide.distribute's FILE auto-shard gives each worker some of the files
  return setmetatable({ kind = "c_source", make_source = make, template = template, specs = specs,
    card = dataset.UNKNOWN_CARDINALITY, files = files,
    with_files = function(some) return csv_source(what, some, dts, defs, cols, opts, template) end }, dataset.Dataset)
end

-- CsvDataset(files, record_defaults, {header=, select_cols=, field_delim=,
-- na_value=, use_quote_delim=}): each record one element, a list of scalars
-- (one per record_defaults entry, of its dtype). A missing value (empty, or
-- na_value) takes its column's default; without one it is an error naming the
-- record and column, as TF.
function M.CsvDataset(files, record_defaults, opts)
  local what = "CsvDataset"
  opts = check_opts(what, opts, { header = true, select_cols = true, field_delim = true, na_value = true,
    use_quote_delim = true, compression_type = true })
  if opts.compression_type ~= nil and opts.compression_type ~= "" then
    binding.error("CsvDataset: compressed CSV files are not supported yet (compression_type " ..
      tostring(opts.compression_type) .. ")")
  end
  if not interleave_fn.is_symbolic(files) then files = file_list(what, files) end
  if type(record_defaults) ~= "table" or binding.istensor(record_defaults) or #record_defaults == 0 then
    binding.error("CsvDataset: record_defaults must be a non-empty list (one entry per column)")
  end
  local dts, defs = {}, {}
  for i = 1, #record_defaults do dts[i], defs[i] = column_default(what, i, record_defaults[i]) end
  local cols = opts.select_cols
  if cols ~= nil then
    if type(cols) ~= "table" or #cols ~= #dts then
      binding.error(string.format("CsvDataset: select_cols must list %d columns (one per record_defaults entry)", #dts))
    end
    for i, c in ipairs(cols) do
      if type(c) ~= "number" or c % 1 ~= 0 or c < 0 or (i > 1 and c <= cols[i - 1]) then
        binding.error("CsvDataset: select_cols must be increasing column indices (0-based)")
      end
    end
  end
  local items = {}
  for i = 1, #dts do items[i] = { kind = "tensor", index = i } end
  local template = #dts == 1 and items[1] or { kind = "list", n = #dts, items = items }
  return csv_source(what, files, dts, defs, cols, opts, template)
end

---------------------------------------------------------------------------
-- make_csv_dataset
---------------------------------------------------------------------------

-- The narrowest type that holds text s, from `at` up: TF's inference order.
local ORDER = { "int32", "int64", "float32", "float64", "string" }
local function fits(s, t)
  s = s:match("^%s*(.-)%s*$")
  if t == "int32" or t == "int64" then
    if not s:match("^[+-]?%d+$") then return false end
    local v = tonumber(s)
    if t == "int32" then return v >= -2147483648 and v <= 2147483647 end
    return #s:gsub("^[+-]", "") <= 18 or v < 9.2e18
  elseif t == "float32" or t == "float64" then
    local v = tonumber(s)
    if v == nil then return s:lower():match("^[+-]?nan$") or s:lower():match("^[+-]?inf") end
    return t == "float64" or v == 0 or math.abs(v) < 3.4e38
  end
  return true
end

-- The header's names and each column's inferred dtype from the first rows.
local function inspect(what, path, delim, use_quote, na, rows)
  local r = C.tide_csv_open(path, delim:byte(), use_quote)
  if r == nil then binding.raise() end
  r = ffi.gc(r, C.tide_csv_close)
  local len = ffi.new("size_t[1]")
  local function fields()
    local rc = C.tide_csv_next(r)
    if rc < 0 then binding.raise() end
    if rc == 0 then return nil end
    local out = {}
    for j = 0, tonumber(C.tide_csv_num_fields(r)) - 1 do
      local p = C.tide_csv_field(r, j, len)
      out[j + 1] = ffi.string(p, len[0])
    end
    return out
  end
  local names = fields()
  if not names then binding.error(string.format("%s: '%s' is empty: no header to name the columns", what, path)) end
  local level = {}
  for j = 1, #names do level[j] = 1 end
  for _ = 1, rows do
    local f = fields()
    if not f then break end
    for j = 1, #names do
      local s = f[j]
      if s and s ~= "" and s ~= na then
        while not fits(s, ORDER[level[j]]) do level[j] = level[j] + 1 end
      end
    end
  end
  ffi.gc(r, nil)
  C.tide_csv_close(r)
  local types = {}
  for j = 1, #names do types[j] = ORDER[level[j]] end
  return names, types
end

-- make_csv_dataset(files, batch_size, {label_name=, select_columns=,
-- column_names=, column_defaults=, field_delim=, na_value=, header=true,
-- shuffle=true, shuffle_buffer_size=10000, shuffle_seed=, num_epochs=,
-- num_rows_for_inference=100}): batches of {features, label} (features a map
-- by column name; without label_name, the map alone), columns named by the
-- header and typed from the first rows as TF infers them (a missing value in
-- an inferred column is 0 or "", as TF's; column_defaults for others). num_epochs nil repeats
-- forever, as TF.
function M.make_csv_dataset(files, batch_size, opts)
  local what = "make_csv_dataset"
  opts = check_opts(what, opts, { label_name = true, select_columns = true, column_names = true,
    column_defaults = true, field_delim = true, na_value = true, header = true, shuffle = true,
    shuffle_buffer_size = true, shuffle_seed = true, num_epochs = true, num_rows_for_inference = true,
    use_quote_delim = true })
  files = file_list(what, files)
  if type(batch_size) ~= "number" or batch_size < 1 or batch_size % 1 ~= 0 then
    binding.error("make_csv_dataset: batch_size must be a whole number >= 1")
  end
  local header = opts.header ~= false
  local delim = delim_of(what, opts)
  local names, types = opts.column_names, nil
  if header then
    local head, inferred = inspect(what, files[1], delim, opts.use_quote_delim ~= false, opts.na_value,
      opts.num_rows_for_inference or 100)
    names = names or head
    types = inferred
  elseif not names then
    binding.error("make_csv_dataset: column_names are needed when the files have no header")
  end
  local ncols = #names
  local dts, defs = {}, {}
  for j = 1, ncols do
    local d = opts.column_defaults and opts.column_defaults[j]
    if d ~= nil then
      dts[j], defs[j] = column_default(what, j, d)
    elseif types then
      -- an inferred column's missing value is 0 or "" (TF's _infer_column_defaults)
      dts[j] = types[j] or "string"
      defs[j] = convert.tensor(dts[j] == "string" and "" or 0, dts[j], what)
    else
      binding.error("make_csv_dataset: column_defaults are needed when the files have no header to infer types from")
    end
  end
  local index = {}
  for j, n in ipairs(names) do index[n] = j end
  local selected = {}
  for _, n in ipairs(opts.select_columns or names) do
    local j = type(n) == "number" and n + 1 or index[n]
    if not j or not names[j] then binding.error(string.format("make_csv_dataset: no column '%s' (columns: %s)", tostring(n),
      table.concat(names, ", "))) end
    selected[names[j]] = j
  end
  local label = opts.label_name
  if label ~= nil and not selected[label] then
    binding.error(string.format("make_csv_dataset: label_name '%s' is not among the columns (%s)", tostring(label),
      table.concat(names, ", ")))
  end
  -- components: the features in name order (a map), then the label
  local keys = {}
  for n in pairs(selected) do if n ~= label then keys[#keys + 1] = n end end
  table.sort(keys)
  local cols, cdts, cdefs, feature_items = {}, {}, {}, {}
  local function add(j)
    cols[#cols + 1], cdts[#cdts + 1], cdefs[#cdts + 1] = j - 1, dts[j], defs[j]
    return { kind = "tensor", index = #cols }
  end
  for i, n in ipairs(keys) do feature_items[i] = add(selected[n]) end
  local features = { kind = "map", keys = keys, items = feature_items }
  local template = label and { kind = "list", n = 2, items = { features, add(selected[label]) } } or features
  local ds = csv_source(what, files, cdts, cdefs, cols, { field_delim = delim, na_value = opts.na_value, header = header,
    use_quote_delim = opts.use_quote_delim }, template)
  if opts.num_epochs ~= 1 then ds = ds:repeat_(opts.num_epochs) end
  if opts.shuffle ~= false then
    ds = ds:shuffle(opts.shuffle_buffer_size or 10000, { seed = opts.shuffle_seed })
  end
  return ds:batch(batch_size)
end

return M
