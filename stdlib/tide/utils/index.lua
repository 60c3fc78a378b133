-- stdlib/tide/utils/index.lua — Keras's dataset_utils for the *_dataset_from_directory functions: the options they
-- share, the files of a folder tree in Keras's order (index_directory), NumPy's shuffle and the validation split.
local binding = require "tide.binding"
local file = require "tide.file"
local io_files = require "tide.io.files"
local numpy_shuffle = require "tide.utils.numpy_shuffle"

local ffi = binding.ffi
local fmt = string.format
local M = {}

local function fail(op, ...) binding.error(op .. ": " .. fmt(...)) end
M.fail = fail

pcall(ffi.cdef, "long readlink(const char *path, char *buf, unsigned long size);")
local link_buf = ffi.new("char[1]")

-- True when path is a symbolic link (os.walk does not go into a linked folder unless follow_links).
local function is_link(path) return ffi.C.readlink(path, link_buf, 1) >= 0 end

-- A path with glob's special characters escaped, for matching_files.
local function glob_escape(s) return (s:gsub("[%*%?%[%]\\]", "\\%0")) end

-- The names in folder dir (dot names too), sorted bytewise: Python's sorted(os.listdir(dir)).
local function list_dir(dir)
  local base = dir:sub(-1) == "/" and dir or dir .. "/"
  local found = io_files.matching_files(glob_escape(base) .. "*"):totable()
  local names = {}
  for i, p in ipairs(found) do names[i] = p:sub(#base + 1) end
  return names
end
M.list_dir = list_dir

local function join(a, b)
  if a == "" then return b end
  if b == "" then return a:sub(-1) == "/" and a or a .. "/" end
  return a:sub(-1) == "/" and a .. b or a .. "/" .. b
end
M.join = join

-- Keras's iter_valid_files: os.walk(dir) (into linked folders only with follow_links) sorted by each folder's
-- path, each folder's files sorted, kept when their lowercased name ends with one of `formats`. Returns the
-- paths relative to dir.
local function valid_files(dir, follow_links, formats)
  local folders = {}
  local function walk(path, rel)
    local files = {}
    folders[#folders + 1] = { root = path, rel = rel, files = files }
    for _, name in ipairs(list_dir(path)) do
      local full = join(path, name)
      if file.is_dir(full) then
        if follow_links or not is_link(full) then walk(full, rel == "" and name or rel .. "/" .. name) end
      else
        files[#files + 1] = name
      end
    end
  end
  walk(dir, "")
  table.sort(folders, function(a, b) return a.root < b.root end)
  local out = {}
  for _, f in ipairs(folders) do
    for _, name in ipairs(f.files) do
      local lower = name:lower()
      for _, ext in ipairs(formats) do
        if lower:sub(-#ext) == ext then
          out[#out + 1] = f.rel == "" and name or f.rel .. "/" .. name
          break
        end
      end
    end
  end
  return out
end

-- Keras's index_directory: (file_paths, labels or nil, class_names or nil) for `labels` "inferred" (a folder
-- per class: class_names, or the folders in sorted order but those starting with "."), false (none) or a list
-- of integers (one per file, in the files' order); shuffled with NumPy's RandomState(seed) when shuffle.
function M.index_directory(op, directory, labels, formats, class_names, shuffle, seed, follow_links)
  if type(directory) ~= "string" then fail(op, "directory must be a string, got %s", type(directory)) end
  if not file.is_dir(directory) then fail(op, "directory '%s' does not exist or is not a folder", directory) end
  local subdirs
  if labels == "inferred" then
    subdirs = {}
    for _, name in ipairs(list_dir(directory)) do
      if file.is_dir(join(directory, name)) and name:sub(1, 1) ~= "." then subdirs[#subdirs + 1] = name end
    end
    if class_names then
      local have = {}
      for _, s in ipairs(subdirs) do have[s] = true end
      for _, c in ipairs(class_names) do
        if not have[c] then
          fail(op, "class_names do not match the folders in '%s': '%s' is not one of them (expected some of: %s)",
            directory, tostring(c), table.concat(subdirs, ", "))
        end
      end
      subdirs = class_names
    end
  else
    subdirs = { "" }
  end
  local paths, label_of = {}, {}
  for index, sub in ipairs(subdirs) do
    local dir = join(directory, sub)
    for _, rel in ipairs(valid_files(dir, follow_links, formats)) do
      paths[#paths + 1] = join(join(directory, sub), rel)
      label_of[#paths] = index - 1
    end
  end
  local names
  if labels == "inferred" then
    names = subdirs
    labels = label_of
  elseif labels then
    if #labels ~= #paths then
      fail(op, "labels has %d entries but '%s' holds %d files: give one label per file, in the files' sorted order",
        #labels, directory, #paths)
    end
    local seen, uniq = {}, {}
    for i, l in ipairs(labels) do
      if type(l) ~= "number" or l ~= math.floor(l) then
        fail(op, "labels must be integers, got %s at position %d", tostring(l), i)
      end
      if not seen[l] then seen[l], uniq[#uniq + 1] = true, l end
    end
    table.sort(uniq)
    names = {}
    for i, l in ipairs(uniq) do names[i] = tostring(l) end
    local copy = {}
    for i, l in ipairs(labels) do copy[i] = l end
    labels = copy
  else
    labels = nil
  end
  if shuffle and #paths > 1 then
    local p = numpy_shuffle.permutation(#paths, seed)
    local sp, sl = {}, labels and {}
    for i, k in ipairs(p) do
      sp[i] = paths[k]
      if labels then sl[i] = labels[k] end
    end
    paths, labels = sp, sl
  end
  return paths, labels, names
end

-- Keras's check_validation_split_arg (its messages' sense).
function M.check_split(op, validation_split, subset, shuffle, seed)
  if validation_split ~= nil then
    if type(validation_split) ~= "number" or not (validation_split > 0 and validation_split < 1) then
      fail(op, "validation_split must be a number between 0 and 1 (exclusive), got %s", tostring(validation_split))
    end
  end
  if (validation_split ~= nil) ~= (subset ~= nil) then
    fail(op, "subset and validation_split go together: give both or neither (got %s)",
      subset ~= nil and "subset only" or "validation_split only")
  end
  if subset ~= nil and subset ~= "training" and subset ~= "validation" and subset ~= "both" then
    fail(op, "subset must be \"training\", \"validation\" or \"both\", got %s", tostring(subset))
  end
  if validation_split and shuffle and seed == nil then
    fail(op, "validation_split with shuffle needs a seed, so that the training and validation subsets do not overlap")
  end
end

-- Keras's get_training_or_validation_split: the last int(split * n) files for validation, the rest for training.
-- Where that count is 0 Keras gives training nothing and validation every file; tide refuses it.
function M.split(op, paths, labels, validation_split, subset)
  if not validation_split then return paths, labels end
  local n = #paths
  local nval = math.floor(validation_split * n)
  if nval == 0 or nval == n then
    fail(op, "validation_split=%s of %d files leaves %s no files", tostring(validation_split), n,
      nval == 0 and "validation" or "training")
  end
  local lo, hi = 1, n - nval
  if subset == "validation" then lo, hi = n - nval + 1, n end
  local sp, sl = {}, labels and {}
  for i = lo, hi do
    sp[#sp + 1] = paths[i]
    if labels then sl[#sl + 1] = labels[i] end
  end
  return sp, sl
end

-- The options every *_dataset_from_directory takes, checked: labels ("inferred", false, or a list),
-- label_mode ("int", "categorical", "binary", false), class_names, shuffle, seed, validation_split, subset.
function M.common(op, o)
  local labels = o.labels
  if labels == nil then labels = "inferred" end
  if labels ~= "inferred" and labels ~= false and type(labels) ~= "table" then
    fail(op, "labels must be \"inferred\", false (no labels) or a list of integer labels, one per file, got %s",
      tostring(labels))
  end
  if o.class_names ~= nil and labels ~= "inferred" then
    fail(op, "class_names may only be given with labels=\"inferred\"")
  end
  if o.class_names ~= nil then
    if type(o.class_names) ~= "table" or #o.class_names == 0 then fail(op, "class_names must be a list of folder names") end
  end
  local label_mode = o.label_mode
  if label_mode == nil then label_mode = "int" end
  if label_mode ~= "int" and label_mode ~= "categorical" and label_mode ~= "binary" and label_mode ~= false then
    fail(op, "label_mode must be \"int\", \"categorical\", \"binary\" or false (no labels), got %s", tostring(label_mode))
  end
  if labels == false or label_mode == false then labels, label_mode = false, false end
  local shuffle = o.shuffle
  if shuffle == nil then shuffle = true end
  if type(shuffle) ~= "boolean" then fail(op, "shuffle must be a boolean, got %s", type(shuffle)) end
  local seed = o.seed
  if seed ~= nil and (type(seed) ~= "number" or seed ~= math.floor(seed) or seed < 0 or seed >= 2 ^ 32) then
    fail(op, "seed must be an integer between 0 and 2^32 - 1, got %s", tostring(seed))
  end
  M.check_split(op, o.validation_split, o.subset, shuffle, seed)
  local batch_size = o.batch_size
  if batch_size == nil then batch_size = 32 end
  if batch_size ~= false and (type(batch_size) ~= "number" or batch_size < 1 or batch_size ~= math.floor(batch_size)) then
    fail(op, "batch_size must be a positive integer, or false for no batching, got %s", tostring(batch_size))
  end
  local follow_links = o.follow_links or false
  if type(follow_links) ~= "boolean" then fail(op, "follow_links must be a boolean") end
  if o.verbose ~= nil and type(o.verbose) ~= "boolean" then fail(op, "verbose must be a boolean") end
  return { labels = labels, label_mode = label_mode, shuffle = shuffle, seed = seed, batch_size = batch_size,
    follow_links = follow_links, verbose = o.verbose ~= false, class_names = o.class_names,
    validation_split = o.validation_split, subset = o.subset }
end

return M
