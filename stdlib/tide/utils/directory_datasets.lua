-- stdlib/tide/utils/directory_datasets.lua — keras.utils.image_, text_ and audio_dataset_from_directory: a folder
-- tree to a tide.data pipeline whose map reads and decodes in C.
local binding = require "tide.binding"
local args = require "tide.args"
local convert = require "tide.convert"
local image = require "tide.image"
local io_files = require "tide.io.files"
local strings = require "tide.ops.strings"
local shape_ops = require "tide.ops.shape"
local random = require "tide.random"
local data = require "tide.data"
local index = require "tide.utils.index"
local audio = require "tide.audio"
local io_utils = require "tide.utils.io_utils"

local ffi = binding.ffi
local bit = require "bit"
local fail = index.fail
local Dataset = data.Dataset
local M = {}

M.IMAGE_FORMATS = { ".bmp", ".gif", ".jpeg", ".jpg", ".png" } -- Keras's ALLOWLIST_FORMATS
local CHANNELS = { rgb = 3, rgba = 4, grayscale = 1 }
local KERAS_INTERPOLATIONS = { bilinear = true, nearest = true, bicubic = true, area = true, lanczos3 = true,
  lanczos5 = true, gaussian = true, mitchellcubic = true }

local COMMON = { "labels", "label_mode", "class_names", "batch_size", "shuffle", "seed", "validation_split",
  "subset", "follow_links", "verbose" }

