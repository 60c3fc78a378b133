-- stdlib/tide/data/stages/save.lua — ds:save(path) and Dataset.load(path) (tide's own folder format, written
-- atomically), ds:snapshot(path) (written on the first complete pass, replayed after; keyed by the
-- pipeline's fingerprint) and ds:fingerprint(). Elements go through ds:cache's file format (data/cache_file).
--
-- A saved folder holds dataset_spec.json (format, version, template, specs, cardinality, compression) and
-- either data.cache (tide's cache file) or, compressed, data.cache.tfrecord: that file's bytes in 1 MiB
-- records of a GZIP or ZLIB TFRecord file, unpacked into a temporary file at each pass.
local binding = require "tide.binding"
local json = require "tide.json"
local file = require "tide.file"
local spec = require "tide.tracing.spec"
local structure = require "tide.data.structure"
local cache_file = require "tide.data.cache_file"
local stage = require "tide.data.stage"
local tfrecord = require "tide.io.tfrecord"

local ffi, C = binding.ffi, binding.C
local TensorSpec, None = spec.TensorSpec, spec.None
local fmt = string.format

local FORMAT, VERSION = "tide.data.save", 1
local SPEC_FILE, DATA_FILE, PACKED_FILE = "dataset_spec.json", "data.cache", "data.cache.tfrecord"
local CHUNK = 1048576

local function compression_of(what, c, extra)
  if c == nil or c == "" then return "" end
  if c == "GZIP" or c == "ZLIB" then return c end
  if extra and extra[c] then return "" end
  binding.error(fmt("%s: compression must be nil, \"\", \"GZIP\" or \"ZLIB\", got %s", what, tostring(c)))
end

-- The specs as JSON values (None as -1; an unknown rank as false) and back.
local function specs_json(specs)
  local out = {}
  for i, s in ipairs(specs) do
    local shape = false
    if s.shape then
      shape = {}
      for d, v in ipairs(s.shape) do shape[d] = v == None and -1 or v end
    end
    out[i] = { dtype = s.dtype, shape = shape }
  end
  return out
end
local function specs_of(list, what)
  local out = {}
  for i, s in ipairs(list) do
    if type(s) ~= "table" or type(s.dtype) ~= "string" then binding.error(what .. ": a malformed spec in the folder") end
    out[i] = TensorSpec(s.shape ~= false and s.shape or nil, s.dtype)
  end
  return out
end
-- A template's sparse shapes hold tide.None: -1 in JSON, and back.
local function template_json(t, back)
  if type(t) ~= "table" then return t end
  if t == None then return -1 end
  local out = {}
  for k, v in pairs(t) do
    if k == "shape" and type(v) == "table" then
      local s = {}
      for d, x in ipairs(v) do s[d] = back and (x == -1 and None or x) or (x == None and -1 or x) end
      out[k] = s
    else out[k] = template_json(v, back) end
  end
  return out
end

local function join(dir, name) return dir .. "/" .. name end

-- Remove a saved folder's own files, then the folder (anything else in it stays, and so does the folder).
local function remove_saved(dir)
  for _, name in ipairs { SPEC_FILE, DATA_FILE, PACKED_FILE } do os.remove(join(dir, name)) end
  os.remove(dir)
end

-- Pack the cache file `src` into a compressed TFRecord file `dst` (1 MiB records).
local function pack(src, dst, compression)
  local inp = assert(io.open(src, "rb"))
  local w = tfrecord.TFRecordWriter(dst, { compression_type = compression })
  while true do
    local chunk = inp:read(CHUNK)
    if not chunk then break end
    w:write(chunk)
  end
  inp:close()
  w:close()
end

-- ds:save(path, {compression=nil|"GZIP"|"ZLIB"}): every element into the folder `path`, replaced only
-- once the whole pass is written (a failed pass leaves the old folder, or none). The elements may hold
-- SparseTensors; datasets (from window) and infinite datasets are refused.
local function save(self, path, opts)
  opts = stage.options("save", { "compression", "shard_func", "checkpoint_args" }, opts)
  if type(path) ~= "string" or path == "" then binding.error("save: path must be a folder name (a string)") end
  if opts.shard_func ~= nil or opts.checkpoint_args ~= nil then
    binding.error("save: shard_func and checkpoint_args are not supported (tide writes one shard, in one pass)")
  end
  local compression = compression_of("save", opts.compression)
  stage.no_datasets("save", self)
  if self:cardinality() == stage.INFINITE then binding.error("save: the dataset is infinite") end
  if file.exists(path) and not (file.is_dir(path) and file.exists(join(path, SPEC_FILE))) then
    binding.error(fmt("save: '%s' exists and is not a folder written by save", path))
  end
  if C.tide_file_check(path, true) ~= 0 then binding.raise() end
  local tmp = fmt("%s.tmp-%d", path, math.random(1, 2 ^ 30))
  if C.tide_make_dirs(tmp) ~= 0 then binding.raise() end
  local ok, err = pcall(function()
    local w = cache_file.writer(join(tmp, DATA_FILE), self.specs)
    local nextf, close = require("tide.data.lua_engine").open_input(self)
    local n = 0
    local okp, e = pcall(function()
      while true do
        local flat = nextf()
        if flat == nil then break end
        w.write(flat)
        n = n + 1
      end
    end)
    if not okp then
      w.abort()
      if close then close() end
      error(e, 0)
    end
    w.finish()
    if compression ~= "" then
      pack(join(tmp, DATA_FILE), join(tmp, PACKED_FILE), compression)
      os.remove(join(tmp, DATA_FILE))
    end
    local text = json.encode { format = FORMAT, version = VERSION, template = template_json(self.template),
      specs = specs_json(self.specs), cardinality = n, compression = compression }
    if C.tide_write_file_atomic(join(tmp, SPEC_FILE), text, #text) ~= 0 then binding.raise() end
    -- the old folder goes aside, the new one takes its name, then the old one goes
    local old = file.exists(path) and (tmp .. ".old") or nil
    if old and not os.rename(path, old) then binding.error(fmt("save: cannot replace '%s'", path)) end
    local okr, rerr = os.rename(tmp, path)
    if not okr then
      if old then os.rename(old, path) end
      binding.error(fmt("save: cannot move the new folder into '%s': %s", path, tostring(rerr)))
    end
    if old then remove_saved(old) end
  end)
  if not ok then
    remove_saved(tmp)
    error(err, 0)
  end
end

-- The dataset_spec.json of a saved folder, checked.
local function read_spec(what, path)
  if type(path) ~= "string" then binding.error(what .. ": path must be a string") end
  local f = binding.open_file(join(path, SPEC_FILE), "rb")
  if not f then binding.error(fmt("%s: '%s' is not a folder written by save (no %s)", what, path, SPEC_FILE)) end
  local text = f:read("*a")
  f:close()
  local ok, t = pcall(json.decode, text, join(path, SPEC_FILE))
  if not ok or type(t) ~= "table" or t.format ~= FORMAT then
    binding.error(fmt("%s: '%s' is not a dataset saved by tide (%s is not one)", what, path, SPEC_FILE))
  end
  if t.version ~= VERSION then
    binding.error(fmt("%s: '%s' has format version %s; this tide reads version %d", what, path, tostring(t.version),
      VERSION))
  end
  return t
end

-- Dataset.load(path, {element_spec=, compression=}): the elements save wrote (element_spec, when given, must
-- be what was saved).
local function load(path, opts)
  opts = stage.options("load", { "element_spec", "compression", "reader_func" }, opts)
  if opts.reader_func ~= nil then binding.error("load: reader_func is not supported (tide reads its one shard)") end
  local t = read_spec("load", path)
  local specs = specs_of(t.specs, "load")
  local template = template_json(t.template, true)
  if opts.compression ~= nil and compression_of("load", opts.compression) ~= t.compression then
    binding.error(fmt("load: compression %s was given but '%s' was saved with %s", tostring(opts.compression), path,
      t.compression == "" and "none" or t.compression))
  end
  local ds = stage.new { kind = "load", path = path, compression = t.compression, template = template, specs = specs,
    card = t.cardinality }
  if opts.element_spec ~= nil then
    local want = tostring(opts.element_spec)
    local have = tostring(ds.element_spec)
    if want ~= have then binding.error(fmt("load: element_spec %s was given but '%s' holds %s", want, path, have)) end
  end
  return ds
end

local load_stage = {}

-- C (kernels/data/load.c) for a plain folder; a compressed one is unpacked per pass, in Lua.
function load_stage.in_c(ds) return ds.compression == "" end
function load_stage.c(ds)
  return C.tide_dataset_load(join(ds.path, DATA_FILE), #ds.specs, cache_file.dtype_codes(ds.specs), ds.card)
end

function load_stage.lua(ds)
  if ds.compression == "" then return cache_file.reader(join(ds.path, DATA_FILE), ds.specs) end
  -- unpack into a temporary file, removed when the pass ends
  local tmp = os.tmpname()
  local out = assert(io.open(tmp, "wb"))
  for rec in tfrecord.tf_record_iterator(join(ds.path, PACKED_FILE), { compression_type = ds.compression }) do
    out:write(rec)
  end
  out:close()
  local nextf, close = cache_file.reader(tmp, ds.specs)
  local done = false
  local function finish()
    if done then return end
    done = true
    if close then close() end
    os.remove(tmp)
  end
  return function()
    local ok, flat = pcall(nextf)
    if not ok then finish(); error(flat, 0) end
    if flat == nil then finish() end
    return flat
  end, finish
end

---------------------------------------------------------------------------
-- fingerprint and snapshot
---------------------------------------------------------------------------

-- Fields that are caches or engine state, not the pipeline's description (and every field named _x).
local SKIP = { _c = true, _c_ok = true, _auto_prefetch = true, compiled = true, store = true, _options = true,
  cap_first = true }

-- A canonical text of a value: numbers, strings, tensors (dtype, shape, values), functions (their bytecode),
-- tables by sorted keys, datasets by their fields and inputs.
local function describe(v, out, seen)
  local tv = type(v)
  if tv == "number" or tv == "boolean" or tv == "nil" then out[#out + 1] = tostring(v)
  elseif tv == "string" then out[#out + 1] = fmt("%q", v)
  elseif binding.istensor(v) then
    out[#out + 1] = "T(" .. v.dtype .. tostring(v.shape) .. ":"
    for _, x in ipairs(v:reshape { -1 }:totable()) do out[#out + 1] = type(x) == "string" and fmt("%q", x) or tostring(x) end
    out[#out + 1] = ")"
  elseif tv == "function" then
    local ok, code = pcall(string.dump, v, true)
    out[#out + 1] = ok and ("F" .. #code .. ":" .. code) or ("F?" .. tostring(v))
  elseif tv == "table" then
    if seen[v] then out[#out + 1] = "@" .. seen[v]; return end
    seen.n = (seen.n or 0) + 1
    seen[v] = seen.n
    local keys = {}
    for k in pairs(v) do
      if not SKIP[k] and not (type(k) == "string" and k:sub(1, 1) == "_") then keys[#keys + 1] = k end
    end
    table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
    out[#out + 1] = "{"
    for _, k in ipairs(keys) do
      out[#out + 1] = tostring(k) .. "="
      describe(v[k], out, seen)
      out[#out + 1] = ";"
    end
    out[#out + 1] = "}"
  else out[#out + 1] = tostring(v) end
end

-- 64-bit FNV-1a of a string, as 16 hex digits.
local function fnv1a(s)
  local h = ffi.new("uint64_t", 0xcbf29ce484222325ULL)
  local prime = 0x100000001b3ULL
  for i = 1, #s do
    h = bit.bxor(h, s:byte(i)) * prime
  end
  return bit.tohex(h, 16)
end

-- ds:fingerprint(): a hex string that names the pipeline: its stages, their arguments, the tensors it holds
-- and its functions' bytecode (not their upvalues' values: a function reading a changed upvalue keeps its
-- fingerprint). TF's is a uint64 tensor of its graph; tide's is its own.
local function fingerprint(self)
  local out = {}
  describe(self, out, {})
  return fnv1a(table.concat(out))
end

-- ds:snapshot(path, {compression=}): the first complete pass written to path/<fingerprint>.snapshot, later
-- passes (and later runs) read it instead of running the pipeline (ds:cache's file, keyed by the fingerprint).
local function snapshot(self, path, opts)
  opts = stage.options("snapshot", { "compression", "reader_func", "shard_func", "name" }, opts)
  if type(path) ~= "string" or path == "" then binding.error("snapshot: path must be a folder name (a string)") end
  if opts.reader_func ~= nil or opts.shard_func ~= nil then
    binding.error("snapshot: reader_func and shard_func are not supported (tide writes and reads one file)")
  end
  if compression_of("snapshot", opts.compression, { AUTO = true }) ~= "" then
    binding.error("snapshot: compression " .. opts.compression .. " is not supported (snapshots are tide's " ..
      "uncompressed cache files; ds:save compresses)")
  end
  if C.tide_make_dirs(path) ~= 0 then binding.raise() end
  return self:cache(join(path, fingerprint(self) .. ".snapshot"))
end

return { methods = { save = save, load = load, fingerprint = fingerprint, snapshot = snapshot },
  stages = { load = load_stage } }
