-- stdlib/tide/io/files.lua — tide.io.matching_files (tf.io.matching_files):
-- the paths that glob patterns match, found in C (kernels/io/match_files.c).
local binding = require "tide.binding"

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

return M
