-- stdlib/tide/data/files.lua — TF's TFRecordDataset and TextLineDataset: file
-- sources read in C (kernels/data/file_sources.c), each element a 0-d string.
local binding = require "tide.binding"
local spec = require "tide.tracing.spec"
local dataset = require "tide.data.dataset"

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

-- A dataset of what make_c(nfiles, cfiles, compression) reads: one 0-d string per element.
local function source(what, files, compression, make_c)
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
  return source(what, file_list(what, filenames), compression_of(what, opts), C.tide_dataset_tfrecord)
end

-- TextLineDataset(filenames, {compression_type="" | "GZIP"}): the lines of
-- the files in order, without their "\n" (or "\r\n"), each a 0-d string.
function M.TextLineDataset(filenames, opts)
  local what = "TextLineDataset"
  opts = options(what, opts, { compression_type = true, buffer_size = true, num_parallel_reads = true })
  return source(what, file_list(what, filenames), compression_of(what, opts), C.tide_dataset_text_lines)
end

return M
