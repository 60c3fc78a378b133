-- stdlib/tide/io/files.lua — tide.io.matching_files (tf.io.matching_files): the paths that glob patterns
-- match, found in C (kernels/io/match_files.c); tide.io.read_file (tf.io.read_file), a registry op.
local binding = require "tide.binding"
local dispatch = require "tide.dispatch"
local convert = require "tide.convert"

local ffi, C = binding.ffi, binding.C
local M = {}

-- The patterns as a Lua list of strings: a string, a list of strings, or a
-- string tensor (0-d or 1-d), as TF takes them.
local function pattern_list(what, pattern)
  if binding.istensor(pattern) then
    if pattern.dtype ~= "string" or pattern.ndim > 1 then
      binding.error(string.format("%s: a pattern tensor must be a 0-d or 1-d string tensor, got %s %s", what,
        pattern.dtype, tostring(pattern.shape)))
    end
    pattern = pattern:totable()
  end
  if type(pattern) == "string" then return { pattern } end
  if type(pattern) ~= "table" or #pattern == 0 then
    binding.error(string.format("%s: the pattern must be a string or a non-empty list of strings, got %s", what,
      type(pattern) == "table" and "an empty list" or type(pattern)))
  end
  for i, p in ipairs(pattern) do
    if type(p) ~= "string" then binding.error(string.format("%s: pattern[%d] must be a string, got %s", what, i, type(p))) end
  end
  return pattern
end

-- matching_files(pattern): a 1-d string tensor of the paths matching any of
-- the glob patterns (`*`, `?`, `[...]` in any component; `*` matches a
-- leading dot, as in TF), sorted bytewise, a path two patterns match listed
-- twice. Nothing matched: an empty tensor.
function M.matching_files(pattern)
  local list = pattern_list("matching_files", pattern)
  local arr = ffi.new("const char *[?]", #list)
  for i, p in ipairs(list) do arr[i - 1] = p end
  local out = binding.Tensor()
  if C.tide_match_files(#list, arr, out) ~= 0 then binding.raise() end
  return binding.finish(out) -- its finalizer: the storage and the strings go with the tensor
end

-- read_file(filename) as tf.io.read_file: the file's bytes as a 0-d string tensor. filename is a Lua
-- string or a 0-d string tensor (symbolic too: a dataset map reads its files on the pipeline's threads,
-- through the file policy). An op with an effect, so a traced constant path is read at each call.
function M.read_file(filename)
  local x = filename
  if type(x) == "string" then x = convert.tensor(x, "string", "read_file")
  elseif not binding.istensor(x) then
    binding.error(string.format("read_file: filename must be a string or a 0-d string tensor, got %s", type(x)))
  end
  return dispatch.run(C.TIDE_OP_READ_FILE, dispatch.attrs(), { x })
end

return M
