-- stdlib/tide/ops/strings_unicode.lua — tide.strings' Unicode and matching functions (TF 2.21's
-- tf.strings): unicode_decode/_with_offsets, unicode_encode, unicode_split/_with_offsets,
-- unicode_transcode, unicode_script, bytes_split, regex_full_match, unsorted_segment_join.
-- Registry ops (unicode_decode, unicode_encode, unicode_script, regex_full_match,
-- unsorted_segment_join) plus views and reduce_join, so they trace and run on pipeline threads.
-- Where TF returns a RaggedTensor, a vector input gives tide.RaggedTensor (as split does).
local binding = require "tide.binding"
local dispatch = require "tide.dispatch"
local convert = require "tide.convert"
local dtype = require "tide.dtype"
local args = require "tide.args"
local shape_ops = require "tide.ops.shape"
local dynamic_shape = require "tide.ops.dynamic_shape"
local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor
local istype = ffi.istype
local fmt = string.format

local U = {}

-- Encodings as the ops' attribute m: TF's names, compared without case, "-" or "_".
local ENCODINGS = { UTF8 = 0, UTF16BE = 1, UTF32BE = 2, ISO88591 = 3, LATIN1 = 3 }
local OUTPUT_ENCODINGS = { UTF8 = true, UTF16BE = true, UTF32BE = true }
local ERRORS = { replace = 0, ignore = 1, strict = 2 }
local LATIN1 = 3

local function encoding(op, what, v, allowed)
  if type(v) ~= "string" then binding.error(fmt("%s: %s is required (e.g. \"UTF-8\")", op, what)) end
  local key = v:upper():gsub("[-_ ]", "")
  local code = ENCODINGS[key]
  if code == nil or (allowed and not allowed[key]) then
    binding.error(fmt("%s: %s must be one of %s, got %q", op, what,
      allowed and '"UTF-8", "UTF-16-BE", "UTF-32-BE"' or '"UTF-8", "UTF-16-BE", "UTF-32-BE", "ISO-8859-1"', v))
  end
  return code
end

-- The codec attributes: encoding, errors ("replace"), replacement_char (U+FFFD), control characters replaced.
local function codec(op, enc, o, replace_control)
  local a = dispatch.attrs()
  a.m = enc
  local e = o.errors or "replace"
  if ERRORS[e] == nil then
    binding.error(fmt('%s: errors must be "replace", "ignore" or "strict", got %s', op, tostring(e)))
  end
  a.n = ERRORS[e]
  local r = o.replacement_char == nil and 0xFFFD or args.int(op, "replacement_char", o.replacement_char)
  if r < 0 or r > 0x10FFFF then binding.error(fmt("%s: replacement_char must be a code point, got %d", op, r)) end
  a.ints[0], a.ints[1], a.nints = r, replace_control and 1 or 0, 2
  return a
end

