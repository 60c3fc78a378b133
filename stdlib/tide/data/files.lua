-- stdlib/tide/data/files.lua — TF's TFRecordDataset and TextLineDataset: file
-- sources read in C (kernels/data/file_sources.c), each element a 0-d string;
-- and Dataset.list_files, the file names that glob patterns match.
local binding = require "tide.binding"
local spec = require "tide.tracing.spec"
local dataset = require "tide.data.dataset"
local io_files = require "tide.io.files"
local interleave_fn = require "tide.data.interleave_fn"

local ffi, C = binding.ffi, binding.C
local M = {}

local function file_list(what, files)
  if binding.istensor(files) then files = files:totable() end -- a string tensor of paths
  if type(files) == "string" then return { files } end
  if type(files) ~= "table" or #files == 0 then
    binding.error(what .. ": filenames must be a path or a non-empty list of paths, got " ..
      (type(files) == "table" and "an empty list" or type(files)))
  end
  for i, f in ipairs(files) do
    if type(f) ~= "string" then binding.error(string.format("%s: filenames[%d] must be a path, got %s", what, i, type(f))) end
  end
  return files
end

local function options(what, opts, known)
  if opts == nil then return {} end
  if type(opts) ~= "table" then binding.error(what .. ": options must be a table, got " .. type(opts)) end
  for k in pairs(opts) do
    if not known[k] then binding.error(string.format("%s: unknown option '%s'", what, tostring(k))) end
  end
  return opts
end

-- Inside interleave's function, files traced from the element: a template
-- leaf that reads them as make_c's source reads its files.
local function traced_files(what, files, make_proto, template, specs)
  if files.dtype ~= "string" or files.ndim > 1 then
    binding.error(string.format("%s: filenames must be a string scalar or list, got %s %s", what, files.dtype,
      tostring(files.shape)))
  end
  local probe = make_proto() -- the other arguments checked now
  if probe == nil then binding.raise() end
  C.tide_dataset_free(probe)
  return interleave_fn.leaf(what, setmetatable({ kind = "param", source = "files", args = { files },
    make_proto = make_proto, template = template, specs = specs, card = dataset.UNKNOWN_CARDINALITY }, dataset.Dataset))
end
M.traced_files = traced_files

-- A dataset of what make_c(nfiles, cfiles, compression) reads: one 0-d string per element.
local function source(what, files, compression, make_c)
  if interleave_fn.is_symbolic(files) then
    return traced_files(what, files, function() return make_c(0, nil, compression) end, { kind = "tensor", index = 1 },
      { spec.TensorSpec({}, "string") })
  end
  files = file_list(what, files)
  local function make()
    local cfiles = ffi.new("const char *[?]", #files)
    for i, f in ipairs(files) do cfiles[i - 1] = f end
    return make_c(#files, cfiles, compression)
  end
  local probe = make() -- the arguments checked now, not at the first pass
  if probe == nil then binding.raise() end
  C.tide_dataset_free(probe)
  -- files and with_files: tide.distribute's FILE auto-shard gives each worker some of the files
  return setmetatable({ kind = "c_source", make_source = make, template = { kind = "tensor", index = 1 },
    specs = { spec.TensorSpec({}, "string") }, card = dataset.UNKNOWN_CARDINALITY, files = files,
    with_files = function(some) return source(what, some, compression, make_c) end }, dataset.Dataset)
end

local function compression_of(what, opts)
  local c = opts.compression_type
  if c == nil then return "" end
  if type(c) ~= "string" then binding.error(what .. ": compression_type must be a string") end
  return c
end

-- TFRecordDataset(filenames, {compression_type="" | "GZIP" | "ZLIB"}): the
-- records of the files in order, each a 0-d string tensor (feed it to
-- tide.io.parse_single_example or a decoder in map). A corrupt or truncated
-- record is an error at the element that hits it, naming the file and offset.
function M.TFRecordDataset(filenames, opts)
  local what = "TFRecordDataset"
  opts = options(what, opts, { compression_type = true, buffer_size = true, num_parallel_reads = true })
  return source(what, filenames, compression_of(what, opts), C.tide_dataset_tfrecord)
end

-- TextLineDataset(filenames, {compression_type="" | "GZIP"}): the lines of
-- the files in order, without their "\n" (or "\r\n"), each a 0-d string.
function M.TextLineDataset(filenames, opts)
  local what = "TextLineDataset"
  opts = options(what, opts, { compression_type = true, buffer_size = true, num_parallel_reads = true })
  return source(what, filenames, compression_of(what, opts), C.tide_dataset_text_lines)
end

-- Dataset.list_files(pattern, {shuffle=true, seed=}): a dataset of the
-- file names (0-d strings) that the glob pattern(s) match (a string, a list
-- of strings or a string tensor), as tf.data.Dataset.list_files: matched
-- once, now, with tide.io.matching_files' rules (sorted), then shuffled
-- with a buffer of all of them (reshuffled each pass; `seed` fixes the
-- order) unless shuffle=false. No match is an error naming the patterns.
-- Use Dataset.from_tensor_slices(names) for names already listed.
function M.list_files(pattern, opts)
  local what = "list_files"
  opts = options(what, opts, { shuffle = true, seed = true, name = true })
  if opts.shuffle ~= nil and type(opts.shuffle) ~= "boolean" then
    binding.error(what .. ": shuffle must be a boolean, got " .. type(opts.shuffle))
  end
  local names = io_files.matching_files(pattern)
  local n = names.shape[1]
  if n == 0 then
    local list = binding.istensor(pattern) and pattern:totable() or pattern
    binding.error(what .. ": no files matched pattern: " .. (type(list) == "table" and table.concat(list, ", ") or tostring(list)))
  end
  local ds = dataset.Dataset.from_tensor_slices(names)
  if opts.shuffle ~= false then ds = ds:shuffle(n, { seed = opts.seed }) end
  return ds
end

return M
