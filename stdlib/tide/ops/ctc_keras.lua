-- stdlib/tide/ops/ctc_keras.lua — Keras 3's keras.ops.ctc_loss and ctc_decode (its TF backend's meaning): batch-major
-- inputs, the blank called mask_index (0 by default), decodings as dense int32 [top_paths, batch, max_time] padded -1.
local binding = require "tide.binding"
local convert = require "tide.convert"
local dtype = require "tide.dtype"
local args = require "tide.args"
local shape_ops = require "tide.ops.shape"
local math_ops = require "tide.ops.math"
local ctc_loss = require "tide.ops.ctc_loss"
local ctc = require "tide.ops.ctc"
local ctc_decode = require "tide.ops.ctc_decode"

local M = {}
local fmt = string.format

-- ctc_loss(target, output, target_length, output_length, mask_index=0): target int [batch, max_label_length],
-- output logits [batch, max_time, classes] -> [batch]; halves computed in float32 and returned in their dtype.
function M.ctc_loss(target, output, target_length, output_length, ...)
  local o = args.parse("ctc_loss", { "mask_index" }, ...)
  local t = math_ops.cast(convert.arg(target, "ctc_loss (target)"), "int32")
  return ctc_loss.ctc_loss(t, output, target_length, output_length,
    { logits_time_major = false, blank_index = o.mask_index == nil and 0 or o.mask_index })
end

-- Sparse parts {indices, values, dense_shape} -> dense int32 [batch, steps] padded with -1 (eager).
local function to_dense(parts, batch, steps)
  local rows = {}
  for b = 1, batch do
    rows[b] = {}
    for j = 1, steps do rows[b][j] = -1 end
  end
  local idx, vals = parts[1]:totable(), parts[2]:totable()
  for i, ij in ipairs(idx) do rows[ij[1] + 1][ij[2] + 1] = vals[i] end
  return rows
end

-- ctc_decode(inputs, sequence_lengths, strategy="greedy", beam_width=100, top_paths=1, merge_repeated=true,
-- mask_index=0): inputs [batch, max_time, classes] -> (decoded int32 [top_paths, batch, max_time], -1 past each
-- decoding; scores [batch, top_paths]: the greedy decoder's negative sum of best logits, or the beam's log
-- probabilities). Eager, as tf.nn's decoders.
function M.ctc_decode(inputs, sequence_lengths, ...)
  local op = "ctc_decode"
  local o = args.parse(op, { "strategy", "beam_width", "top_paths", "merge_repeated", "mask_index" }, ...)
  local x = convert.arg(inputs, op .. " (inputs)")
  if x.ndim ~= 3 then
    binding.error(fmt("%s: inputs must be 3-D [batch, max_time, classes], got shape %s", op, tostring(x.shape)))
  end
  if not dtype.is_float[x.dt] then binding.error(fmt("%s: inputs must be a float tensor, got %s", op, dtype.names[x.dt])) end
  local B, T, K = tonumber(x.dims[0]), tonumber(x.dims[1]), tonumber(x.dims[2])
  x = shape_ops.transpose(x, { 1, 0, 2 })
  if x.dt ~= binding.C.TIDE_FLOAT64 then x = math_ops.cast(x, "float32") end
  local lens = math_ops.cast(convert.arg(sequence_lengths, op .. " (sequence_lengths)"), "int32")
  local strategy = o.strategy == nil and "greedy" or o.strategy
  local mask = o.mask_index == nil and 0 or args.int(op, "mask_index", o.mask_index)
  if mask < 0 then mask = mask + K end
  local decoded, scores
  if strategy == "greedy" then
    local idx, vals, shape, lp = ctc.greedy_decode(x, lens, { merge_repeated = o.merge_repeated, blank_index = mask })
    decoded, scores = { { idx, vals, shape } }, lp
  elseif strategy == "beam_search" then
    if mask < 0 or mask >= K then binding.error(fmt("%s: mask_index must be in [%d, %d)", op, -K, K)) end
    local parts = {}
    if mask > 0 then parts[#parts + 1] = x:slice { {}, {}, { 0, mask } } end
    if mask < K - 1 then parts[#parts + 1] = x:slice { {}, {}, { mask + 1, K } } end
    parts[#parts + 1] = x:slice { {}, {}, { mask, mask + 1 } }
    x = #parts > 1 and shape_ops.concat(parts, 2) or parts[1]
    decoded, scores = ctc_decode.beam_search_decode(x, lens, { beam_width = o.beam_width, top_paths = o.top_paths })
  else
    binding.error(fmt("%s: strategy must be \"greedy\" or \"beam_search\", got %s", op, tostring(strategy)))
  end
  local out = {}
  for p, d in ipairs(decoded) do
    local rows = to_dense(d, B, T)
    if strategy == "beam_search" then -- the labels past the blank moved down one: back up
      for _, r in ipairs(rows) do
        for j, v in ipairs(r) do if v >= mask then r[j] = v + 1 end end
      end
    end
    out[p] = rows
  end
  local dense = (B > 0 and T > 0) and convert.tensor(out, "int32", op) or
    require("tide.ops.create").zeros({ #out, B, T }, "int32")
  return dense, scores
end

return M