-- install(M, h): adds the functions to tide.strings (M), with its helpers h
-- (strings, scalar_string: argument checks; Ragged: tide.RaggedTensor).
function U.install(M, h)
  local strings, scalar_string, Ragged = h.strings, h.scalar_string, h.Ragged

  -- A scalar or vector string input (the rank decides between a tensor and a RaggedTensor).
  local function scalar_or_vector(op, input)
    local x = strings(input, op)
    if x.ndim < 0 then
      binding.error(op .. ": the rank of the input must be known (a traced input of unknown rank: give its " ..
        "TensorSpec a shape)")
    end
    if x.ndim > 1 then
      binding.error(fmt("%s: the input must be a scalar or a vector, got rank %d (reshape it first: tide's " ..
        "RaggedTensor has one ragged dimension)", op, x.ndim))
    end
    return x
  end

  -- decode: code points, row splits and byte offsets of each string.
  local function decode(op, input, input_encoding, ...)
    local o = args.parse(op, { "errors", "replacement_char", "replace_control_characters" }, ...)
    local x = scalar_or_vector(op, input)
    local a = codec(op, encoding(op, "input_encoding", input_encoding), o, o.replace_control_characters)
    local cps, splits, offsets = dispatch.run(C.TIDE_OP_UNICODE_DECODE, a, { x }, 3)
    return x, cps, splits, offsets
  end

  -- Each code point (a vector) encoded alone: one string per code point.
  local function encode_each(op, cps, enc, o)
    return dispatch.run(C.TIDE_OP_UNICODE_ENCODE, codec(op, enc, o), { cps })
  end

  -- unicode_decode(input, input_encoding, {errors="replace", replacement_char=0xFFFD,
  -- replace_control_characters=false}): int32 code points; a scalar gives a vector, a vector a RaggedTensor.
  function M.unicode_decode(input, input_encoding, ...)
    local x, cps, splits = decode("unicode_decode", input, input_encoding, ...)
    if x.ndim == 0 then return cps end
    return Ragged.from_row_splits(cps, splits)
  end

  -- unicode_decode_with_offsets(...): the code points and each one's starting byte offset (int64).
  function M.unicode_decode_with_offsets(input, input_encoding, ...)
    local x, cps, splits, offsets = decode("unicode_decode_with_offsets", input, input_encoding, ...)
    if x.ndim == 0 then return cps, offsets end
    return Ragged.from_row_splits(cps, splits), Ragged.from_row_splits(offsets, splits)
  end

  -- unicode_split(input, input_encoding, {errors=, replacement_char=}): each character as a string
  -- (re-encoded, so an invalid sequence becomes the replacement character).
  local function split(op, input, input_encoding, ...)
    local o = args.parse(op, { "errors", "replacement_char" }, ...)
    local enc = encoding(op, "input_encoding", input_encoding)
    local x = scalar_or_vector(op, input)
    local cps, splits, offsets = dispatch.run(C.TIDE_OP_UNICODE_DECODE, codec(op, enc, o), { x }, 3)
    local chars = encode_each(op, cps, enc, o)
    if x.ndim == 0 then return chars, offsets end
    return Ragged.from_row_splits(chars, splits), Ragged.from_row_splits(offsets, splits)
  end
  function M.unicode_split(input, input_encoding, ...)
    return (split("unicode_split", input, input_encoding, ...))
  end
  function M.unicode_split_with_offsets(input, input_encoding, ...)
    return split("unicode_split_with_offsets", input, input_encoding, ...)
  end

  -- unicode_encode(input, output_encoding, {errors=, replacement_char=}): each row of code points
  -- (a RaggedTensor's rows, or a dense tensor's last axis) as one string.
  function M.unicode_encode(input, output_encoding, ...)
    local op = "unicode_encode"
    local o = args.parse(op, { "errors", "replacement_char" }, ...)
    local enc = encoding(op, "output_encoding", output_encoding, OUTPUT_ENCODINGS)
    if getmetatable(input) == Ragged then
      return dispatch.run(C.TIDE_OP_UNICODE_ENCODE, codec(op, enc, o), { input.values, input.row_splits })
    end
    if input == nil then binding.error(op .. ": input is nil; expected int32 code points") end
    local x = istype(Tensor, input) and input or convert.tensor(convert.unvariable(input), "int32", op)
    if x.ndim == 0 then binding.error(op .. ": input must have rank 1 or more (rows of code points), got a scalar") end
    local chars = dispatch.run(C.TIDE_OP_UNICODE_ENCODE, codec(op, enc, o), { x })
    return M.reduce_join(chars, { axis = -1 })
  end

  -- unicode_transcode(input, input_encoding, output_encoding, {errors=, replacement_char=,
  -- replace_control_characters=}): each string decoded and encoded again, any shape.
  function M.unicode_transcode(input, input_encoding, output_encoding, ...)
    local op = "unicode_transcode"
    local o = args.parse(op, { "errors", "replacement_char", "replace_control_characters" }, ...)
    local x = strings(input, op)
    local ienc = encoding(op, "input_encoding", input_encoding)
    local oenc = encoding(op, "output_encoding", output_encoding, OUTPUT_ENCODINGS)
    local flat = shape_ops.reshape(x, { -1 })
    local cps, splits = dispatch.run(C.TIDE_OP_UNICODE_DECODE, codec(op, ienc, o, o.replace_control_characters),
      { flat }, 3)
    local out = dispatch.run(C.TIDE_OP_UNICODE_ENCODE, codec(op, oenc, o), { cps, splits })
    if x.ndim == 1 then return out end
    local dims = {} -- x's dims when all are known, else its shape when the graph runs
    for i = 0, x.ndim - 1 do
      local d = tonumber(x.dims[i])
      if d < 0 then dims = nil; break end
      dims[#dims + 1] = d
    end
    if x.ndim < 0 then dims = nil end
    return shape_ops.reshape(out, dims or dynamic_shape.shape(x))
  end

  -- unicode_script(input): ICU's script code (int32) of each int32 code point; -1 where there is none.
  function M.unicode_script(input)
    if input == nil then binding.error("unicode_script: input is nil; expected int32 code points") end
    local x = istype(Tensor, input) and input or convert.tensor(convert.unvariable(input), "int32", "unicode_script")
    return dispatch.run(C.TIDE_OP_UNICODE_SCRIPT, dispatch.attrs(), { x })
  end

  -- bytes_split(input): each string's bytes as one-byte strings; a scalar gives a vector, a vector a RaggedTensor.
  function M.bytes_split(input)
    local op = "bytes_split"
    local x = scalar_or_vector(op, input)
    local a = codec(op, LATIN1, {})
    local bytes, splits = dispatch.run(C.TIDE_OP_UNICODE_DECODE, a, { x }, 3)
    local chars = dispatch.run(C.TIDE_OP_UNICODE_ENCODE, codec(op, LATIN1, {}), { bytes })
    if x.ndim == 0 then return chars end
    return Ragged.from_row_splits(chars, splits)
  end

  -- regex_full_match(input, pattern): whether all of each string matches the pattern (PCRE2, as regex_replace).
  function M.regex_full_match(input, pattern)
    local x = strings(input, "regex_full_match")
    return dispatch.run(C.TIDE_OP_REGEX_FULL_MATCH, dispatch.attrs(),
      { x, scalar_string(pattern, "regex_full_match", "pattern") })
  end

  -- unsorted_segment_join(inputs, segment_ids, num_segments, {separator=""}): the strings of each
  -- segment joined in order; segment_ids' shape a prefix of inputs'; an empty segment gives "".
  function M.unsorted_segment_join(inputs, segment_ids, num_segments, ...)
    local op = "unsorted_segment_join"
    local o = args.parse(op, { "separator" }, ...)
    local x = strings(inputs, op, "inputs")
    if segment_ids == nil then binding.error(op .. ": segment_ids is required") end
    local ids = istype(Tensor, segment_ids) and segment_ids or convert.tensor(convert.unvariable(segment_ids), "int32", op)
    if not dtype.is_int[ids.dt] or (ids.dtype ~= "int32" and ids.dtype ~= "int64") then
      binding.error(fmt("%s: segment_ids must be int32 or int64, got %s", op, ids.dtype))
    end
    if num_segments == nil then binding.error(op .. ": num_segments is required") end
    local a = dispatch.attrs()
    a.n = args.int(op, "num_segments", num_segments)
    if a.n < 0 then binding.error(fmt("%s: num_segments must be 0 or more, got %d", op, a.n)) end
    return dispatch.run(C.TIDE_OP_UNSORTED_SEGMENT_JOIN, a, { x, ids,
      scalar_string(o.separator or "", op, "separator") })
  end
end

return U
