-- stdlib/tide/ops/ctc.lua — tf.nn.ctc_greedy_decoder's decoding: the best path's labels per sequence
-- (blanks dropped, repeats merged) as a SparseTensor's parts, and its negative sum of logits (tide.nn's
-- function, in init.lua, makes the SparseTensor: that class is a floor up). Eager: the result's size is
-- the decoding's.
local binding = require "tide.binding"
local convert = require "tide.convert"
local dtype = require "tide.dtype"
local args = require "tide.args"
local tensor = require "tide.tensor"

local M = {}
local fmt = string.format

-- ctc_greedy_decoder(inputs, sequence_length, merge_repeated=true, blank_index=nil): inputs
-- [max_time, batch, classes] logits; blank_index defaults to classes - 1 (negative: from the end).
-- Returns the decoded SparseTensor's indices [n, 2] int64, values [n] int64 and dense_shape
-- {batch, longest}, and log_probabilities [batch, 1] (minus the sum over time of each step's largest
-- logit), as TF's.
function M.greedy_decode(inputs, sequence_length, ...)
  local op = "ctc_greedy_decoder"
  local o = args.parse(op, { "merge_repeated", "blank_index" }, ...)
  local x = convert.arg(inputs, op .. " (inputs)")
  if not dtype.is_float[x.dt] then binding.error(fmt("%s: inputs must be a float tensor, got %s", op, dtype.names[x.dt])) end
  if x.ndim ~= 3 then
    binding.error(fmt("%s: inputs must be 3-D [max_time, batch, classes], got shape %s", op, tostring(x.shape)))
  end
  if tensor.is_symbolic(x) then binding.error(op .. ": needs eager inputs (its result's size is the decoding's)") end
  local T, B, K = tonumber(x.dims[0]), tonumber(x.dims[1]), tonumber(x.dims[2])
  local lens = convert.arg(sequence_length, op .. " (sequence_length)")
  if not dtype.is_int[lens.dt] or lens.ndim ~= 1 or tonumber(lens.dims[0]) ~= B then
    binding.error(fmt("%s: sequence_length must be a 1-D integer tensor of the batch size %d, got %s %s", op, B,
      dtype.names[lens.dt], tostring(lens.shape)))
  end
  local merge = args.bool(op, "merge_repeated", o.merge_repeated, true)
  local blank = o.blank_index == nil and K - 1 or args.int(op, "blank_index", o.blank_index)
  if blank < 0 then blank = blank + K end
  if blank < 0 or blank >= K then binding.error(fmt("%s: blank_index must be in [%d, %d), got %s", op, -K, K,
    tostring(o.blank_index))) end
  local v, L = x:cast("float64"):totable(), lens:totable()
  local indices, values, scores, longest = {}, {}, {}, 0
  for b = 1, B do
    local n = L[b]
    if n < 0 or n > T then binding.error(fmt("%s: sequence_length[%d] = %d is not in [0, %d]", op, b - 1, n, T)) end
    local score, prev, k = 0, -1, 0
    for t = 1, n do
      local row, best, at = v[t][b], -math.huge, 0
      for c = 1, K do
        if row[c] > best then best, at = row[c], c - 1 end
      end
      score = score - best
      if at ~= blank and not (merge and at == prev) then
        indices[#indices + 1] = { b - 1, k }
        values[#values + 1] = at
        k = k + 1
      end
      prev = at
    end
    if k > longest then longest = k end
    scores[b] = { score }
  end
  local idx = #indices > 0 and convert.tensor(indices, "int64", op) or convert.tensor({}, "int64", op):reshape({ 0, 2 })
  return idx, convert.tensor(values, "int64", op), { B, longest }, convert.tensor(scores, dtype.names[x.dt], op)
end

return M