local function names_with(extra)
  local t = {}
  for _, n in ipairs(COMMON) do t[#t + 1] = n end
  for _, n in ipairs(extra) do t[#t + 1] = n end
  return { keywords = t }
end

-- A label per file as a tensor: int32 [n] ("int"), float32 [n, 1] ("binary"), float32 one-hot [n, k].
local function label_tensor(labels, mode, k)
  if mode == "int" then return convert.tensor(labels, "int32", "labels") end
  local rows = {}
  for i, l in ipairs(labels) do
    if mode == "binary" then rows[i] = { l }
    else
      local r = {}
      for c = 1, k do r[c] = (c - 1 == l) and 1 or 0 end
      rows[i] = r
    end
  end
  local t = convert.tensor(rows, "float32", "labels")
  if #labels == 0 then t = shape_ops.reshape(t, { 0, mode == "binary" and 1 or k }) end
  return t
end

-- Keras's seed when none is given (np.random.randint(1e6)): here from tide's stream, so set_seed decides it.
local function default_seed()
  return random.uniform({}, { maxval = 1000000, dtype = "int32" }):item()
end

-- The pipeline Keras builds: (path, label) slices, shuffled (a buffer of 8 batches, or 1024), the map, batched,
-- prefetched; class_names and file_paths kept on it, as Keras's attributes.
local function pipeline(c, paths, labels, class_names, load, shuffle, batch)
  local path_t = convert.tensor(paths, "string", "file paths")
  local ds
  if c.label_mode then
    local k = class_names and #class_names or 0
    ds = Dataset.from_tensor_slices { path_t, label_tensor(labels, c.label_mode, k) }
  else
    ds = Dataset.from_tensor_slices(path_t)
  end
  if shuffle then ds = ds:shuffle(c.batch_size and c.batch_size * 8 or 1024, { seed = c.seed }) end
  if c.label_mode then
    ds = ds:map(function(p, y) return load(p), y end, { parallel = data.AUTOTUNE })
  else
    ds = ds:map(load, { parallel = data.AUTOTUNE })
  end
  if c.batch_size then ds = batch and batch(ds, c.batch_size) or ds:batch(c.batch_size) end
  ds = ds:prefetch(data.AUTOTUNE)
  ds.class_names = class_names
  ds.file_paths = paths
  return ds
end

-- The shared part: options checked, files indexed and split, one pipeline per subset.
local function from_directory(op, directory, o, formats, kind, load, batch, check)
  local c = index.common(op, o)
  if c.seed == nil then c.seed = default_seed() end
  local paths, labels, class_names = index.index_directory(op, directory, c.labels, formats, c.class_names,
    c.shuffle, c.seed, c.follow_links)
  if c.verbose then
    if labels then io_utils.print_msg(string.format("Found %d files belonging to %d classes.", #paths, #class_names))
    else io_utils.print_msg(string.format("Found %d files.", #paths)) end
  end
  if c.label_mode == "binary" and #class_names ~= 2 then
    fail(op, "label_mode=\"binary\" needs exactly 2 classes, found %d (%s)", #class_names,
      table.concat(class_names, ", "))
  end
  if not labels then class_names = nil end
  if check then check(paths) end
  local allowed = table.concat(formats, " ")
  local function subset(name, shuffle)
    local p, l = index.split(op, paths, labels, c.validation_split, name)
    if c.verbose and c.validation_split then io_utils.print_msg(string.format("Using %d files for %s.", #p, name)) end
    if #p == 0 then fail(op, "no %s files found in '%s' (allowed formats: %s)", kind, directory, allowed) end
    return pipeline(c, p, l, class_names, load, shuffle, batch)
  end
  if c.subset == "both" then return { subset("training", c.shuffle), subset("validation", false) } end
  return subset(c.subset, c.shuffle)
end

-- Keras's smart_resize (crop_to_aspect_ratio): the largest centred window of the target's aspect ratio, in
-- float32 arithmetic as Keras's TF backend computes it, then resized. Eager: each image's own size decides.
local function f32(v) return tonumber(ffi.cast("float", v)) end
local function crop_to_aspect(img, h, w, method)
  local ih, iw = img.shape[1], img.shape[2]
  local ch = math.max(math.min(ih, math.floor(f32(f32(iw * h) / w))), 1)
  local cw = math.max(math.min(iw, math.floor(f32(f32(ih * w) / h))), 1)
  local h0, w0 = math.floor(f32(f32(ih - ch) / 2)), math.floor(f32(f32(iw - cw) / 2))
  return image.resize(img:slice { { h0, h0 + ch }, { w0, w0 + cw } }, { h, w }, { method = method })
end

local IMAGE_OPTS = names_with { "color_mode", "image_size", "interpolation", "crop_to_aspect_ratio",
  "pad_to_aspect_ratio", "data_format" }

-- image_dataset_from_directory(directory, {labels="inferred", label_mode="int", class_names=, color_mode="rgb",
-- batch_size=32, image_size={256, 256}, shuffle=true, seed=, validation_split=, subset=, interpolation="bilinear",
-- follow_links=false, crop_to_aspect_ratio=false, pad_to_aspect_ratio=false, data_format="channels_last",
-- verbose=true}) as Keras 3's: a Dataset of (images float32 [batch, h, w, c], labels), or a list of two for
-- subset="both". Keras's None is false here (labels, label_mode, batch_size).
function M.image_dataset_from_directory(directory, opts)
  local op = "image_dataset_from_directory"
  local o = args.parse(op, IMAGE_OPTS, opts or {})
  local color_mode = o.color_mode or "rgb"
  local channels = CHANNELS[color_mode]
  if not channels then
    fail(op, "color_mode must be \"rgb\", \"rgba\" or \"grayscale\", got %s", tostring(color_mode))
  end
  local size = o.image_size or { 256, 256 }
  if type(size) == "number" then size = { size, size } end
  if type(size) ~= "table" or #size ~= 2 then fail(op, "image_size must be {height, width}, got %s", tostring(size)) end
  local h, w = args.int(op, "image_size[1]", size[1]), args.int(op, "image_size[2]", size[2])
  if h < 1 or w < 1 then fail(op, "image_size must be positive, got {%d, %d}", h, w) end
  local method = type(o.interpolation) == "string" and o.interpolation:lower() or o.interpolation or "bilinear"
  if not KERAS_INTERPOLATIONS[method] then
    fail(op, "interpolation must be one of bilinear, nearest, bicubic, area, lanczos3, lanczos5, gaussian, " ..
      "mitchellcubic, got %s", tostring(o.interpolation))
  end
  if method ~= "bilinear" and method ~= "nearest" then
    fail(op, "interpolation \"%s\" is not supported yet (tide.image.resize has bilinear and nearest)", method)
  end
  local crop, pad = o.crop_to_aspect_ratio or false, o.pad_to_aspect_ratio or false
  if type(crop) ~= "boolean" or type(pad) ~= "boolean" then
    fail(op, "crop_to_aspect_ratio and pad_to_aspect_ratio must be booleans")
  end
  if crop and pad then fail(op, "only one of crop_to_aspect_ratio and pad_to_aspect_ratio can be true") end
  local data_format = o.data_format or "channels_last"
  if data_format ~= "channels_last" and data_format ~= "channels_first" then
    fail(op, "data_format must be \"channels_last\" or \"channels_first\", got %s", tostring(data_format))
  end
  local function load(path)
    local img = image.decode_image(io_files.read_file(path), { channels = channels, expand_animations = false })
    if crop or pad then
      if bit.band(img.flags, binding.C.TIDE_TENSOR_SYMBOLIC) ~= 0 then
        -- (the map then runs in Lua, one element at a time: the note names this reason)
        error("crop_to_aspect_ratio and pad_to_aspect_ratio size each image by its own shape", 0)
      end
      img = crop and crop_to_aspect(img, h, w, method) or image.resize_with_pad(img, h, w, { method = method })
    else
      img = image.resize(img, { h, w }, { method = method })
    end
    if data_format == "channels_first" then img = shape_ops.transpose(img, { 2, 0, 1 }) end
    return img
  end
  return from_directory(op, directory, o, M.IMAGE_FORMATS, "images", load)
end

local TEXT_OPTS = names_with { "max_length" }

-- text_dataset_from_directory(directory, {labels="inferred", label_mode="int", class_names=, batch_size=32,
-- max_length=, shuffle=true, seed=, validation_split=, subset=, follow_links=false, verbose=true}) as Keras 3's:
-- a Dataset of (texts, a string per .txt file, its first max_length bytes when given; labels).
function M.text_dataset_from_directory(directory, opts)
  local op = "text_dataset_from_directory"
  local o = args.parse(op, TEXT_OPTS, opts or {})
  local max_length = o.max_length
  if max_length ~= nil and (type(max_length) ~= "number" or max_length < 1 or max_length ~= math.floor(max_length)) then
    fail(op, "max_length must be a positive integer, got %s", tostring(max_length))
  end
  local function load(path)
    local txt = io_files.read_file(path)
    if max_length then txt = strings.substr(txt, 0, max_length) end
    return txt
  end
  return from_directory(op, directory, o, { ".txt" }, "text", load)
end

local AUDIO_OPTS = names_with { "sampling_rate", "output_sequence_length", "ragged" }

-- audio_dataset_from_directory(directory, {labels="inferred", label_mode="int", class_names=, batch_size=32,
-- sampling_rate=, output_sequence_length=, ragged=false, shuffle=true, seed=, validation_split=, subset=,
-- follow_links=false, verbose=true}) as Keras 3's: a Dataset of (audio float32 [batch, samples, channels],
-- labels) from the .wav files (16-bit PCM, tide.audio.decode_wav), each cut or zero-padded to
-- output_sequence_length, or the batch padded to its longest (padded_batch) without it. tide does not resample:
-- sampling_rate is checked against every file's rate (an error names a file that differs).
function M.audio_dataset_from_directory(directory, opts)
  local op = "audio_dataset_from_directory"
  local o = args.parse(op, AUDIO_OPTS, opts or {})
  local len = o.output_sequence_length
  if len == false then len = nil end
  if len ~= nil and (type(len) ~= "number" or len < 1 or len ~= math.floor(len)) then
    fail(op, "output_sequence_length must be a positive integer, got %s", tostring(len))
  end
  local ragged = o.ragged or false
  if type(ragged) ~= "boolean" then fail(op, "ragged must be a boolean, got %s", type(ragged)) end
  if ragged and len then fail(op, "cannot set both ragged and output_sequence_length") end
  if ragged then
    fail(op, "ragged = true is not supported: tide's datasets hold dense tensors (give output_sequence_length, " ..
      "or leave both unset to pad each batch to its longest file)")
  end
  local rate = o.sampling_rate
  if rate == false then rate = nil end
  if rate ~= nil then
    if type(rate) ~= "number" or rate ~= math.floor(rate) then
      fail(op, "sampling_rate should have an integer value, got %s", tostring(rate))
    end
    if rate <= 0 then fail(op, "sampling_rate should be higher than 0, got %s", tostring(rate)) end
  end
  local function check(paths)
    if rate == nil then return end
    for _, p in ipairs(paths) do
      local _, r = audio.decode_wav(io_files.read_file(p), { desired_samples = 0 })
      if r:item() ~= rate then
        fail(op, "'%s' is sampled at %d Hz, not sampling_rate = %d: tide does not resample (Keras does with " ..
          "tensorflow_io); resample the files or leave sampling_rate unset", p, r:item(), rate)
      end
    end
  end
  local desired = len or -1
  local function load(path)
    local a = audio.decode_wav(io_files.read_file(path), { desired_samples = desired })
    return a
  end
  local batch = not len and function(ds, n) return ds:padded_batch(n) end or nil
  return from_directory(op, directory, o, { ".wav" }, "audio", load, batch, check)
end

return M
